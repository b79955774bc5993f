// What every entry point does first: read the configuration, open the database and report a failure
// to start as one sentence on stderr with a non-zero exit, never as a bare stack trace.
import { ConfigError, loadConfig, type Config } from './config.ts';
import { openDatabase, type Database, type OpenOptions } from './db/database.ts';
import { StartupError } from './errors.ts';
import { createLogger, logDestination, type LogStream, type Logger } from './log.ts';

export interface Started {
  config: Config;
  logger: Logger;
  db: Database;
}

export async function start(
  options: OpenOptions & {
    logLevel?: Config['logLevel'];
    /** Where the log goes (stdout by default). */
    logTo?: LogStream;
    /** Runs once the configuration is read, before any database connection exists. */
    beforeDatabase?: (config: Config, logger: Logger) => Promise<void>;
  },
): Promise<Started> {
  const config = loadConfig();
  const to = options.logTo ?? 'stdout';
  const format = config.logFormat ?? (!config.production && process[to].isTTY ? 'pretty' : 'json');
  const logger = createLogger(options.logLevel ?? config.logLevel, await logDestination(format, to));
  await options.beforeDatabase?.(config, logger);
  const db = await openDatabase(config, logger, options);
  return { config, logger, db };
}

/** Prints why the process cannot go on and exits; unexpected errors also show their stack. */
export function exitWithStartupFailure(error: unknown): never {
  if (error instanceof ConfigError) {
    process.stderr.write(`portico: configuration error: ${error.message}\n`);
  } else if (error instanceof StartupError) {
    process.stderr.write(`portico: cannot start: ${error.message}\n`);
  } else {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`portico: cannot start: unexpected failure (${message}); details follow.\n`);
    if (error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
  }
  process.exit(1);
}
