// The overall request deadline: work that outlasts it (here, statements waiting on a lock, with a
// statement timeout far away) is answered 503 on both faces when the deadline passes, and the
// service goes on serving once the obstacle is gone.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { eventually } from '../support/steady-load.ts';

let server: TestServer;
let userId: string;

beforeAll(async () => {
  // The statement timeout is far beyond the test's own timeout: only the deadline can answer.
  server = await startTestServer({ requestTimeoutMs: 300, statementTimeoutMs: 120_000 });
  // A fresh server's first write (its first connections, its documents compiled) can outlast the
  // 300 ms deadline on a loaded machine; the user is made by the first attempt answered in time,
  // each with an email of its own, since an attempt answered 503 may still have committed.
  let attempt = 0;
  await eventually(
    async () => {
      attempt += 1;
      const created = await server.gql<{ createUser: { id: string } }>(
        `mutation { createUser(input: { name: "Ada", email: "ada-${attempt}@example.com" }) { id } }`,
      );
      userId = created.body.data?.createUser.id ?? '';
      return userId !== '';
    },
    'a user created within the deadline',
    30_000,
  );
});
afterAll(() => server.close());

/** Holds an exclusive lock on the users table until released, so every read of it waits. */
async function lockUsers(): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: server.databaseUrl });
  await client.connect();
  await client.query('begin');
  await client.query('lock table users in access exclusive mode');
  return {
    async release() {
      await client.query('rollback');
      await client.end();
    },
  };
}

describe('request deadline', () => {
  it('answers 503 with Problem Details on REST and TIMEOUT on GraphQL, then serves again', async () => {
    const lock = await lockUsers();
    try {
      const rest = await server.fetch(`/users/${userId}`);
      expect(rest.status).toBe(503);
      expect(rest.headers.get('content-type')).toBe('application/problem+json');
      expect(await rest.json()).toEqual({
        type: 'https://portico.dev/problems/timeout',
        title: 'Timed out',
        status: 503,
        detail: 'The request took longer than the 300 ms this service allows and was stopped; try again, or ask for less at once.',
        instance: `/users/${userId}`,
      });

      const graphql = await server.gql(`{ user(id: "${userId}") { id name } }`);
      expect(graphql.status).toBe(503);
      expect(graphql.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
      expect(graphql.body.errors![0]!.extensions).toMatchObject({ code: 'TIMEOUT', type: 'https://portico.dev/problems/timeout' });

      // More waiting requests than the pool has connections: each still gets its answer on time.
      const many = await Promise.all(Array.from({ length: 8 }, () => server.fetch(`/users/${userId}`).then((r) => r.status)));
      expect(many).toEqual(Array(8).fill(503));
      expect(server.logs.filter((line) => line.msg === 'request passed its deadline; answered 503').length).toBeGreaterThanOrEqual(10);
    } finally {
      await lock.release();
    }

    // The statements that waited finish, their connections return to the pool, and requests succeed.
    const deadline = Date.now() + 10_000;
    let status = 0;
    while (status !== 200 && Date.now() < deadline) {
      status = (await server.fetch(`/users/${userId}`)).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe(200);
    // Ten at once, all answered; a batch is tried again should one of them meet this test's short
    // deadline on a busy machine (a stall, not the pool: the first batch that passes shows it healed).
    let again: number[] = [];
    await eventually(
      async () => {
        again = await Promise.all(Array.from({ length: 10 }, () => server.fetch(`/users/${userId}`).then((r) => r.status)));
        return again.every((s) => s === 200);
      },
      'ten requests at once all answered',
      10_000,
    );
    expect(again).toEqual(Array(10).fill(200));
    // Cut-off work is the deadline's doing, not a failure: nothing was logged as an error.
    expect(server.logs.filter((line) => (line.level as number) >= 50)).toEqual([]);
  });
});
