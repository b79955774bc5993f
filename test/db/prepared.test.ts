// Marked statements run with bound values and are prepared once per connection, inside the
// transaction of the entity manager that runs them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepared, runPrepared } from '../../src/db/prepared.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const ECHO = prepared('test_echo', 'select $1::text as value, pg_backend_pid() as pid, txid_current() as tx');

describe('runPrepared', () => {
  it("binds values as values, runs in the manager's transaction, and prepares the statement on its connection", async () => {
    const em = server.orm.em.fork();
    await em.begin();
    try {
      const tricky = "it's -- not SQL; $2";
      const [first] = await runPrepared<{ value: string; pid: number; tx: string }>(em, ECHO, [tricky]);
      const [second] = await runPrepared<{ value: string; pid: number; tx: string }>(em, ECHO, ['again']);
      expect(first!.value).toBe(tricky);
      expect([second!.value, second!.pid, second!.tx]).toEqual(['again', first!.pid, first!.tx]);
      const names = await runPrepared<{ name: string }>(em, 'select name from pg_prepared_statements', []);
      expect(names.map((row) => row.name)).toContain('test_echo');
    } finally {
      await em.rollback();
    }
  });
});
