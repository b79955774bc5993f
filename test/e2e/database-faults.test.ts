// PostgreSQL going away, under steady load: a TCP proxy between the service and the database refuses
// connections, resets them, swallows every packet, or slows them down, for a few seconds. For each
// fault the clients see 503 Problem Details (or UNAVAILABLE/TIMEOUT on GraphQL) within the deadline,
// never a 500 and never a hang; /ready says so within 2 s; requests that need no database keep
// working; the service serves normally again soon after the restore, without a restart; every
// write it acknowledged is in the database; a write with an Idempotency-Key that failed can be
// retried and writes once, and one that was acknowledged replays; and the outage is logged once, not
// once per request.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from 'vitest';
import { runs } from '../support/long-mode.ts';
import { boundedFetch, eventually, startSteadyLoad, type Outcome } from '../support/steady-load.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { startTcpProxy, type Fault, type TcpProxy } from '../support/tcp-proxy.ts';

const REQUEST_TIMEOUT_MS = 3000;
/** A client's patience: the deadline plus slack for a loaded 2-core machine. Past it a request "hung". */
const CLIENT_BOUND_MS = REQUEST_TIMEOUT_MS + 2000;
const FAULT_MS = runs(2000, 15_000);
const WORKERS = runs(6, 16);
/** How soon after the restore the service must serve again. */
const RECOVERY_MS = 10_000;

let proxy: TcpProxy;
let server: TestServer;
const userIds: string[] = [];

