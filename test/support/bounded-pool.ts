// A node-postgres pool set up as the service sets up its own (db/orm.ts): every wait bounded, the
// replies watched, a dead connection given back at once.
import pg from 'pg';
import type { DatabaseAvailability } from '../../src/db/availability.ts';
import { boundedConnectionOptions, guardPool, watchReplies, type ConnectionBounds } from '../../src/db/connections.ts';

export function boundedPool(url: string, bounds: ConnectionBounds, availability?: DatabaseAvailability): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 2, ...boundedConnectionOptions(bounds) });
  guardPool(pool, availability);
  watchReplies(pool, bounds);
  // A connection closed under its client is reported on the pool; the service's pool has this
  // listener from MikroORM.
  pool.on('error', () => undefined);
  return pool;
}
