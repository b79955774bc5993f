// One process at a time applies migrations to a database. Instances of a deployment start together
// (replicas, the API beside its worker, the first start of an upgrade); unguarded, each ran the
// migrator and all but one failed to start, on a table another had just created or a deadlock. The
// first to take the lock applies what is pending; the others wait for it, then find nothing to do.
import pg from 'pg';
import { StartupError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { boundedClientOptions, destroyConnection, type ConnectionBounds } from './connections.ts';

/** The advisory lock's class (db/user-locks.ts has class 1) and key. */
const MIGRATIONS = 2;
const KEY = 0;
/** How often a waiting process tries again, and for how long in all: a migration that long is stuck. */
const RETRY_MS = 200;
const WAIT_MS = 10 * 60_000;

/**
 * Runs `apply` holding the database's migration lock, on a connection of its own kept for the lock
 * alone (a session lock: the migrator's statements run on the pool). A holder that dies releases it
 * with its session.
 */
export async function withMigrationLock<T>(
  url: string,
  bounds: ConnectionBounds | undefined,
  logger: Logger,
  apply: () => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: url, ...(bounds ? boundedClientOptions(bounds) : { keepAlive: true }) });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const deadline = Date.now() + WAIT_MS;
    for (let waited = false; ; waited = true) {
      const { rows } = await client.query<{ locked: boolean }>('select pg_try_advisory_lock($1, $2) as locked', [MIGRATIONS, KEY]);
      if (rows[0]?.locked) break;
      if (!waited) logger.info('another process is applying migrations; waiting for it to finish');
      if (Date.now() > deadline) {
        throw new StartupError(
          `Another process has been applying migrations to this database for ${WAIT_MS / 60_000} minutes; look at what it is doing (pg_stat_activity), then start again.`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
    const result = await apply();
    await client.query('select pg_advisory_unlock($1, $2)', [MIGRATIONS, KEY]);
    await client.end();
    return result;
  } catch (error) {
    // The session ends with the connection, and the lock with it.
    destroyConnection(client);
    throw error;
  }
}
