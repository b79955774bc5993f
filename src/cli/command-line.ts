// The arguments of a command-line tool, parsed; a mistake in them prints what is wrong and the tool's
// usage, and exits with status 2.
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { DomainError } from '../errors.ts';
import { messageOf } from '../guards.ts';
import { exitWithStartupFailure, start, type Started } from '../startup.ts';

/** Prints `message` and the usage, and exits with status 2. */
export function usageError(usage: string, message: string): never {
  process.stderr.write(`${message}\n${usage}\n`);
  process.exit(2);
}

export function commandLine<const Options extends ParseArgsOptionsConfig>(usage: string, options: Options) {
  try {
    return parseArgs<{ allowPositionals: true; options: Options }>({ allowPositionals: true, options });
  } catch (error) {
    return usageError(usage, messageOf(error));
  }
}

/**
 * Opens the database (migrating it first), runs `work`, and closes it. A refusal (an unknown id,
 * invalid input) prints its message and exits with status 1; a failure to start, as one sentence.
 */
export async function withDatabase(work: (started: Started) => Promise<void>): Promise<void> {
  try {
    const started = await start({ migrate: true, logLevel: 'warn' });
    try {
      await work(started);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      process.stderr.write(`${error.message}\n`);
      process.exitCode = 1;
    } finally {
      await started.db.close();
    }
  } catch (error) {
    exitWithStartupFailure(error);
  }
}
