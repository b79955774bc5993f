import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sql } from '../../src/db/sql.ts';
import { claimDeliveries, settleDeliveries, type Settled } from '../../src/webhooks/deliveries.ts';
import { createTestDatabase, testPool } from '../support/database.ts';

const QUEUED = 2_000;
// A claim of this many from the head of a full backlog fits the room a page keeps.
const CLAIMED = 20;

let pool: pg.Pool;
let drop: () => Promise<void>;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Cond'?: string;
  'Parent Relationship'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  Plans?: PlanNode[];
}

/** Every node of a plan that reads a table, however deep. */
function scansOf(node: PlanNode): PlanNode[] {
  return [...(node['Node Type'].endsWith('Scan') && node['Relation Name'] ? [node] : []), ...(node.Plans ?? []).flatMap(scansOf)];
}

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
      const claimed = await claimDeliveries(new Sql(pool), CLAIMED, 60_000, {
        perEndpoint: CLAIMED,
        busy: new Map(),
        perOwner: CLAIMED,
        busyOwners: new Map(),
      });
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
        const places = { perEndpoint, busy: new Map(busy > 0 ? [['whe_claims', busy]] : []), perOwner: CLAIMED, busyOwners: new Map() };
        expect(await claimDeliveries(new Sql(pool), CLAIMED, 60_000, places)).toHaveLength(expected);
      } finally {
        await pool.query('rollback');
      }
    }
  });

  it("leaves no owner more attempts under way than its places, over all its endpoints, counting the worker's own", async () => {
    // A second endpoint of the same key, with deliveries of its own due.
    await pool.query(
      `insert into webhook_endpoints (id, owner_key_id, url, secret, created_at, updated_at)
       values ('whe_claims_2', 'key_claims', 'https://hooks.example.com/second', 'sealed', now(), now())`,
    );
    await pool.query(
      `insert into webhook_deliveries (event_id, endpoint_id) select 'evt_' || n, 'whe_claims_2' from generate_series(1, 10) n`,
    );
    try {
      for (const [perOwner, busy, expected] of [
        [8, 0, 8],
        [8, 3, 5],
        [8, 8, 0],
        // Without an owner's bound, each endpoint's own: 5 each.
        [100, 0, 10],
      ] as const) {
        await pool.query('begin');
        try {
          const places = { perEndpoint: 5, busy: new Map(), perOwner, busyOwners: new Map(busy > 0 ? [['key_claims', busy]] : []) };
          expect(await claimDeliveries(new Sql(pool), CLAIMED, 60_000, places), `${perOwner}, ${busy}`).toHaveLength(expected);
        } finally {
          await pool.query('rollback');
        }
      }
    } finally {
      await pool.query(`delete from webhook_deliveries where endpoint_id = 'whe_claims_2'`);
      await pool.query(`delete from webhook_endpoints where id = 'whe_claims_2'`);
    }
  });

  it("reads each endpoint's due deliveries by that endpoint, never along another endpoint's backlog", async () => {
    // Endpoints with nothing due beside the one with the backlog, and statistics that say every
    // delivery is that one's: the estimate under which claims once read the backlog through for
    // each of them (an index on the due time alone, filtered by endpoint: 14 s at 2,000 endpoints).
    await pool.query(
      `insert into webhook_endpoints (id, owner_key_id, url, secret, created_at, updated_at)
       select 'whe_idle_' || n, 'key_claims', 'https://hooks.example.com/' || n, 'sealed', now(), now() from generate_series(1, 50) n`,
    );
    await pool.query('analyze webhook_deliveries');
    let claim = '';
    const places = { perEndpoint: CLAIMED, busy: new Map<string, number>(), perOwner: CLAIMED, busyOwners: new Map<string, number>() };
    const values = [CLAIMED, 60_000, CLAIMED, [], [], CLAIMED, [], []];
    await pool.query('begin');
    try {
      // As the service's connections plan (db/generic-plans.ts).
      await pool.query('set local enable_seqscan = off');
      await claimDeliveries(new Sql(pool, (text) => (claim = text)), CLAIMED, 60_000, places);
      const { rows } = await pool.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`explain (analyze, format json) ${claim}`, values);
      const reads = scansOf(rows[0]!['QUERY PLAN'][0]!.Plan).filter((node) => node['Relation Name'] === 'webhook_deliveries');
      // Every read of the deliveries goes by endpoint, and none reads through the backlog.
      expect(reads.filter((node) => !String(node['Index Cond']).includes('endpoint_id'))).toEqual([]);
      expect(Math.max(...reads.map((node) => node['Actual Rows'] * node['Actual Loops']))).toBeLessThanOrEqual(CLAIMED);
    } finally {
      await pool.query('rollback');
      await pool.query(`delete from webhook_endpoints where id like 'whe_idle_%'`);
    }
  });
});

