// A new pooled connection is handed out only once its setting is answered (generic-plans.ts). That
// answer is a wait on PostgreSQL like any other: when the peer goes silent right after logging in, the
// caller gets an error within the connection's reply bound, the silent connection is not kept, and
// the next caller, once PostgreSQL answers again, gets a connection with the setting in force.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { boundedConnectionOptions, watchReplies } from '../../src/db/connections.ts';
import { databaseFailureOf } from '../../src/db/failures.ts';
import { planStatementsOnce } from '../../src/db/generic-plans.ts';
import { proxiedTestDatabase } from '../support/proxied-database.ts';

const database = proxiedTestDatabase();

describe('setting up a new connection', () => {
  it('gives up within the reply bound when PostgreSQL goes silent after the log-in, keeps no such connection, and heals', async () => {
    let silenceNext = true;
    const bounds = { connectTimeoutMs: 1000, statementTimeoutMs: 300 };
    const pool = new pg.Pool({
      connectionString: database.url,
      max: 2,
      ...boundedConnectionOptions(bounds),
      // The service's own hook, with the peer falling silent between the log-in and the setting.
      // eslint-disable-next-line @typescript-eslint/no-misused-promises -- pg-pool awaits the hook's promise (pg-pool 3.14); its types still say void
      onConnect: async (client) => {
        if (silenceNext) {
          silenceNext = false;
          await database.proxy.set('blackhole');
        }
        await planStatementsOnce(client);
      },
    });
    watchReplies(pool, bounds);
    // A connection closed under its client is reported on the pool; the service's pool has this
    // listener from MikroORM.
    pool.on('error', () => undefined);
    try {
      // Unbounded, this would wait for ever (the test's own time-out would fail it).
      const failure = await pool.query('select 1').then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(databaseFailureOf(failure)).toBe('unreachable');
      expect(pool.totalCount).toBe(0);
      await database.proxy.set('pass');
      const { rows } = await pool.query<{ mode: string }>("select current_setting('plan_cache_mode') as mode");
      expect(rows).toEqual([{ mode: 'force_generic_plan' }]);
      expect(pool.totalCount).toBe(1);
    } finally {
      await pool.end();
    }
  });
});

describe('a message PostgreSQL cannot read', () => {
  it('is refused as a protocol violation, which is a bug to report, not the database gone', async () => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      // A NUL inside a statement's text ends it early as PostgreSQL reads the message.
      const failure = await client.query("select 'a\u0000b'").then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toMatchObject({ code: '08P01' });
      expect(databaseFailureOf(failure)).toBeUndefined();
    } finally {
      await client.end().catch(() => undefined);
    }
  });
});