beforeAll(async () => {
  const admin = new URL(inject('adminUrl'));
  proxy = await startTcpProxy({ host: admin.hostname, port: Number(admin.port || 5432) });
  server = await startTestServer(
    {
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      statementTimeoutMs: 1000,
      databaseConnectTimeoutMs: 1000,
      // As in production: a verified key is remembered, so requests that need no database need none.
      apiKeyCacheMs: 60_000,
    },
    { databaseVia: proxy },
  );
  for (let i = 0; i < 4; i++) {
    const response = await server.fetch('/users', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Faulty ${i}`, email: `faulty-${i}@example.com` }),
    });
    userIds.push(((await response.json()) as { id: string }).id);
  }
});
afterAll(async () => {
  await server?.close();
  await proxy?.close();
});

/** Orders placed with an Idempotency-Key, by key: what was sent, and what came back. */
const keyedWrites = new Map<string, { path: string; total: number; status: number | 'hung'; created?: string }>();
/** Every order placed gets a total of its own, so that a key's orders can be counted. */
let totals = 0;

/** Places an order, with an Idempotency-Key when given one. */
function placeOrder(path: string, total: number, key?: string) {
  const headers = { 'x-api-key': server.apiKey, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) };
  return boundedFetch(`${server.url}${path}`, { method: 'POST', headers, body: JSON.stringify({ total }) }, CLIENT_BOUND_MS);
}

/**
 * One request of the mix: a paged read, an order placed (every other one with an Idempotency-Key),
 * and a GraphQL query that needs no database.
 */
async function request(i: number): Promise<Omit<Outcome, 'startedAt' | 'endedAt'>> {
  const headers = { 'x-api-key': server.apiKey, 'content-type': 'application/json', accept: 'application/graphql-response+json' };
  const kind = i % 3;
  const name = ['read', 'write', 'no-database'][kind]!;
  const path = `/users/${userIds[i % userIds.length]}/orders`;
  const total = ++totals;
  const key = kind === 1 && i % 2 === 0 ? `fault-${total}` : undefined;
  const answer =
    kind === 0
      ? await boundedFetch(`${server.url}/users?limit=1&page=${1 + (i % 4)}`, { headers }, CLIENT_BOUND_MS)
      : kind === 1
        ? await placeOrder(path, total, key)
        : await boundedFetch(
            `${server.url}/graphql`,
            { method: 'POST', headers, body: JSON.stringify({ query: '{ rateLimit { limit } }' }) },
            CLIENT_BOUND_MS,
          );
  const body = answer.body as { type?: string; id?: string; errors?: { extensions?: { code?: string } }[] } | undefined;
  if (key) keyedWrites.set(key, { path, total, status: answer.status, ...(answer.status === 201 ? { created: body?.id } : {}) });
  return {
    name,
    status: answer.status,
    problem: body?.type ?? body?.errors?.[0]?.extensions?.code,
    retryAfter: answer.headers?.get('retry-after'),
    ...(answer.status === 201 ? { created: body?.id } : {}),
  };
}

async function ready(): Promise<number | 'hung'> {
  return (await boundedFetch(`${server.url}/ready`, {}, 2500)).status;
}

const UNAVAILABLE = new Set(['https://portico.dev/problems/unavailable', 'https://portico.dev/problems/timeout', 'UNAVAILABLE', 'TIMEOUT']);

describe.each<[string, Fault, { unreachable: boolean }]>([
  ['refused connections', 'refuse', { unreachable: true }],
  ['reset connections', 'reset', { unreachable: true }],
  ['dropped packets', 'blackhole', { unreachable: true }],
  ['slow packets', { latencyMs: 150 }, { unreachable: false }],
])('PostgreSQL behind %s', (_, fault, { unreachable }) => {
  it(
    'answers 503 within the deadline, recovers without a restart, and loses no acknowledged write',
    async ({ annotate }) => {
      const logsBefore = server.logs.length;
      const load = startSteadyLoad(WORKERS, request);
      onTestFinished(() => load.stop());
      await eventually(() => load.outcomes.some((o) => o.status === 201), 'the load has written', 5000);

      const faultStart = Date.now();
      await proxy.set(fault);
      const readyDuring: (number | 'hung')[] = [];
      let slowestReadyMs = 0;
      while (Date.now() - faultStart < FAULT_MS) {
        const asked = Date.now();
        readyDuring.push(await ready());
        slowestReadyMs = Math.max(slowestReadyMs, Date.now() - asked);
      }
      if (unreachable) await eventually(async () => (await ready()) === 503, '/ready says 503', 5000);
      const restoredAt = Date.now();
      await proxy.set('pass');

      await eventually(
        () => load.between(restoredAt, Infinity).some((o) => o.name === 'write' && o.status === 201),
        'writes succeed again after the restore',
        RECOVERY_MS,
      );
      const recoveredAt = Date.now();
      await eventually(() => load.between(recoveredAt, Infinity).length >= 30, 'thirty requests after recovery', RECOVERY_MS);
      await load.stop();

      // During the fault: answers, not hangs; 503 in the face's format, never 500.
      const during = load.between(faultStart, restoredAt);
      expect(during.filter((o) => o.status === 'hung')).toEqual([]);
      const failures = during.filter((o) => o.status !== 200 && o.status !== 201);
      for (const failure of failures) {
        expect(failure.status, JSON.stringify(failure)).toBe(503);
        expect(UNAVAILABLE, JSON.stringify(failure)).toContain(failure.problem);
        if (failure.problem?.endsWith('unavailable') || failure.problem === 'UNAVAILABLE') expect(failure.retryAfter).toBe('2');
      }
      if (unreachable) {
        expect(failures.length).toBeGreaterThan(0);
        // What needs no database (a cached key, the rate limit budget) is still served.
        expect(during.filter((o) => o.name === 'no-database' && o.status === 200).length).toBeGreaterThan(0);
      }
      expect(readyDuring.filter((status) => status === 'hung')).toEqual([]);

      // After: normal service, every request of the last thirty a success.
      const after = load.between(recoveredAt, Infinity).slice(-30);
      expect(after.filter((o) => o.status !== 200 && o.status !== 201)).toEqual([]);
      expect(await ready()).toBe(200);

      // Every order the service acknowledged exists.
      const acknowledged = load.outcomes.filter((o) => o.created).map((o) => o.created!);
      const client = new pg.Client({ connectionString: server.databaseUrl });
      await client.connect();
      try {
        const { rows } = await client.query<{ id: string }>('select id from orders where id = any($1)', [acknowledged]);
        expect(rows.length).toBe(acknowledged.length);
        // No transaction whose client went silent keeps its locks: PostgreSQL ends such sessions.
        await eventually(
          async () =>
            (
              await client.query<{ n: number }>(
                "select count(*)::int as n from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'",
              )
            ).rows[0]!.n === 0,
          'no session is left idle in a transaction',
          10_000,
        );
      } finally {
        await client.end();
      }

      // Writes with an Idempotency-Key, retried now: each one's order exists exactly once. An
      // acknowledged one replays. One answered 503 either left its key free, so the retry writes, or
      // (answered by the deadline while it went on) committed later, so the retry replays it.
      const retried = [...keyedWrites].filter(([, write]) => write.status !== 'hung');
      // A few at a time, fewer than the pool's connections: an outage answers hundreds of keyed writes
      // with 503, and one by one their retries took most of the test's time on a loaded machine.
      const retriedIds = new Map<string, string | undefined>();
      for (let at = 0; at < retried.length; at += 8) {
        await Promise.all(
          retried.slice(at, at + 8).map(async ([key, write]) => {
            const retry = await placeOrder(write.path, write.total, key);
            const order = retry.body as { id?: string } | undefined;
            expect(retry.status, key).toBe(201);
            if (write.status === 201) expect([retry.headers?.get('idempotent-replayed'), order?.id], key).toEqual(['true', write.created]);
            const again = await placeOrder(write.path, write.total, key);
            expect([again.status, again.headers?.get('idempotent-replayed'), (again.body as { id?: string } | undefined)?.id], key).toEqual(
              [201, 'true', order?.id],
            );
            retriedIds.set(key, order?.id);
          }),
        );
      }
      // Each key's order exists exactly once: every order placed has a total of its own.
      const counter = new pg.Client({ connectionString: server.databaseUrl });
      await counter.connect();
      try {
        const { rows } = await counter.query<{ total: number; ids: string[] }>(
          'select total, array_agg(id) as ids from orders where total = any($1) group by total',
          [retried.map(([, write]) => write.total)],
        );
        const stored = new Map(rows.map((row) => [Number(row.total), row.ids]));
        for (const [key, write] of retried) expect(stored.get(write.total), key).toEqual([retriedIds.get(key)]);
      } finally {
        await counter.end();
      }
      // The fault reached writes with a key too, not only the others.
      if (unreachable) expect([...keyedWrites.values()].filter((write) => write.status === 503).length).toBeGreaterThan(0);
      keyedWrites.clear();

      // The outage is reported once, and its end once; no request logged an error of its own.
      const logs = server.logs.slice(logsBefore);
      const down = logs.filter((line) => String(line.msg).startsWith('database unreachable'));
      const back = logs.filter((line) => line.msg === 'database reachable again');
      if (unreachable) {
        expect(down.length).toBe(1);
        expect(back.length).toBe(1);
      }
      expect(down.length).toBe(back.length);
      expect(logs.filter((line) => (line.level as number) >= 50 && !down.includes(line))).toEqual([]);

      // The figures the README's Reliability section quotes (`npm run test:long` prints them).
      const firstFailure = during.filter((o) => o.status === 503).sort((a, b) => a.endedAt - b.endedAt)[0];
      const firstWriteAfter = load.between(restoredAt, Infinity).find((o) => o.name === 'write' && o.status === 201)!;
      await annotate(
        `${during.length} requests during ${FAULT_MS} ms: ${failures.length} answered 503, the slowest in ` +
          `${Math.max(...during.map((o) => o.endedAt - o.startedAt))} ms; first 503 ` +
          `${firstFailure ? `${firstFailure.endedAt - faultStart} ms after the fault began` : 'never'}; /ready answered within ` +
          `${slowestReadyMs} ms; writes succeeded ${firstWriteAfter.endedAt - restoredAt} ms after the restore; ` +
          `${acknowledged.length} acknowledged orders, all stored`,
      );
    },
    60_000 + FAULT_MS * 2,
  );
});
