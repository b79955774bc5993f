// The service's connections plan a prepared statement once, even one whose LIMIT is a parameter,
// which PostgreSQL would otherwise plan again on every run; and never by a sequential scan, which a
// plan made while a table was small would keep doing as the table grows (generic-plans.ts).
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planStatementsOnce } from '../../src/db/generic-plans.ts';
import { runPrepared } from '../../src/db/prepared.ts';
import { eventually } from '../support/steady-load.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// Every warning the process emits from here on: the server below opens its first connections.
const warnings: Error[] = [];
process.on('warning', (warning) => warnings.push(warning));

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

type Fork = ReturnType<TestServer['orm']['em']['fork']>;

/** Runs `statements` in a transaction, which holds one pooled connection for all of them, rolled back after. */
async function onOnePooledConnection(statements: (em: Fork) => Promise<void>): Promise<void> {
  const em = server.orm.em.fork();
  await em.begin();
  try {
    await statements(em);
  } finally {
    await em.rollback();
  }
}

describe('pooled connections', () => {
  it('plan a page statement once for every run, not once per run', () =>
    onOnePooledConnection(async (em) => {
      await runPrepared(em, 'prepare test_page (int) as select id from users order by created_at, id limit $1', []);
      for (let run = 0; run < 8; run++) await runPrepared(em, 'execute test_page (20)', []);
      const [plans] = await runPrepared<{ generic: number; custom: number }>(
        em,
        "select generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements where name = 'test_page'",
        [],
      );
      expect(plans).toEqual({ generic: 8, custom: 0 });
    }));
});

describe('a new pooled connection', () => {
  it('is handed out once its setting is answered: no statement queues behind it (node-postgres warns of that, and 9.0 drops it)', async () => {
    const pool = await server.orm.driver.getConnection().getNativeClient();
    // Fresh connections, each asked for by a caller the moment it opens.
    const clients = await Promise.all(Array.from({ length: pool.options.max ?? 10 }, () => pool.connect()));
    for (const client of clients) client.release(true);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => pool.query<{ mode: string }>("select current_setting('plan_cache_mode') as mode")),
    );
    expect(answers.map((answer) => answer.rows[0]?.mode)).toEqual(Array(20).fill('force_generic_plan'));
    // Node emits a warning on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.map((warning) => warning.message).filter((message) => message.includes('already executing a query'))).toEqual([]);
  });
});

describe("a pooled connection's plans", () => {
  it('keep reading by index a table that was empty when they were made (the check of a delivery against its event)', async () => {
    const admin = new pg.Client({ connectionString: server.databaseUrl });
    const writer = new pg.Client({ connectionString: server.databaseUrl });
    await admin.connect();
    await writer.connect();
    try {
      await planStatementsOnce(writer);
      // A table PostgreSQL has seen empty, and no analysis since that would make it plan again.
      await admin.query('alter table events set (autovacuum_enabled = false)');
      await admin.query('truncate events cascade');
      await admin.query('analyze events');
      await admin.query(
        `insert into webhook_endpoints (id, owner_key_id, url, secret, created_at, updated_at)
         values ('wep_plans', 'key_plans', 'https://example.com/hook', 'sealed', now(), now())`,
      );
      // What the outbox does: an event and its delivery, whose foreign key PostgreSQL checks against events.
      let written = 0;
      const write = () =>
        writer.query(
          `with event as (insert into events (id, type, created_at, data) values ($1, 'order.created', now(), '{}'::jsonb) returning id)
           insert into webhook_deliveries (event_id, endpoint_id) select id, 'wep_plans' from event`,
          [`evt_plans_${++written}`],
        );
      // The connection makes its plan of that check while the table is (nearly) empty.
      for (let i = 0; i < 8; i++) await write();
      await admin.query(
        `insert into events (id, type, created_at, data) select 'evt_bulk_' || i, 'order.created', now(), '{}'::jsonb from generate_series(1, 20000) i`,
      );
      const scans = async () => {
        await admin.query('select pg_stat_clear_snapshot()');
        const { rows } = await admin.query<{ seq: string; idx: string }>(
          "select seq_scan as seq, idx_scan as idx from pg_stat_user_tables where relname = 'events'",
        );
        return { seq: Number(rows[0]!.seq), idx: Number(rows[0]!.idx) };
      };
      const before = await scans();
      for (let i = 0; i < 10; i++) await write();
      // The writer's statistics reach the view once it reports them: now, rather than when it has idled
      // (PostgreSQL 15 and later; before, they reach it within a second anyway).
      const { rows: version } = await writer.query<{ n: number }>("select current_setting('server_version_num')::int as n");
      if (version[0]!.n >= 150_000) await writer.query('select pg_stat_force_next_flush()');
      let after = before;
      await eventually(
        async () => {
          after = await scans();
          return after.seq + after.idx - before.seq - before.idx >= 10;
        },
        "the writer's scans of events in the statistics",
        10_000,
      );
      expect(after.seq - before.seq).toBe(0);
    } finally {
      await admin.query('alter table events reset (autovacuum_enabled)');
      await admin.query(`delete from webhook_endpoints where id = 'wep_plans'`);
      await writer.end();
      await admin.end();
    }
  });
});

describe("a pooled connection's statements", () => {
  it('are never compiled by the JIT, which a sequential scan left in a plan would trigger on every run before PostgreSQL 18', () =>
    onOnePooledConnection(async (em) => {
      // The JIT's thresholds at their lowest, so that any plan would be compiled where the server has a JIT.
      await runPrepared(em, 'set local jit_above_cost = 0; set local jit_inline_above_cost = 0; set local jit_optimize_above_cost = 0', []);
      const [setting] = await runPrepared<{ jit: string }>(em, "select current_setting('jit') as jit", []);
      expect(setting?.jit).toBe('off');
      // What every write runs: its event matched against webhook_endpoints, a table read whole.
      const [explained] = await runPrepared<{ 'QUERY PLAN': { Plan: unknown; JIT?: unknown }[] }>(
        em,
        `explain (analyze, format json) select count(*) from webhook_endpoints endpoint
         where endpoint.enabled and (endpoint.event_types is null or 'order.created' = any(endpoint.event_types))`,
        [],
      );
      expect(explained?.['QUERY PLAN'][0]?.Plan).toBeDefined();
      expect(explained?.['QUERY PLAN'][0]?.JIT).toBeUndefined();
    }));
});
