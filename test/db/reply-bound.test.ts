// A pool's replies are bounded by one watch over its connections (connections.ts), not a timer per
// statement: a statement whose reply never comes fails as an unreachable database, its connection
// is not kept, and the pool serves again once PostgreSQL answers; a statement that is only slow,
// seen waiting by the watch more than once but answered within the bound, is not cut short; and a
// statement sent on a connection given up during an outage, once the outage has ended, fails without
// being reported as a second outage.
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { DatabaseAvailability } from '../../src/db/availability.ts';
import { boundedConnectionOptions, destroyConnection, probeDatabase, type ConnectionBounds } from '../../src/db/connections.ts';
import { databaseFailureOf } from '../../src/db/failures.ts';
import { proxiedTestDatabase } from '../support/proxied-database.ts';
import { eventually } from '../support/steady-load.ts';
import { captureLogs } from '../support/captured-logs.ts';
import { boundedPool as boundedTestPool } from '../support/bounded-pool.ts';

const database = proxiedTestDatabase();
const tight = { connectTimeoutMs: 1000, statementTimeoutMs: 400 };

/** A pool set up as the service sets up its own, on the proxied database. */
const boundedPool = (bounds: ConnectionBounds, availability?: DatabaseAvailability): pg.Pool =>
  boundedTestPool(database.url, bounds, availability);

describe("a pool's reply bound", () => {
  it('arms no timer per statement', () => {
    expect(boundedConnectionOptions(tight)).not.toHaveProperty('query_timeout');
  });

  it('fails a statement whose reply never comes, keeps no such connection, and serves again once PostgreSQL answers', async () => {
    const pool = boundedPool(tight);
    try {
      await pool.query('select 1');
      // Twice: the connections made after one was dropped are watched as well.
      for (const round of [1, 2]) {
        await database.proxy.set('blackhole');
        // Unbounded, this would wait for ever (the test's own time-out would fail it).
        const failure = await pool.query('select $1::int as n', [round]).then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(databaseFailureOf(failure)).toBe('unreachable');
        expect(pool.totalCount).toBe(0);
        await database.proxy.set('pass');
        const { rows } = await pool.query<{ n: number }>('select $1::int as n', [round]);
        expect(rows).toEqual([{ n: round }]);
      }
    } finally {
      await database.proxy.set('pass');
      await pool.end();
    }
  });

  it('lets a slow statement finish, though the watch sees it waiting more than once', async () => {
    // A reply may take up to the statement timeout (1 s here), and the bound is a second more; the
    // watch looks every 100 ms, so it sees this statement waiting several times.
    const slow = { connectTimeoutMs: 1000, statementTimeoutMs: 1000 };
    const pool = boundedPool(slow);
    try {
      const seconds = 0.8;
      const { rows } = await pool.query<{ done: boolean }>('select pg_sleep($1::float8) is not null as done', [seconds]);
      expect(rows).toEqual([{ done: true }]);
      expect(pool.totalCount).toBe(1);
    } finally {
      await pool.end();
    }
  });
  it('reports one outage when a statement is sent, after it ended, on a connection given up during it', async () => {
    const { logger, logs } = captureLogs('warn');
    const availability = new DatabaseAvailability(logger, () => probeDatabase(database.url, tight));
    const pool = boundedPool(tight, availability);
    const client = await pool.connect();
    // A checked-out connection closed under its holder reports it; MikroORM listens on the service's.
    client.on('error', () => undefined);
    try {
      await database.proxy.set('blackhole');
      // Silent: the outage begins when the watch gives this connection up.
      const lost = await client.query('select 2').then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(databaseFailureOf(lost)).toBe('unreachable');
      expect(availability.available).toBe(false);
      // Back: the availability's probe finds the database answering again.
      await database.proxy.set('pass');
      await eventually(() => availability.available, 'the outage ends', 5000);
      // Sent after that, on the connection given up during the outage (as a ROLLBACK once its request
      // was answered would be): it fails, and is no news of a second outage.
      const late = await client.query('rollback').then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(databaseFailureOf(late)).toBe('unreachable');
      expect(availability.stats).toEqual({ available: true, outages: 1 });
      expect(logs.filter((log) => String(log.msg).startsWith('database unreachable'))).toHaveLength(1);
    } finally {
      client.release();
      availability.close();
      await database.proxy.set('pass');
      await pool.end();
    }
  });

  it('reports no outage when node-postgres refuses a statement on a connection already lost, which asks the database nothing', async () => {
    const { logger } = captureLogs('warn');
    const availability = new DatabaseAvailability(logger, () => probeDatabase(database.url, tight));
    const pool = boundedPool(tight, availability);
    const client = await pool.connect();
    client.on('error', () => undefined);
    try {
      // Lost while idle, in the holder's hands: no statement of ours saw it go.
      await client.query('select 1');
      const closed = new Promise((resolve) => client.once('end', resolve));
      destroyConnection(client);
      await closed;
      const refused = await client.query('select 1').then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(String(refused)).toMatch(/not queryable/);
      expect(availability.stats).toEqual({ available: true, outages: 0 });
    } finally {
      client.release(true);
      availability.close();
      await pool.end();
    }
  });
});
