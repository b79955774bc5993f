import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sql } from '../../src/db/sql.ts';
import { claimDeliveries } from '../../src/webhooks/deliveries.ts';
import { createTestDatabase, testPool } from '../support/database.ts';

const QUEUED = 2_000;
// A claim of this many from the head of a full backlog fits the room a page keeps.
const CLAIMED = 20;

let pool: pg.Pool;
let drop: () => Promise<void>;

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  // One connection: the claim and the statistics of its transaction are read on the same backend.
  pool = testPool({ connectionString: database.url, max: 1 });
  await pool.query(
    `insert into webhook_endpoints (id, owner_key_id, url, secret, created_at, updated_at)
     values ('whe_claims', 'key_claims', 'https://hooks.example.com/in', 'sealed', now(), now())`,
  );
  // A backlog written in one statement fills its pages as far as the table lets it.
  await pool.query(
    `with event as (
       insert into events (id, type, created_at, data)
       select 'evt_' || n, 'order.created', now(), '{"object":{}}'::jsonb from generate_series(1, $1) as n
       returning id)
     insert into webhook_deliveries (event_id, endpoint_id) select id, 'whe_claims' from event`,
    [QUEUED],
  );
});

afterAll(async () => {
  await pool.end();
  await drop();
});

describe('claiming deliveries', () => {
  it('rewrites each claimed delivery on its own page, touching none of the indexes (HOT), even in a full backlog', async () => {
    await pool.query('begin');
    try {
      const claimed = await claimDeliveries(new Sql(pool), CLAIMED, 60_000, { perEndpoint: CLAIMED, busy: new Map() });
      expect(claimed).toHaveLength(CLAIMED);
      const {
        rows: [counts],
      } = await pool.query<{ updated: number; hot: number }>(
        `select pg_stat_get_xact_tuples_updated('webhook_deliveries'::regclass)::int as updated,
                pg_stat_get_xact_tuples_hot_updated('webhook_deliveries'::regclass)::int as hot`,
      );
      expect(counts).toEqual({ updated: CLAIMED, hot: CLAIMED });
    } finally {
      await pool.query('rollback');
    }
  });

  it("leaves no endpoint more attempts under way than its places, counting the worker's own", async () => {
    for (const [perEndpoint, busy, expected] of [
      [5, 0, 5],
      [5, 3, 2],
      [5, 5, 0],
    ] as const) {
      await pool.query('begin');
      try {
        const places = { perEndpoint, busy: new Map(busy > 0 ? [['whe_claims', busy]] : []) };
        expect(await claimDeliveries(new Sql(pool), CLAIMED, 60_000, places)).toHaveLength(expected);
      } finally {
        await pool.query('rollback');
      }
    }
  });
});
