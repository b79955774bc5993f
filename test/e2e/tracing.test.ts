// OpenTelemetry traces, kept in memory: the span tree of one REST request (server span continuing the
// caller's traceparent, the GraphQL operation, its root field, the SQL it sent) and of one webhook
// delivery (its own trace, linked to the request that wrote the event, continued by the receiver);
// and the service as a process, exporting over OTLP to a collector, Redis commands included.
// Tracing is installed before the service's modules load, as the entry point does, so that the
// PostgreSQL instrumentation sees pg load.
import fs from 'node:fs/promises';
import http from 'node:http';
import Module from 'node:module';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TracingConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { startTracing, stopTracing } from '../../src/telemetry/tracing.ts';
import { setTraceContextOnTheWire } from '../../src/telemetry/trace-context.ts';

const exporter = new InMemorySpanExporter();
const TRACING: TracingConfig = {
  serviceName: 'portico-test',
  resourceAttributes: {},
  sampler: 'parentbased_always_on',
  ratio: 1,
  protocol: 'http/protobuf',
  resolvers: 'root',
  // These unused: the in-memory exporter takes each span as it ends, with no batching or sending.
  batch: { scheduledDelayMillis: 1, exportTimeoutMillis: 1, maxQueueSize: 1, maxExportBatchSize: 1 },
  exportTimeoutMs: 1,
  exportHeaders: {},
  compression: 'none',
  exportTls: {},
  propagation: 'tracecontext',
};
const loadersBefore = [Module.prototype.require, process.getBuiltinModule];
startTracing(TRACING, createLogger('silent'), exporter);
const loadersAfter = [Module.prototype.require, process.getBuiltinModule];

const { usedCredential } = await import('../support/credentials.ts');
const { rest } = await import('../support/rest.ts');
const { SKIP_REDIS, startTestRedis } = await import('../support/redis.ts');
const { startServiceProcess } = await import('../support/service-process.ts');
const { startTcpProxy } = await import('../support/tcp-proxy.ts');

/** The part of an OTLP/HTTP JSON export request the collector below reads. */
interface OtlpRequest {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: { stringValue?: string } }[] };
    scopeSpans?: { scope?: { name?: string }; spans?: { name: string; traceId: string }[] }[];
  }[];
}

/** A span as the collector below keeps it, with its resource's string attributes. */
interface ReceivedSpan {
  name: string;
  traceId: string;
  scope: string;
  resource: Record<string, string | undefined>;
}

/** A collector that keeps the spans it is sent (OTLP over HTTP, JSON, gzipped or not), how many came in each export, and each export's credentials and encoding. */
async function startCollector(): Promise<{
  port: number;
  received: ReceivedSpan[];
  batches: number[];
  exports: { authorization: string | undefined; encoding: string | undefined }[];
  close(): void;
}> {
  const received: ReceivedSpan[] = [];
  const batches: number[] = [];
  const exports: { authorization: string | undefined; encoding: string | undefined }[] = [];
  const collector = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const encoding = req.headers['content-encoding'];
      exports.push({ authorization: req.headers.authorization, encoding });
      const body = Buffer.concat(chunks);
      const request = JSON.parse((encoding === 'gzip' ? gunzipSync(body) : body).toString('utf8')) as OtlpRequest;
      const before = received.length;
      for (const { resource, scopeSpans } of request.resourceSpans ?? []) {
        const attributes = Object.fromEntries((resource?.attributes ?? []).map(({ key, value }) => [key, value.stringValue]));
        for (const scope of scopeSpans ?? []) {
          for (const span of scope.spans ?? [])
            received.push({ name: span.name, traceId: span.traceId, scope: scope.scope?.name ?? '', resource: attributes });
        }
      }
      batches.push(received.length - before);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  return {
    port: (collector.address() as AddressInfo).port,
    received,
    batches,
    exports,
    close: () => {
      collector.closeAllConnections();
      collector.close();
    },
  };
}
const { eventually } = await import('../support/steady-load.ts');
const { startDeliveryRig } = await import('../support/delivery-rig.ts');

let rig: Awaited<ReturnType<typeof startDeliveryRig>>;
let server: typeof rig.server;
let receiver: typeof rig.receiver;