describe('settling attempts', () => {
  const settled = (number: number, state: Settled['state'], statusCode: number): Settled => ({
    eventId: 'evt_settled',
    endpointId: 'whe_settled',
    number,
    startedAt: new Date(),
    durationMs: 5,
    statusCode,
    error: null,
    responseBody: null,
    signature: 'sha256=0',
    state,
    nextAttemptAt: state === 'failed' ? new Date(Date.now() + 60_000) : null,
  });
  const places = { perEndpoint: CLAIMED, busy: new Map<string, number>(), perOwner: CLAIMED, busyOwners: new Map<string, number>() };
  const delivery = async () =>
    (
      await pool.query<{ state: string; locked: boolean; attempts_total: number }>(
        `select state, locked_until is not null as locked, attempts_total from webhook_deliveries where event_id = 'evt_settled'`,
      )
    ).rows[0];

  /**
   * A claim whose answer never came back (a network that held its bytes past the worker's reply
   * bound, then delivered them) still runs: it takes the delivery again, once the lease of the
   * attempt under way has lapsed, with no attempt behind it. Runs `work` in a transaction, on a
   * delivery of its own whose first attempt is under way and was claimed again so.
   */
  async function withGhostClaim(work: () => Promise<void>): Promise<void> {
    await pool.query('begin');
    try {
      // Only this delivery is due: the other tests' endpoints take no part.
      await pool.query('update webhook_endpoints set enabled = false');
      await pool.query(
        `insert into webhook_endpoints (id, owner_key_id, url, secret, created_at, updated_at)
         values ('whe_settled', 'key_settled', 'https://hooks.example.com/settled', 'sealed', now(), now())`,
      );
      await pool.query(`insert into events (id, type, created_at, data) values ('evt_settled', 'order.created', now(), '{"object":{}}')`);
      await pool.query(
        `insert into webhook_deliveries (event_id, endpoint_id, next_attempt_at) values ('evt_settled', 'whe_settled', now() - interval '1 second')`,
      );
      const [first] = await claimDeliveries(new Sql(pool), 1, 60_000, places);
      expect(first?.number).toBe(1);
      await pool.query(`update webhook_deliveries set locked_until = now() - interval '1 second' where event_id = 'evt_settled'`);
      const [ghost] = await claimDeliveries(new Sql(pool), 1, 60_000, places);
      expect(ghost?.number).toBe(2);
      await work();
    } finally {
      await pool.query('rollback');
    }
  }

  it('a success recorded after another claim took the delivery still ends it: it is not sent again', async () => {
    await withGhostClaim(async () => {
      await settleDeliveries(new Sql(pool), [settled(1, 'succeeded', 200)]);
      expect(await delivery()).toEqual({ state: 'succeeded', locked: false, attempts_total: 2 });
    });
  });

  it('a failure recorded after another claim took the delivery leaves it to that claim; a later failure never undoes a success', async () => {
    await withGhostClaim(async () => {
      await settleDeliveries(new Sql(pool), [settled(1, 'failed', 500)]);
      expect(await delivery()).toEqual({ state: 'pending', locked: true, attempts_total: 2 });
      await settleDeliveries(new Sql(pool), [settled(1, 'succeeded', 200)]);
      await settleDeliveries(new Sql(pool), [settled(2, 'failed', 500)]);
      expect(await delivery()).toEqual({ state: 'succeeded', locked: false, attempts_total: 2 });
    });
  });
});
