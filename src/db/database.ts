// Opens the database the configuration names: the one at DATABASE_URL, or else the embedded
// PostgreSQL in the data folder, started for this process (or shared with a running instance).
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { DatabaseAvailability } from './availability.ts';
import { probeDatabase, type ConnectionBounds } from './connections.ts';
import { startEmbeddedPostgres } from './embedded-postgres.ts';
import { migrate, openOrm, type MikroORM } from './orm.ts';

export interface Database {
  orm: MikroORM;
  /** Connection URL (holds credentials: never log it). */
  url: string;
  bounds: ConnectionBounds;
  availability: DatabaseAvailability;
  close(): Promise<void>;
}

export interface OpenOptions {
  migrate: boolean;
  /** The service (not a command): the only one allowed on an embedded data folder at a time. */
  service?: boolean;
  onQuery?: (sql: string) => void;
}

export function databaseBounds(config: Config): ConnectionBounds {
  return { connectTimeoutMs: config.databaseConnectTimeoutMs, statementTimeoutMs: config.statementTimeoutMs };
}

export async function openDatabase(config: Config, logger: Logger, options: OpenOptions): Promise<Database> {
  const embedded =
    config.databaseUrl === undefined
      ? await startEmbeddedPostgres(config.dataDir, logger, {}, { service: options.service ?? false })
      : undefined;
  const url = config.databaseUrl ?? embedded!.url();
  const bounds = databaseBounds(config);
  const availability = new DatabaseAvailability(logger, () => probeDatabase(url, bounds), undefined, { watching: false });
  let orm: MikroORM | undefined;
  try {
    orm = await openOrm(url, { poolMax: config.databasePoolMax, bounds, availability, logger, onQuery: options.onQuery });
    if (options.migrate) await migrate(orm, logger, url, bounds);
    availability.watch();
  } catch (error) {
    availability.close();
    await orm?.close(true);
    await embedded?.stop();
    throw error;
  }
  return {
    orm,
    url,
    bounds,
    availability,
    async close() {
      availability.close();
      await orm.close();
      await embedded?.stop();
    },
  };
}