beforeAll(async () => {
  rig = await startDeliveryRig({ tracing: TRACING });
  ({ server, receiver } = rig);
});
afterAll(async () => {
  await rig?.close();
  await stopTracing();
});

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

const spansOf = (traceId: string) => exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceId);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const childrenOf = (spans: ReadableSpan[], parent: ReadableSpan) => spans.filter((span) => parentOf(span) === parent.spanContext().spanId);

describe('installing tracing', () => {
  it('leaves require and process.getBuiltinModule unwrapped: no module look-up pays for tracing', () => {
    // The instrumentation package hooks both when an instrumentation is made, enabled or not.
    expect(loadersAfter[0]).toBe(loadersBefore[0]);
    expect(loadersAfter[1]).toBe(loadersBefore[1]);
  });
});

describe('a REST request', () => {
  it('is one trace continuing the caller’s: server span, GraphQL operation, root field, then its SQL', async () => {
    const response = await rest<{ id: string }>(server, 'POST', '/users', {
      json: { name: 'Traced', email: 'traced@example.com' },
      headers: { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` },
    });
    expect(response.status).toBe(201);
    // The server span ends when the response has gone; spans are exported as each ends.
    await eventually(() => spansOf(TRACE_ID).some((span) => span.kind === SpanKind.SERVER), 'the server span exported', 5000);
    const spans = spansOf(TRACE_ID);

    const serverSpan = spans.find((span) => span.kind === SpanKind.SERVER)!;
    expect(serverSpan.name).toBe('POST /users');
    expect(parentOf(serverSpan)).toBe(CALLER_SPAN);
    expect(serverSpan.attributes).toMatchObject({
      'http.route': '/users',
      'http.response.status_code': 201,
      'http.request.method': 'POST',
    });

    const operation = childrenOf(spans, serverSpan).find((span) => span.attributes['graphql.operation.type'] !== undefined);
    expect(operation?.attributes['graphql.operation.type']).toBe('mutation');
    // As an unnamed GraphQL mutation is, not by the name the REST adapter gave its document.
    expect(operation?.name).toBe('mutation');
    const [field] = childrenOf(spans, operation!);
    expect(field?.name).toBe('Mutation.createUser');

    // Every statement of the request sits in its tree, the write below the field that made it.
    const statements = spans.filter((span) => span.name.startsWith('pg.'));
    const inTree = (span: ReadableSpan): boolean => {
      const parent = spans.find((candidate) => candidate.spanContext().spanId === parentOf(span));
      return parent === serverSpan || (parent !== undefined && inTree(parent));
    };
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) expect(inTree(statement), statement.name).toBe(true);
    expect(childrenOf(spans, field!).some((span) => span.name.startsWith('pg.'))).toBe(true);

    // The request's log line names its trace.
    const requestId = response.headers.get('x-request-id');
    expect(server.logs.find((line) => line.msg === 'request' && line.requestId === requestId)).toMatchObject({ traceId: TRACE_ID });
  });

  it('records neither what an error says nor the values written into a statement: they may hold personal data', async () => {
    const email = 'private.person@example.org';
    const traces = ['1'.repeat(32), '2'.repeat(32), '3'.repeat(32)];
    const traced = (traceId: string) => ({ traceparent: `00-${traceId}-${CALLER_SPAN}-01` });
    expect((await rest(server, 'POST', '/users', { json: { name: 'Private', email }, headers: traced(traces[0]!) })).status).toBe(201);
    // Refused, with a message quoting the email.
    const taken = await server.gql(`mutation { createUser(input: { name: "Again", email: "${email}" }) { id } }`, {}, traced(traces[1]!));
    expect(taken.body.errors?.[0]?.message).toContain(email);
    // Written through the ORM, which puts the values in the statement's text.
    const endpoint = await rest(server, 'POST', '/webhook-endpoints', {
      json: { url: `${receiver.url}/hooks?token=secret-token-in-url` },
      headers: traced(traces[2]!),
    });
    expect(endpoint.status).toBe(201);
    for (const traceId of traces) {
      await eventually(() => spansOf(traceId).some((span) => span.kind === SpanKind.SERVER), 'the server span exported', 5000);
    }
    const recorded = JSON.stringify(
      traces.flatMap(spansOf).map((span) => ({ name: span.name, attributes: span.attributes, events: span.events, status: span.status })),
    );
    expect(recorded).not.toContain(email);
    expect(recorded).not.toContain('secret-token-in-url');
    const field = spansOf(traces[1]!).find((span) => span.name === 'Mutation.createUser')!;
    expect([field.status, field.events.map((event) => event.attributes?.['exception.message'])]).toEqual([
      { code: SpanStatusCode.ERROR, message: 'CONFLICT' },
      ['CONFLICT'],
    ]);
    expect(spansOf(traces[2]!).some((span) => String(span.attributes['db.query.text']).includes('insert into "webhook_endpoints"'))).toBe(
      true,
    );
  });

  it('has spans for root fields only, by default', async () => {
    const traceId = 'a'.repeat(32);
    await server.gql(
      '{ users(first: 2) { edges { node { id orders(limit: 1) { id } } } } }',
      {},
      { traceparent: `00-${traceId}-${CALLER_SPAN}-01` },
    );
    await eventually(() => spansOf(traceId).some((span) => span.kind === SpanKind.SERVER), 'the server span exported', 5000);
    const names = spansOf(traceId).map((span) => span.name);
    expect(names).toContain('Query.users');
    expect(names).not.toContain('User.orders');
    expect(names).toContain('POST /graphql');
  });

  it('keeps each statement in its own request’s trace when requests wait for a pooled connection', async () => {
    const query = '{ users(first: 1) { edges { node { id } } } }';
    // The key's check cached first, so that each request below waits for one connection: its read's.
    await server.gql(query);
    // Every connection taken here: the requests' reads wait, and each is handed a connection this
    // test gives back, from its own context. Half are sampled by their callers, half are not.
    const pool = await server.orm.driver.getConnection().getNativeClient();
    const held = await Promise.all(Array.from({ length: pool.options.max ?? 10 }, () => pool.connect()));
    const requests = Array.from({ length: 20 }, (_, i) => ({ traceId: (i + 1).toString(16).padStart(32, 'd'), sampled: i % 2 === 0 }));
    const answered = Promise.all(
      requests.map(({ traceId, sampled }) => server.gql(query, {}, { traceparent: `00-${traceId}-${CALLER_SPAN}-0${sampled ? 1 : 0}` })),
    );
    try {
      await eventually(() => pool.waitingCount >= requests.length, 'every request waiting for a connection', 5000);
    } finally {
      for (const client of held) client.release();
    }
    await answered;
    const sampled = requests.filter((request) => request.sampled);
    await eventually(
      () => sampled.every(({ traceId }) => spansOf(traceId).some((span) => span.kind === SpanKind.SERVER)),
      'every sampled server span exported',
      5000,
    );
    for (const { traceId } of sampled) {
      // Its one read, under its own root field: not missing, and no other request's (an unsampled
      // request's read sent from a sampled one's context would land here too).
      const reads = spansOf(traceId).filter((span) => span.name.startsWith('pg.query:users_page'));
      expect(reads.length, traceId).toBe(1);
      expect(spansOf(traceId).find((span) => span.spanContext().spanId === parentOf(reads[0]!))?.name).toBe('Query.users');
    }
  });

  it('records nothing for a caller that did not sample its trace', async () => {
    const traceId = 'b'.repeat(32);
    await server.gql('{ users(first: 1) { edges { node { id } } } }', {}, { traceparent: `00-${traceId}-${CALLER_SPAN}-00` });
    // A sampled request after it, to know the unsampled one had its chance to be exported.
    const marker = 'c'.repeat(32);
    await server.gql('{ users(first: 1) { edges { node { id } } } }', {}, { traceparent: `00-${marker}-${CALLER_SPAN}-01` });
    await eventually(() => spansOf(marker).some((span) => span.kind === SpanKind.SERVER), 'the marker exported', 5000);
    expect(spansOf(traceId)).toEqual([]);
  });
});

// Each test starts the service as a process (twice, in one), which on two busy cores can take seconds.
describe.skipIf(SKIP_REDIS)('the service as a process', { timeout: 90_000 }, () => {
  it('exports sampled traces over OTLP to the collector OTEL_EXPORTER_OTLP_ENDPOINT names, Redis and PostgreSQL included, and nothing of unsampled ones', async () => {
    const collector = await startCollector();
    const { received } = collector;
    const redis = await startTestRedis();
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'portico-otlp-'));
    const service = await startServiceProcess(server.databaseUrl, dataDir, '', {
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}`,
        OTEL_SERVICE_NAME: 'portico-process',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=staging,service.name=overridden,team=a%2Cb',
        // JSON, so that the collector here reads it without a protobuf decoder.
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        // The collector's credentials (percent-encoded, as the specification writes them) and gzip.
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'authorization=Bearer%20collector-credential',
        OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
        // No trace starts here; a caller's sampled trace is still followed.
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0',
        REDIS_URL: redis.url,
      },
    });
    try {
      const traceId = 'e'.repeat(32);
      const response = await fetch(`${service.url}/users?limit=1`, {
        headers: { 'x-api-key': server.apiKey, traceparent: `00-${traceId}-${CALLER_SPAN}-01` },
      });
      expect(response.status).toBe(200);
      // Unsampled: no span at all, not even of its statements or of its GraphQL operation.
      for (let i = 0; i < 5; i++)
        expect((await fetch(`${service.url}/users?limit=1`, { headers: { 'x-api-key': server.apiKey } })).status).toBe(200);
      // A clean stop sends the spans still batched.
      service.stop();
      await service.exited;
      expect(received.filter((span) => span.traceId !== traceId)).toEqual([]);
      // Unsampled requests are named in the logs by the trace id drawn for them all the same.
      const requestLines = service
        .output()
        .split('\n')
        .filter((line) => line.includes('"msg":"request"') && line.includes('/users?limit=1'))
        .map((line) => JSON.parse(line) as { traceId?: string });
      expect(requestLines).toHaveLength(6);
      for (const line of requestLines) expect(line.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(collector.exports.length).toBeGreaterThan(0);
      for (const sent of collector.exports) expect(sent).toEqual({ authorization: 'Bearer collector-credential', encoding: 'gzip' });
      const trace = received.filter((span) => span.traceId === traceId);
      const names = trace.map((span) => span.name);
      expect(names).toContain('GET /users');
      // Every span carries the operator's resource attributes; OTEL_SERVICE_NAME wins over theirs.
      for (const span of trace) {
        expect(span.resource).toMatchObject({ 'service.name': 'portico-process', 'deployment.environment.name': 'staging', team: 'a,b' });
      }
      expect(names).toContain('Query.userList');
      expect(
        trace.some((span) => span.scope === '@opentelemetry/instrumentation-ioredis'),
        names.join(', '),
      ).toBe(true);
      expect(
        trace.some((span) => span.scope === '@opentelemetry/instrumentation-pg'),
        names.join(', '),
      ).toBe(true);
    } finally {
      service.stop();
      await service.exited;
      await redis.stop();
      await fs.rm(dataDir, { recursive: true, force: true });
      collector.close();
    }
  });

  it('keeps serving while the collector refuses or drops packets, says so once, exports again once it is back, and stops with it silent', async () => {
    const EXPORTER_PATIENCE_MS = 10 * 60_000;
    const COLLECTOR_TOKEN = usedCredential('otlp-collector-token-0123456789');
    const collector = await startCollector();
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: collector.port });
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'portico-otlp-'));
    const start = () =>
      startServiceProcess(server.databaseUrl, dataDir, '', {
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${proxy.port}`,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          // Longer than this test may take: only the service's own bound on its last flush can end a stop in time.
          OTEL_EXPORTER_OTLP_TIMEOUT: String(EXPORTER_PATIENCE_MS),
          // Each span goes out at once, so that exports fail while the collector refuses.
          OTEL_BSP_SCHEDULE_DELAY: '0',
          OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer ${COLLECTOR_TOKEN}`,
        },
      });
    const read = (base: string, traceId: string) =>
      fetch(`${base}/users?limit=1`, { headers: { 'x-api-key': server.apiKey, traceparent: `00-${traceId}-${CALLER_SPAN}-01` } });
    let service = await start();
    const lines = (message: string) =>
      service
        .output()
        .split('\n')
        .filter((line) => line.includes(message));
    try {
      await proxy.set('refuse');
      expect((await read(service.url, '1'.repeat(32))).status).toBe(200);
      expect((await read(service.url, '5'.repeat(32))).status).toBe(200);
      await eventually(() => lines('traces cannot reach the collector').length > 0, 'a warning that spans are dropped', 30_000);
      await proxy.set('pass');
      const healed = '2'.repeat(32);
      expect((await read(service.url, healed)).status).toBe(200);
      await eventually(() => lines('traces reach the collector again').length > 0, 'a line when export heals', 30_000);
      service.stop();
      expect(await service.exited).toBe(0);
      expect(collector.received.some((span) => span.traceId === healed && span.name === 'GET /users')).toBe(true);
      // Once each way, however many exports failed, and never the collector's credentials.
      expect(lines('traces cannot reach the collector')).toHaveLength(1);
      expect(lines('traces reach the collector again')).toHaveLength(1);
      expect(service.output()).not.toContain(COLLECTOR_TOKEN);

      // Packets dropped: requests are still answered, and a stop gives up on the last spans rather than wait.
      service = await start();
      await proxy.set('blackhole');
      expect((await read(service.url, '3'.repeat(32))).status).toBe(200);
      service.stop();
      expect(await service.exited).toBe(0);
    } finally {
      service.stop();
      await service.exited;
      await proxy.close();
      collector.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });

  it('with OTEL_PROPAGATORS=none, follows no caller’s traceparent: its requests start traces of their own', async () => {
    const collector = await startCollector();
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'portico-otlp-'));
    const service = await startServiceProcess(server.databaseUrl, dataDir, '', {
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_PROPAGATORS: 'none',
        // No trace starts here: a caller whose traceparent were followed would have its request recorded.
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0',
      },
    });
    const tracedDir = await fs.mkdtemp(path.join(os.tmpdir(), 'portico-otlp-'));
    const traced = await startServiceProcess(server.databaseUrl, tracedDir, '', {
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'portico-follows',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0',
      },
    });
    try {
      const [ignored, followed] = ['5'.repeat(32), '6'.repeat(32)];
      for (const [url, traceId] of [
        [service.url, ignored],
        [traced.url, followed],
      ] as const) {
        const response = await fetch(`${url}/users?limit=1`, {
          headers: { 'x-api-key': server.apiKey, traceparent: `00-${traceId}-${CALLER_SPAN}-01` },
        });
        expect(response.status).toBe(200);
      }
      for (const process of [service, traced]) {
        process.stop();
        await process.exited;
      }
      // The same request to a server left at the default was recorded: the collector did hear.
      expect(collector.received.filter((span) => span.traceId === followed).map((span) => span.resource['service.name'])).toContain(
        'portico-follows',
      );
      expect(collector.received.filter((span) => span.traceId === ignored)).toEqual([]);
      expect(collector.received.filter((span) => span.resource['service.name'] !== 'portico-follows')).toEqual([]);
    } finally {
      for (const process of [service, traced]) {
        process.stop();
        await process.exited;
      }
      collector.close();
      for (const folder of [dataDir, tracedDir]) await fs.rm(folder, { recursive: true, force: true });
    }
  });

  it('sends spans in batches of the size OTEL_BSP_MAX_EXPORT_BATCH_SIZE sets', async () => {
    const collector = await startCollector();
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'portico-otlp-'));
    const service = await startServiceProcess(server.databaseUrl, dataDir, '', {
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}`,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2',
      },
    });
    try {
      const traceId = '4'.repeat(32);
      const response = await fetch(`${service.url}/users?limit=1`, {
        headers: { 'x-api-key': server.apiKey, traceparent: `00-${traceId}-${CALLER_SPAN}-01` },
      });
      expect(response.status).toBe(200);
      // The stop sends what is still batched.
      service.stop();
      await service.exited;
      // The request's spans (server, operation, root field, statement) are more than one batch holds.
      expect(collector.received.filter((span) => span.traceId === traceId).length).toBeGreaterThan(2);
      expect(Math.max(...collector.batches)).toBe(2);
    } finally {
      service.stop();
      await service.exited;
      collector.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('a webhook delivery', () => {
  it('is a trace of its own, linked to the request that wrote the event, and continued by the receiver', async () => {
    const hookPath = '/traced-hook';
    const endpoint = await rest<{ id: string; secret: string }>(server, 'POST', '/webhook-endpoints', {
      json: { url: `${receiver.url}${hookPath}`, events: ['USER_CREATED'] },
    });
    expect(endpoint.status).toBe(201);
    usedCredential(endpoint.body.secret);
    const traceId = 'd'.repeat(32);
    const created = await rest<{ id: string }>(server, 'POST', '/users', {
      json: { name: 'Hooked', email: 'hooked@example.com' },
      headers: { traceparent: `00-${traceId}-${CALLER_SPAN}-01` },
    });
    expect(created.status).toBe(201);
    const isAttempt = (span: ReadableSpan) =>
      span.name === 'webhook user.created' && span.attributes['portico.webhook.endpoint_id'] === endpoint.body.id;
    await eventually(() => exporter.getFinishedSpans().some(isAttempt), 'the attempt span exported', 10_000);
    const attempt = exporter.getFinishedSpans().find(isAttempt)!;

    expect(attempt.kind).toBe(SpanKind.CLIENT);
    expect(attempt.parentSpanContext).toBeUndefined();
    expect(attempt.spanContext().traceId).not.toBe(traceId);
    expect(attempt.status.code).not.toBe(SpanStatusCode.ERROR);
    expect(attempt.attributes).toMatchObject({ 'http.response.status_code': 200, 'portico.webhook.attempt': 1 });
    // The link names a span of the writing request's trace.
    expect(attempt.links).toHaveLength(1);
    const link = attempt.links[0]!.context;
    expect(link.traceId).toBe(traceId);
    expect(spansOf(traceId).map((span) => span.spanContext().spanId)).toContain(link.spanId);
    // The receiver got the attempt's traceparent.
    const delivered = receiver.received.find(
      (request) => request.path === hookPath && request.headers['x-portico-event-type'] === 'user.created',
    )!;
    expect(delivered.headers.traceparent).toMatch(new RegExp(`^00-${attempt.spanContext().traceId}-${attempt.spanContext().spanId}-01$`));
  });
  it('sends no traceparent to the receiver with OTEL_PROPAGATORS=none, and is still traced and linked', async () => {
    // What startTracing sets from OTEL_PROPAGATORS=none, for this test alone.
    setTraceContextOnTheWire(false);
    try {
      const hookPath = '/untold-hook';
      const endpoint = await rest<{ id: string; secret: string }>(server, 'POST', '/webhook-endpoints', {
        json: { url: `${receiver.url}${hookPath}`, events: ['USER_CREATED'] },
      });
      expect(endpoint.status).toBe(201);
      usedCredential(endpoint.body.secret);
      const created = await rest(server, 'POST', '/users', { json: { name: 'Untold', email: 'untold@example.com' } });
      expect(created.status).toBe(201);
      const isAttempt = (span: ReadableSpan) =>
        span.name === 'webhook user.created' && span.attributes['portico.webhook.endpoint_id'] === endpoint.body.id;
      const isCreation = (request: (typeof receiver.received)[number]) =>
        request.path === hookPath && request.headers['x-portico-event-type'] === 'user.created';
      await eventually(() => receiver.received.some(isCreation), 'the delivery received', 10_000);
      await eventually(() => exporter.getFinishedSpans().some(isAttempt), 'the attempt span exported', 10_000);
      const delivered = receiver.received.find(isCreation)!;
      expect(delivered.headers['x-portico-signature-256']).toBeDefined();
      expect(delivered.headers.traceparent).toBeUndefined();
      // The event still knows the request that wrote it: the attempt links to it.
      expect(exporter.getFinishedSpans().find(isAttempt)!.links).toHaveLength(1);
    } finally {
      setTraceContextOnTheWire(true);
    }
  });
});
