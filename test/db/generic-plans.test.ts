// The service's connections plan a prepared statement once, even one whose LIMIT is a parameter,
// which PostgreSQL would otherwise plan again on every run (generic-plans.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPrepared } from '../../src/db/prepared.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

// Every warning the process emits from here on: the server below opens its first connections.
const warnings: Error[] = [];
process.on('warning', (warning) => warnings.push(warning));

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe('pooled connections', () => {
  it('plan a page statement once for every run, not once per run', async () => {
    const em = server.orm.em.fork();
    // A transaction holds one pooled connection for every statement below.
    await em.begin();
    try {
      await runPrepared(em, 'prepare test_page (int) as select id from users order by created_at, id limit $1', []);
      for (let run = 0; run < 8; run++) await runPrepared(em, 'execute test_page (20)', []);
      const [plans] = await runPrepared<{ generic: number; custom: number }>(
        em,
        "select generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements where name = 'test_page'",
        [],
      );
      expect(plans).toEqual({ generic: 8, custom: 0 });
    } finally {
      await em.rollback();
    }
  });
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
