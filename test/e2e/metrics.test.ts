// Prometheus metrics over real HTTP: scraped from /metrics behind its token (or on a port of its own,
// from the service as a process) and parsed with an independent parser of the text format (which
// folds the labelled series of a histogram together; those are read from the text); requests
// by face and operation, document refusals, rate limit decisions, the pool, and the webhook pipeline
// from write to delivery.
import os from 'node:os';
import fs from 'node:fs/promises';
import path from 'node:path';
import parsePrometheus, { type MetricFamily, type Sample } from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usedCredential } from '../support/credentials.ts';
import type { Receiver } from '../support/receiver.ts';
import { startDeliveryRig, type DeliveryRig } from '../support/delivery-rig.ts';
import { rest } from '../support/rest.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { startServiceProcess } from '../support/service-process.ts';
import { eventually } from '../support/steady-load.ts';

const TOKEN = usedCredential('metrics-token-for-tests-0123456789abcdef');
let rig: DeliveryRig;
let server: TestServer;
let receiver: Receiver;

beforeAll(async () => {
  rig = await startDeliveryRig({ metrics: { port: undefined, token: TOKEN } }, { retryScheduleMs: [0] });
  ({ server, receiver } = rig);
});
afterAll(() => rig?.close());

async function scrape(base = server.url, token: string | undefined = TOKEN): Promise<MetricFamily[]> {
  const response = await fetch(`${base}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheus(await response.text());
}

function family(families: MetricFamily[], name: string): MetricFamily {
  const found = families.find((f) => f.name === name);
  if (!found) throw new Error(`no metric ${name}`);
  return found;
}

/** The value of the sample of `name` whose labels include `labels` (0 when there is none yet). */
function valueOf(families: MetricFamily[], name: string, labels: Record<string, string> = {}): number {
  const sample = family(families, name).metrics.find((m: Sample) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return Number(sample?.value ?? sample?.count ?? 0);
}

// One test starts the service as a process, which on two busy cores can take seconds.
describe('/metrics access', { timeout: 60_000 }, () => {
  it('is refused without the token, or with a wrong one, and says how to authenticate', async () => {
    for (const authorization of [undefined, 'Bearer wrong', `Bearer ${TOKEN}x`, TOKEN]) {
      const response = await fetch(`${server.url}/metrics`, { headers: authorization ? { authorization } : {} });
      expect(response.status, String(authorization)).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
    }
    // The scheme's name in any letter case (RFC 9110 §11.1), the token exactly.
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const response = await fetch(`${server.url}/metrics`, { headers: { authorization: `${scheme} ${TOKEN}` } });
      expect([scheme, response.status]).toEqual([scheme, 200]);
    }
  });

  it('is not served at all when neither METRICS_TOKEN nor METRICS_PORT is set, and then nothing is counted per request', async () => {
    const plain = await startTestServer();
    try {
      // With a key, so that the answer is about the path: nothing is there.
      const response = await plain.fetch('/metrics');
      expect(response.status).toBe(404);
      expect(await response.text()).not.toContain('portico_');
      expect((await plain.gql('{ users(first: 1) { edges { node { id } } } }')).body.errors).toBeUndefined();
      expect((await plain.fetch('/users?limit=1')).status).toBe(200);
      // What the process would have shown, had it served it: no request counts, latencies or phases.
      const kept = parsePrometheus((await plain.metrics.exposition()).body);
      for (const name of ['portico_http_requests_total', 'portico_http_request_duration_seconds', 'graphql_envelop_phase_execute']) {
        expect(kept.find((f) => f.name === name)?.metrics ?? [], name).toEqual([]);
      }
      expect(kept.find((f) => f.name === 'process_cpu_seconds_total')).toBeUndefined();
    } finally {
      await plain.close();
    }
  });

  it('is served on METRICS_PORT by the service, apart from the API port, with the default Node metrics', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'portico-metrics-'));
    const service = await startServiceProcess(server.databaseUrl, dataDir, '', { env: { METRICS_PORT: '0' } });
    try {
      const port = /"metricsPort":(\d+)/.exec(service.output())?.[1];
      expect(port).toBeDefined();
      const families = await scrape(`http://127.0.0.1:${port}`, undefined);
      for (const name of [
        'process_resident_memory_bytes',
        'nodejs_eventloop_lag_seconds',
        'nodejs_gc_duration_seconds',
        'nodejs_heap_size_used_bytes',
      ]) {
        expect(families.map((f) => f.name)).toContain(name);
      }
      // The API port does not serve them: /metrics there is just a path of the API, which needs a key.
      const onApiPort = await fetch(`${service.url}/metrics`);
      expect(onApiPort.status).toBe(401);
      expect(await onApiPort.text()).not.toContain('portico_');
    } finally {
      service.stop();
      await service.exited;
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('what the metrics count', () => {
  it('follow the Prometheus naming conventions, with help on every metric', async () => {
    const families = await scrape();
    for (const f of families) {
      expect(f.name).toMatch(/^[a-z_][a-z0-9_]*$/);
      expect(f.help.length, f.name).toBeGreaterThan(0);
      if (f.type === 'COUNTER') expect(f.name, 'a counter ends in _total').toMatch(/_total$/);
      if (f.name.startsWith('portico_') && f.type === 'HISTOGRAM') expect(f.name, 'a histogram names its unit').toMatch(/_seconds$/);
    }
  });

  it('counts requests by face, operation and status class, never by a name the client chose', async () => {
    const before = await scrape();
    await server.gql('query SecretOperationName123 { users(first: 1) { edges { node { id } } } }');
    await server.gql('{ a: users(first: 1) { pageInfo { hasNextPage } } b: user(id: "usr_01jd3x3b8vfb9s1p4t4p6q2k7m") { id } }');
    await server.fetch('/users?limit=1');
    await server.fetch('/users/not-an-id');
    await server.fetch('/nothing-here');
    // Refused before the REST adapter routed them: REST requests all the same.
    await fetch(`${server.url}/users?limit=1`);
    await fetch(`${server.url}/users`, { method: 'PUT', headers: { 'x-api-key': server.apiKey } });
    const after = await scrape();
    const grew = (labels: Record<string, string>) =>
      valueOf(after, 'portico_http_requests_total', labels) - valueOf(before, 'portico_http_requests_total', labels);
    expect(grew({ face: 'graphql', operation: 'users', status_class: '2xx' })).toBe(1);
    expect(grew({ face: 'graphql', operation: 'multiple', status_class: '2xx' })).toBe(1);
    expect(grew({ face: 'rest', operation: 'listUsers', status_class: '2xx' })).toBe(1);
    expect(grew({ face: 'rest', operation: 'getUser', status_class: '4xx' })).toBe(1);
    expect(grew({ face: 'rest', operation: 'listUsers', status_class: '4xx' })).toBe(1);
    expect(grew({ face: 'rest', operation: 'none', status_class: '4xx' })).toBe(1);
    expect(grew({ face: 'other', operation: 'none', status_class: '4xx' })).toBeGreaterThanOrEqual(1);
    const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    // The parser folds a histogram's labelled series together, so its count is read from the text.
    expect(
      Number(/^portico_http_request_duration_seconds_count\{face="rest",operation="listUsers"\} (\d+)$/m.exec(text)?.[1]),
    ).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain('SecretOperationName123');
    expect(text).not.toContain(server.apiKey.slice(0, 12));
  });

  it("times GraphQL's phases by operation type, in fractions of a millisecond", async () => {
    const phases = async () => {
      const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
      // A histogram's labelled series, read from the text (the parser folds them together).
      const read = (phase: string, part: 'count' | 'sum', operationType: string) =>
        Number(
          new RegExp(`^graphql_envelop_phase_${phase}_${part}\\{operationType="${operationType}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0,
        );
      return { text, read };
    };
    const before = await phases();
    // A document of its own, so its parse and validation are not yet cached.
    await server.gql(`query PhasesTimed { users(first: 1) { edges { node { id name } } } }`);
    await server.gql(`mutation { createUser(input: { name: "Phased", email: "phased-${Date.now()}@example.com" }) { id } }`);
    await server.gql('{ users(first: 1) {');
    const after = await phases();
    const grew = (phase: string, part: 'count' | 'sum', operationType: string) =>
      after.read(phase, part, operationType) - before.read(phase, part, operationType);
    for (const phase of ['parse', 'validate', 'execute']) {
      expect(grew(phase, 'count', 'query'), phase).toBe(1);
      expect(grew(phase, 'count', 'mutation'), phase).toBe(1);
      // Timed in microseconds: a parse or validation of a few fields takes well under a millisecond,
      // which whole milliseconds would count as 0.
      expect(grew(phase, 'sum', 'query'), phase).toBeGreaterThan(0);
    }
    // A document that does not parse: timed, with no operation type, and never validated or run.
    expect(grew('parse', 'count', 'undefined')).toBe(1);
    expect(grew('validate', 'count', 'undefined')).toBe(0);
    expect(after.text).toContain('# HELP graphql_envelop_phase_parse Time spent on running GraphQL "parse" function');
    expect(after.text).toMatch(/^graphql_envelop_phase_execute_bucket\{le="0.005",operationType="query"\} \d+$/m);
  });

  it('counts documents refused by each limit', async () => {
    const before = await scrape();
    const deep = `{ users { edges { node { orders { user { orders { user { orders { user { orders { user { id } } } } } } } } } } } }`;
    await server.gql(deep);
    await server.gql('{ users(first: 100) { edges { node { orders(limit: 100) { id } } } } }');
    // Twice: the second time, validation's result comes from its cache.
    const repeated = `{ ${'rateLimit { cost } '.repeat(600)}}`;
    await server.gql(repeated);
    await server.gql(repeated);
    const after = await scrape();
    const grew = (limit: string) =>
      valueOf(after, 'portico_graphql_document_refusals_total', { limit }) -
      valueOf(before, 'portico_graphql_document_refusals_total', { limit });
    expect(grew('depth')).toBe(1);
    expect(grew('cost')).toBe(1);
    // graphql-js's own bound on checking that repeated fields merge.
    expect(grew('merging')).toBe(2);
  });

  it('counts rate limit decisions by policy and outcome, and shows the store healthy', async () => {
    const before = await scrape();
    await server.fetch('/users?limit=1');
    await fetch(`${server.url}/users`);
    const after = await scrape();
    const grew = (labels: Record<string, string>) =>
      valueOf(after, 'portico_rate_limit_decisions_total', labels) - valueOf(before, 'portico_rate_limit_decisions_total', labels);
    expect(grew({ policy: 'per-key', outcome: 'admitted' })).toBe(1);
    expect(grew({ policy: 'per-address', outcome: 'admitted' })).toBe(1);
    expect(valueOf(after, 'portico_rate_limit_store_degraded')).toBe(0);
  });

  it('shows the database pool and availability', async () => {
    const families = await scrape();
    expect(valueOf(families, 'portico_db_available')).toBe(1);
    expect(
      valueOf(families, 'portico_db_pool_connections', { state: 'idle' }) +
        valueOf(families, 'portico_db_pool_connections', { state: 'in_use' }),
    ).toBeGreaterThan(0);
    expect(valueOf(families, 'portico_db_pool_waiting_requests')).toBe(0);
  });

  it('shows the outbox figures as NaN, rather than as they were, while the database cannot be read', async () => {
    const cut = await startTestServer({ metrics: { port: undefined, token: TOKEN } });
    try {
      const outbox = [
        'portico_webhook_deliveries_pending',
        'portico_webhook_oldest_pending_age_seconds',
        'portico_webhook_deliveries_dead',
      ];
      const before = await scrape(cut.url);
      for (const name of outbox) expect(Number.isFinite(valueOf(before, name)), name).toBe(true);
      await cut.orm.close(true);
      const after = await scrape(cut.url);
      for (const name of outbox) expect(valueOf(after, name), name).toBeNaN();
    } finally {
      await cut.close().catch(() => undefined);
    }
  });

  it('follows webhooks from write to delivery: attempts by outcome, latency, failures by endpoint, the outbox and the dead-letter queue', async () => {
    const endpoint = async (hookPath: string) => {
      const response = await rest<{ id: string; secret: string }>(server, 'POST', '/webhook-endpoints', {
        json: { url: `${receiver.url}${hookPath}` },
      });
      expect(response.status).toBe(201);
      usedCredential(response.body.secret);
      return response.body.id;
    };
    receiver.answer = (request) => (request.path === '/failing' ? { status: 500 } : { status: 200 });
    const good = await endpoint('/good');
    const failing = await endpoint('/failing');
    // An endpoint whose secret no longer opens (as after WEBHOOK_SECRET_KEY changed): nothing is sent.
    // Its ping is delivered while the secret still opens, so the secret changes only once it has been.
    const unopenable = await endpoint('/unopenable');
    const hasPing = (request: { path: string; body: string }) => request.path === '/unopenable' && request.body.includes('"type":"ping"');
    await eventually(() => receiver.received.some(hasPing), 'the endpoint’s ping delivered', 10_000);
    await server.orm.em.fork().execute(`update webhook_endpoints set secret = 'not-a-sealed-secret' where id = ?`, [unopenable]);
    const before = await scrape();
    await rest(server, 'POST', '/users', { json: { name: 'Metered', email: 'metered@example.com' } });
    // Each endpoint's ping and the user.created event: two deliveries each (the unopenable one's
    // second never sent).
    await eventually(
      async () => valueOf(await scrape(), 'portico_webhook_deliveries_dead') >= 2,
      'both of the failing endpoint’s deliveries dead-lettered',
      10_000,
    );
    await eventually(async () => valueOf(await scrape(), 'portico_webhook_deliveries_pending') === 0, 'nothing left waiting', 10_000);
    const after = await scrape();
    const grew = (name: string, labels: Record<string, string> = {}) => valueOf(after, name, labels) - valueOf(before, name, labels);
    expect(grew('portico_webhook_attempts_total', { outcome: 'succeeded' })).toBeGreaterThanOrEqual(1);
    expect(grew('portico_webhook_attempts_total', { outcome: 'http_status' })).toBeGreaterThanOrEqual(1);
    expect(grew('portico_webhook_attempts_total', { outcome: 'not_sent' })).toBeGreaterThanOrEqual(1);
    expect(receiver.received.filter((request) => request.path === '/unopenable' && !hasPing(request))).toEqual([]);
    expect(grew('portico_webhook_delivery_latency_seconds')).toBeGreaterThanOrEqual(1);
    expect(valueOf(after, 'portico_webhook_endpoint_failures_total', { endpoint: failing })).toBeGreaterThanOrEqual(2);
    expect(valueOf(after, 'portico_webhook_endpoint_failures_total', { endpoint: good })).toBe(0);
    expect(valueOf(after, 'portico_webhook_dead_lettered_total')).toBeGreaterThanOrEqual(2);
    expect(valueOf(after, 'portico_webhook_oldest_pending_age_seconds')).toBe(0);

    // A disabled endpoint's deliveries wait for its owner, not for the worker: no backlog of the outbox.
    // Its ping's retry deferred an hour (429, Retry-After), so that it waits while the endpoint is disabled.
    receiver.answer = (request) =>
      request.path === '/paused'
        ? { status: 429, headers: { 'retry-after': '3600' } }
        : { status: request.path === '/failing' ? 500 : 200 };
    const paused = await endpoint('/paused');
    const retrying = `select count(*)::int as n from webhook_deliveries where endpoint_id = ? and state = 'failed'`;
    await eventually(
      async () => (await server.orm.em.fork().execute<[{ n: number }]>(retrying, [paused]))[0].n > 0,
      'the paused endpoint’s ping waits for a retry',
      10_000,
    );
    await server.orm.em.fork().execute(`update webhook_endpoints set enabled = false where id = ?`, [paused]);
    const pausedFigures = await scrape();
    expect([
      valueOf(pausedFigures, 'portico_webhook_deliveries_pending'),
      valueOf(pausedFigures, 'portico_webhook_oldest_pending_age_seconds'),
    ]).toEqual([0, 0]);
  });
});
