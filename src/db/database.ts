// Opens the database the configuration names: the one at DATABASE_URL, or else the embedded
// PostgreSQL in the data folder, started for this process (or shared with a running instance).
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { startEmbeddedPostgres } from './embedded-postgres.ts';
import { migrate, openOrm, type MikroORM } from './orm.ts';

export interface Database {
  orm: MikroORM;
  /** Connection URL (holds credentials: never log it). */
  url: string;
  close(): Promise<void>;
}

export interface OpenOptions {
  migrate: boolean;
  onQuery?: (sql: string) => void;
}

export async function openDatabase(config: Config, logger: Logger, options: OpenOptions): Promise<Database> {
  const embedded = config.databaseUrl === undefined ? await startEmbeddedPostgres(config.dataDir, logger) : undefined;
  const url = config.databaseUrl ?? embedded!.url();
  let orm: MikroORM | undefined;
  try {
    orm = await openOrm(url, {
      poolMax: config.databasePoolMax,
      statementTimeoutMs: config.statementTimeoutMs,
      logger,
      onQuery: options.onQuery,
    });
    if (options.migrate) await migrate(orm, logger);
  } catch (error) {
    await orm?.close(true);
    await embedded?.stop();
    throw error;
  }
  return {
    orm,
    url,
    async close() {
      await orm!.close();
      await embedded?.stop();
    },
  };
}
