// PostgreSQL gone silent (every packet dropped) with a long connect bound, as a service configured for
// a slow network would have it: once the outage is known, a request that needs the database is
// answered 503 at once, not after waiting out the connect bound for a connection that cannot come;
// requests that need no database are still served, and the service serves again by itself soon after
// the network is back. Without this, each request of an outage waited the whole connect bound, and
// a client with a shorter patience saw the API hang.
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { boundedFetch, eventually } from '../support/steady-load.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

/** Far longer than a client waits: a request that waits for a new connection "hangs" for the client. */
const CONNECT_TIMEOUT_MS = 15_000;
/** The client's patience. */
const CLIENT_BOUND_MS = 5000;

let proxy: TcpProxy;
let server: TestServer;
let userId: string;

beforeAll(async () => {
  const admin = new URL(inject('adminUrl'));
  proxy = await startTcpProxy({ host: admin.hostname, port: Number(admin.port || 5432) });
  server = await startTestServer(
    {
      requestTimeoutMs: CONNECT_TIMEOUT_MS + 5000,
      statementTimeoutMs: 1000,
      databaseConnectTimeoutMs: CONNECT_TIMEOUT_MS,
      apiKeyCacheMs: 60_000,
    },
    { databaseVia: proxy },
  );
  const created = await server.fetch('/users', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Silent', email: 'silent@example.com' }),
  });
  userId = ((await created.json()) as { id: string }).id;
});
afterAll(async () => {
  await proxy?.set('pass');
  await server?.close();
  await proxy?.close();
});

const headers = () => ({ 'x-api-key': server.apiKey, 'content-type': 'application/json', accept: 'application/graphql-response+json' });

/** One request of each kind that needs the database, and one that does not. */
const requests = {
  read: () => boundedFetch(`${server.url}/users/${userId}`, { headers: headers() }, CLIENT_BOUND_MS),
  write: () =>
    boundedFetch(
      `${server.url}/users/${userId}/orders`,
      { method: 'POST', headers: headers(), body: JSON.stringify({ total: 5 }) },
      CLIENT_BOUND_MS,
    ),
  graphql: () =>
    boundedFetch(
      `${server.url}/graphql`,
      { method: 'POST', headers: headers(), body: JSON.stringify({ query: `{ user(id: "${userId}") { name } }` }) },
      CLIENT_BOUND_MS,
    ),
  noDatabase: () =>
    boundedFetch(
      `${server.url}/graphql`,
      { method: 'POST', headers: headers(), body: JSON.stringify({ query: '{ rateLimit { limit } }' }) },
      CLIENT_BOUND_MS,
    ),
};

it('answers 503 at once while PostgreSQL is known to be silent, and serves again by itself once it answers', async () => {
  const logsBefore = server.logs.length;
  await proxy.set('blackhole');
  // The outage is noticed by a request whose statement never gets its reply (the pool's idle
  // connection), then known: from then on every request that needs the database is refused at once.
  await eventually(
    async () => {
      const answers = await Promise.all([requests.read(), requests.read(), requests.write()]);
      return answers.every((answer) => answer.status === 503);
    },
    'requests that need the database are answered 503 within the client’s patience',
    30_000,
  );

  const burst = await Promise.all(Array.from({ length: 24 }, (_, i) => [requests.read, requests.write, requests.graphql][i % 3]!()));
  expect(burst.map((answer) => answer.status)).toEqual(burst.map(() => 503));
  for (const answer of burst) {
    expect(answer.headers?.get('retry-after')).toBe('2');
    const body = answer.body as { type?: string; errors?: { extensions?: { code?: string } }[] };
    expect([body.type, body.errors?.[0]?.extensions?.code]).toContainEqual(expect.stringMatching(/unavailable|UNAVAILABLE/));
  }
  expect((await requests.noDatabase()).status).toBe(200);

  await proxy.set('pass');
  await eventually(async () => (await requests.read()).status === 200, 'reads are served again', 15_000);
  await eventually(async () => (await requests.write()).status === 201, 'writes are served again', 15_000);
  expect((await requests.graphql()).status).toBe(200);

  // One outage, logged once as it began and once as it ended; no request logged an error of its own.
  const logs = server.logs.slice(logsBefore);
  const down = logs.filter((line) => String(line.msg).startsWith('database unreachable'));
  expect(down.length).toBe(1);
  await eventually(() => server.logs.slice(logsBefore).some((line) => line.msg === 'database reachable again'), 'the end is logged', 5000);
  expect(logs.filter((line) => (line.level as number) >= 50 && !down.includes(line))).toEqual([]);
}, 120_000);
