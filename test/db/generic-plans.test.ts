// The service's connections plan a prepared statement once, even one whose LIMIT is a parameter,
// which PostgreSQL would otherwise plan again on every run (generic-plans.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPrepared } from '../../src/db/prepared.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

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
