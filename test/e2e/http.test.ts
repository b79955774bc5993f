import http from 'node:http';
import net from 'node:net';
import { gunzipSync } from 'node:zlib';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { match } from '../support/match.ts';
import { eventually } from '../support/steady-load.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe('GraphQL over HTTP', () => {
  it('answers queries sent with GET', async () => {
    const query = encodeURIComponent('{ users(first: 1) { pageInfo { hasNextPage } } }');
    const response = await server.fetch(`/graphql?query=${query}`, { headers: { accept: 'application/graphql-response+json' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/graphql-response+json');
    expect(await response.json()).toEqual({ data: { users: { pageInfo: { hasNextPage: false } } } });
  });

  it('refuses mutations sent with GET', async () => {
    const query = encodeURIComponent('mutation { deleteUser(id: "usr_01jd3x3b8vfb9s1p4t4p6q2k7m") }');
    const response = await server.fetch(`/graphql?query=${query}`, { headers: { accept: 'application/json' } });
    expect([response.status, response.headers.get('allow')]).toEqual([405, 'POST']);
    // Of the kind a method not allowed is, as a PUT to /graphql is.
    const body = (await response.json()) as { errors: { extensions: { type: string } }[] };
    expect(body.errors[0]!.extensions.type).toBe('https://portico.dev/problems/method-not-allowed');
  });

  it('answers malformed JSON and syntax errors with 400 and BAD_USER_INPUT', async () => {
    const broken = await server.fetch(`/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query": ',
    });
    expect(broken.status).toBe(400);
    const syntax = await server.gql('{ users { ');
    expect(syntax.status).toBe(400);
    expect(syntax.body.errors![0]!.extensions.code).toBe('BAD_USER_INPUT');
    const unknownField = await server.gql('{ nope }');
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.errors![0]!.extensions.code).toBe('BAD_USER_INPUT');
  });

  it('uses 200 for request errors when the client accepts only application/json', async () => {
    const response = await server.gql('{ nope }', undefined, { accept: 'application/json' });
    expect(response.status).toBe(200);
    expect(response.body.errors![0]!.extensions.code).toBe('BAD_USER_INPUT');
  });

  it.each([
    // q=0 is "not acceptable" (RFC 9110 §12.5.1), wherever it stands.
    ['application/graphql-response+json;q=0, application/json', 200, 'application/json'],
    // The higher q wins, whatever the order.
    ['application/json;q=0.5, application/graphql-response+json', 400, 'application/graphql-response+json'],
    ['application/graphql-response+json;q=0.2, application/json;q=0.9', 200, 'application/json'],
    ['application/json;q=0, application/graphql-response+json;q=0', 406, 'application/json'],
    ['application/json;Q=0, application/graphql-response+json;Q=0', 406, 'application/json'],
    // A browser's header, and wildcards with weights.
    ['text/html;q=0.9, */*;q=0.8', 200, 'application/json'],
    ['application/graphql-response+json;q=0, */*;q=0.5', 200, 'application/json'],
    // The most specific range that matches a type gives its weight (RFC 9110 §12.5.1), not the highest.
    ['application/json;q=0, */*', 400, 'application/graphql-response+json'],
    ['application/json;q=0, application/*', 400, 'application/graphql-response+json'],
    ['*/*;q=0.9, application/json;q=0.1', 400, 'application/graphql-response+json'],
  ])('answers Accept: %s by its q-values (%i, %s)', async (accept, status, type) => {
    const response = await server.fetch('/graphql', {
      method: 'POST',
      headers: { accept, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ nope }' }),
    });
    expect([response.status, response.headers.get('content-type')?.split(';')[0]]).toEqual([status, type]);
  });

  it('refuses a persisted query sent by its hash alone with the message persisted-query links read as "not supported", and runs one sent with its document', async () => {
    const persistedQuery = { version: 1, sha256Hash: 'ecf4edb46db40b5132295c0291d62fb65d6759a9eedfa4d5d612dd5ec54a6b38' };
    const byHash = await server.fetch(`/graphql?extensions=${encodeURIComponent(JSON.stringify({ persistedQuery }))}`, {
      headers: { accept: 'application/graphql-response+json' },
    });
    const refused = (await byHash.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect([byHash.status, refused.errors[0]?.message, refused.errors[0]?.extensions.code]).toEqual([
      400,
      'PersistedQueryNotSupported',
      'BAD_USER_INPUT',
    ]);
    const withDocument = await server.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }', extensions: { persistedQuery } }),
    });
    expect([withDocument.status, await withDocument.json()]).toEqual([200, { data: { __typename: 'Query' } }]);
  });

  it('writes a refusal before execution in the type Accept prefers, a type given q=0 never', async () => {
    for (const [accept, type] of [
      ['application/graphql-response+json;q=0, application/json', 'application/json'],
      ['application/json;q=0, */*', 'application/graphql-response+json'],
      ['application/graphql-response+json', 'application/graphql-response+json'],
      ['*/*', 'application/json'],
    ]) {
      const response = await fetch(`${server.url}/graphql`, {
        method: 'POST',
        headers: { accept: accept!, 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
      expect([response.status, response.headers.get('content-type')?.split(';')[0]], accept).toEqual([401, type]);
    }
  });
});

describe('caching', () => {
  it("forbids storing any answer to a key (it is that key's), on both faces, found or not; the public assets stay cacheable", async () => {
    // An answer as a stream of events too (GraphQL over SSE), which says no content coding.
    const streamed = server.fetch('/graphql', {
      method: 'POST',
      headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    const answers = await Promise.all([
      server.fetch(`/graphql?query=${encodeURIComponent('{ users(first: 1) { pageInfo { hasNextPage } } }')}`),
      server.gql('{ __typename }').then((response) => response),
      server.fetch('/users'),
      server.fetch('/users/usr_01jd3x3b8vfb9s1p4t4p6q2k7m'),
      server.fetch('/users', { headers: { 'x-api-key': '' } }),
      streamed,
    ]);
    expect(answers.map((answer) => [answer.status, answer.headers.get('cache-control')])).toEqual([
      [200, 'no-store'],
      [200, 'no-store'],
      [200, 'no-store'],
      [404, 'no-store'],
      [401, 'no-store'],
      [200, 'no-store'],
    ]);
    const stream = await streamed;
    expect([stream.headers.get('content-type'), stream.headers.get('content-encoding')]).toEqual(['text/event-stream', null]);
    expect(await stream.text()).toContain('"__typename":"Query"');
    const page = await fetch(`${server.url}/graphql`, { headers: { accept: 'text/html' } });
    const asset = /(?:src|href)="(\/graphiql\/assets\/[^"]+)"/.exec(await page.text())![1]!;
    expect((await fetch(`${server.url}${asset}`)).headers.get('cache-control')).toBe('public, no-cache');
  });

  it.each(['/graphiql/assets/graphiql.js', '/docs/assets/swagger-ui-bundle.js'])(
    'serves %s compressed to a client that takes gzip, with an ETag it revalidates against (304 while unchanged)',
    async (path) => {
      const plain = await fetch(`${server.url}${path}`, { headers: { 'accept-encoding': 'identity' } });
      const plainBytes = Buffer.from(await plain.arrayBuffer());
      const etag = plain.headers.get('etag');
      expect([plain.status, plain.headers.get('content-encoding'), plain.headers.get('vary')]).toEqual([200, null, 'Accept-Encoding']);
      expect(etag).toMatch(/^"[\w-]+"$/);

      // fetch takes gzip and decodes it; the raw bytes are read through node:http.
      const compressed = await new Promise<{ status: number; headers: http.IncomingHttpHeaders; bytes: Buffer }>((resolve, reject) => {
        http
          .get(`${server.url}${path}`, { headers: { 'accept-encoding': 'gzip, deflate, br' } }, (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, bytes: Buffer.concat(chunks) }));
          })
          .on('error', reject);
      });
      // Another representation (RFC 9110 §8.8.3: a strong tag changes with the content coding).
      const gzipTag = compressed.headers.etag;
      expect([compressed.status, compressed.headers['content-encoding']]).toEqual([200, 'gzip']);
      expect(gzipTag).toMatch(/^"[\w-]+"$/);
      expect(gzipTag).not.toBe(etag);
      expect(compressed.bytes.length).toBeLessThan(plainBytes.length / 2);
      expect(gunzipSync(compressed.bytes).equals(plainBytes)).toBe(true);

      // fetch takes gzip: it revalidates the compressed one.
      const revalidated = await fetch(`${server.url}${path}`, { headers: { 'if-none-match': gzipTag! } });
      expect([revalidated.status, (await revalidated.arrayBuffer()).byteLength, revalidated.headers.get('etag')]).toEqual([
        304,
        0,
        gzipTag,
      ]);
      const identity = await fetch(`${server.url}${path}`, { headers: { 'if-none-match': etag!, 'accept-encoding': 'identity' } });
      expect([identity.status, identity.headers.get('etag')]).toEqual([304, etag]);
      // A tag of the other representation is not this one's.
      const crossed = await fetch(`${server.url}${path}`, { headers: { 'if-none-match': etag!, 'accept-encoding': 'gzip' } });
      expect([crossed.status, crossed.headers.get('etag')]).toEqual([200, gzipTag]);
      const other = await fetch(`${server.url}${path}`, { headers: { 'if-none-match': '"another"', 'accept-encoding': 'gzip;q=0' } });
      expect([other.status, other.headers.get('content-encoding')]).toEqual([200, null]);
    },
  );
});

describe('request ids', () => {
  it('echoes a well-formed X-Request-Id and logs the request under it', async () => {
    const response = await fetch(`${server.url}/health`, { headers: { 'x-request-id': 'client-trace.42' } });
    expect(response.headers.get('x-request-id')).toBe('client-trace.42');
    expect(server.logs).toContainEqual(match.objectContaining({ requestId: 'client-trace.42', url: '/health', status: 200 }));
  });

  it('generates one when none or a malformed one is sent', async () => {
    const variants: Record<string, string>[] = [{}, { 'x-request-id': 'bad id with spaces' }, { 'x-request-id': 'x'.repeat(200) }];
    for (const headers of variants) {
      const response = await fetch(`${server.url}/health`, { headers });
      expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});

describe('unexpected errors', () => {
  it('are masked as INTERNAL with no internals, and logged with the request id', async () => {
    const user = await server.gql<{ createUser: { id: string } }>(
      'mutation { createUser(input: { name: "Broken", email: "broken@example.com" }) { id } }',
    );
    const id = user.body.data!.createUser.id;
    await server.orm.em.fork().execute('alter table orders rename to orders_gone');
    try {
      const response = await server.gql('query ($id: ID!) { orders(userId: $id) { id } }', { id }, { 'x-request-id': 'broken-1' });
      expect(response.body.errors).toEqual([
        match.objectContaining({
          message: 'Unexpected error.',
          extensions: { code: 'INTERNAL', type: 'https://portico.dev/problems/internal' },
        }),
      ]);
      expect(JSON.stringify(response.body)).not.toMatch(/orders_gone|relation|select|stack/i);
      const logged = server.logs.find((line) => line.requestId === 'broken-1' && line.level === 50);
      expect(JSON.stringify(logged)).toContain('orders');
    } finally {
      await server.orm.em.fork().execute('alter table orders_gone rename to orders');
    }
  });
});

describe('probes and routes', () => {
  it('GET / answers without a key: the service, its version and where its faces are', async () => {
    const json = await fetch(`${server.url}/`);
    expect([json.status, json.headers.get('content-type')]).toEqual([200, 'application/json; charset=utf-8']);
    expect(await json.json()).toEqual({
      name: 'Portico',
      version: match.any(String),
      links: { graphql: '/graphql', docs: '/docs', openapi: '/openapi.json' },
    });
    const page = await fetch(`${server.url}/`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await page.text();
    for (const link of ['/graphql', '/docs', '/openapi.json']) expect(html).toContain(`href="${link}"`);
    // HEAD: GET's headers, its Content-Length included, and no body.
    for (const accept of ['application/json', 'text/html']) {
      const get = await fetch(`${server.url}/`, { headers: { accept } });
      const head = await fetch(`${server.url}/`, { method: 'HEAD', headers: { accept } });
      expect([head.status, head.headers.get('content-length'), await head.text()], accept).toEqual([
        200,
        String(Buffer.byteLength(await get.text())),
        '',
      ]);
    }
  });

  it('GET /health and /ready answer JSON', async () => {
    const health = await fetch(`${server.url}/health`);
    expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
    const ready = await fetch(`${server.url}/ready`);
    expect([ready.status, await ready.json()]).toEqual([
      200,
      { status: 'ready', database: { available: true, outages: 0 }, rateLimits: { degraded: false, unmeteredRequests: 0 } },
    ]);
  });

  it('answers another method on a probe or a public document with 405 Problem Details naming GET and HEAD (and OPTIONS in Allow)', async () => {
    for (const path of ['/health', '/ready', '/', '/openapi.json', '/docs']) {
      const response = await fetch(`${server.url}${path}`, { method: 'POST' });
      expect([response.status, response.headers.get('allow'), response.headers.get('content-type')]).toEqual([
        405,
        'GET, HEAD, OPTIONS',
        'application/problem+json',
      ]);
      expect(await response.json()).toMatchObject({ type: 'https://portico.dev/problems/method-not-allowed', status: 405, instance: path });
    }
  });

  it('answers a plain OPTIONS with the methods of the path in Allow, and 404 where nothing is', async () => {
    const allowOf = async (path: string) => {
      const response = await fetch(`${server.url}${path}`, { method: 'OPTIONS' });
      // A 204 carries no Content-Length (RFC 9110 §8.6).
      expect(response.headers.get('content-length'), path).toBeNull();
      return [response.status, response.headers.get('allow')];
    };
    expect(await allowOf('/graphql')).toEqual([204, 'GET, POST, OPTIONS']);
    expect(await allowOf('/users')).toEqual([204, 'GET, POST, HEAD, OPTIONS']);
    expect(await allowOf('/users/usr_01jd3x3b8vfb9s1p4t4p6q2k7m')).toEqual([204, 'GET, PUT, PATCH, DELETE, HEAD, OPTIONS']);
    expect(await allowOf('/openapi.json')).toEqual([204, 'GET, HEAD, OPTIONS']);
    expect(await allowOf('/docs')).toEqual([204, 'GET, HEAD, OPTIONS']);
    expect(await allowOf('/health')).toEqual([204, 'GET, HEAD, OPTIONS']);
    // Where PATCH is served, the formats it takes (RFC 5789 §3.1).
    const patchable = await fetch(`${server.url}/users/usr_01jd3x3b8vfb9s1p4t4p6q2k7m`, { method: 'OPTIONS' });
    expect(patchable.headers.get('accept-patch')).toBe('application/merge-patch+json, application/json');
    expect((await fetch(`${server.url}/users`, { method: 'OPTIONS' })).headers.get('accept-patch')).toBeNull();
    const nowhere = await fetch(`${server.url}/nope`, { method: 'OPTIONS' });
    expect(nowhere.status).toBe(404);
    expect(await nowhere.json()).toMatchObject({ type: 'https://portico.dev/problems/not-found', instance: '/nope' });
  });

  it('answers an unknown path with 404, and leaves paths that merely end in /health to their routes', async () => {
    expect((await server.fetch(`/nowhere`)).status).toBe(404);
    // GET /users/{user_id} with a malformed id, not a health probe.
    expect((await server.fetch(`/users/health`)).status).toBe(400);
  });

  it('reports not ready once the database is gone', async () => {
    const doomed = await startTestServer();
    try {
      await doomed.orm.close(true);
      const ready = await fetch(`${doomed.url}/ready`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toEqual({
        status: 'unavailable',
        reason: 'database unreachable',
        database: { available: true, outages: 0 },
        rateLimits: { degraded: false, unmeteredRequests: 0 },
      });
      expect((await fetch(`${doomed.url}/health`)).status).toBe(200);
    } finally {
      await doomed.close().catch(() => undefined);
    }
  });
});

describe('shutting down', () => {
  it('drains a client that keeps sending on a kept-alive connection: each request answered, the connection closed after the last', async () => {
    // A grace longer than the test: reaching it would mean the drain waited on the client.
    const stopping = await startTestServer({ shutdownGraceMs: 120_000 });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const get = () =>
      new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
        const request = http.get(`${stopping.url}/users?limit=1`, { agent, headers: { 'x-api-key': stopping.apiKey } }, (response) => {
          response.resume();
          response.on('end', () => resolve({ status: response.statusCode!, connection: response.headers.connection }));
          response.on('error', reject);
        });
        request.on('error', reject);
      });
    try {
      for (let i = 0; i < 5; i++) expect((await get()).status).toBe(200);
      const closed = stopping.close();
      const answers: { status: number; connection: string | undefined }[] = [];
      // Back to back, as a busy client sends them: none may be cut, and the server says when it is the last.
      while (answers.at(-1)?.connection !== 'close') answers.push(await get());
      expect(answers.every((answer) => answer.status === 200)).toBe(true);
      await closed;
      expect(stopping.logs.filter((line) => String(line.msg).includes('after the grace period'))).toEqual([]);
    } finally {
      agent.destroy();
    }
  });

  it.each([
    ['REST', '/users', '{"name":"Drained","email":"drained-rest@example.com"}'],
    [
      'GraphQL',
      '/graphql',
      '{"query":"mutation { createUser(input: { name: \\"Drained\\", email: \\"drained-gql@example.com\\" }) { id } }"}',
    ],
  ])('says Connection: close on a %s write with an Idempotency-Key answered while it shuts down', async (_face, path, body) => {
    const stopping = await startTestServer({
      shutdownGraceMs: 120_000,
      metrics: { port: undefined, token: 'metrics-token-that-is-long-enough-0123456789' },
    });
    const { port } = new URL(stopping.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let received = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    // Under way when the shutdown begins: its body is still arriving.
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: x\r\nx-api-key: ${stopping.apiKey}\r\ncontent-type: application/json\r\n` +
        `idempotency-key: drained-${path}\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );
    await eventually(
      () => stopping.metrics.httpInFlight.get().then((value) => value.values[0]?.value === 1),
      'the request to be under way',
      5_000,
    );
    const closed = stopping.close();
    socket.write(body.slice(10));
    await eventually(() => /\r\n\r\n/.test(received), 'the answer', 10_000);
    await closed;
    socket.destroy();
    const head = received.split('\r\n\r\n')[0]!.toLowerCase();
    expect(head).toMatch(/^http\/1\.1 20[01] /);
    expect(head).toContain('\r\nconnection: close');
    expect(head).not.toContain('keep-alive');
  });

  it('logs a request its client abandoned in the middle of its body once, as abandoned', async () => {
    const { port } = new URL(server.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.on('error', () => {});
    const marker = `abandoned-${Date.now()}`;
    const before = server.logs.length;
    socket.write(
      `POST /users?${marker} HTTP/1.1\r\nHost: x\r\nx-api-key: ${server.apiKey}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"name":`,
    );
    socket.end();
    await eventually(() => server.logs.slice(before).some((line) => String(line.url).includes(marker)), 'the request to be logged', 5_000);
    const lines = server.logs.slice(before).filter((line) => line.msg === 'request');
    expect(lines).toEqual([expect.objectContaining({ status: null, clientClosed: true })]);
  });

  it('logs and counts a request cut at the end of the grace as unanswered, never as a 200', async () => {
    const stopping = await startTestServer({
      shutdownGraceMs: 200,
      metrics: { port: undefined, token: 'metrics-token-that-is-long-enough-0123456789' },
    });
    const { port } = new URL(stopping.url);
    // A body that never finishes arriving: the request runs until the grace ends.
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.on('error', () => {});
    socket.write(
      `POST /graphql HTTP/1.1\r\nHost: x\r\nx-api-key: ${stopping.apiKey}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"query":`,
    );
    await eventually(
      () => stopping.metrics.httpInFlight.get().then((value) => value.values[0]?.value === 1),
      'the request to be under way',
      5_000,
    );
    await stopping.close();
    socket.destroy();
    const line = stopping.logs.find((entry) => entry.msg === 'request' && entry.method === 'POST');
    expect(line).toMatchObject({ status: null, cutAtShutdown: true });
    const exposition = await stopping.metrics.exposition();
    expect(exposition.body).toMatch(/portico_http_requests_total\{[^}]*status_class="none"[^}]*\} 1/);
  });
});

describe('GraphiQL', () => {
  it('is served to browsers with every asset from this service', async () => {
    const page = await fetch(`${server.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    // No other site may show it in a frame, to have its visitors click in it (as with /docs).
    expect(page.headers.get('content-security-policy')).toBe("frame-ancestors 'none'");
    const html = await page.text();
    expect(html).toContain('renderYogaGraphiQL');
    expect(html).not.toMatch(/(src|href)=["']?(https?:)?\/\//);
    // Everything the page loads is either inline (data: URLs) or served here.
    const assets = [...html.matchAll(/(?:src|href)="(?!data:)([^"]+)"/g), ...html.matchAll(/'(\/graphiql\/assets\/[^']+)'/g)].map(
      (m) => m[1]!,
    );
    expect(assets.length).toBeGreaterThanOrEqual(5);
    for (const asset of assets) {
      const response = await fetch(`${server.url}${asset}`);
      expect(response.status, asset).toBe(200);
      expect(response.headers.get('content-type'), asset).toMatch(/javascript|css/);
      await response.arrayBuffer();
    }
  });

  it('is off when configured off (the production default)', async () => {
    const production = await startTestServer({ graphiql: false });
    try {
      const page = await fetch(`${production.url}/graphql`, { headers: { accept: 'text/html' } });
      expect(await page.text()).not.toContain('renderYogaGraphiQL');
    } finally {
      await production.close();
    }
  });
});

describe('request bounds', () => {
  it('refuses a GraphQL body over 64 KiB with 413 before parsing it', async () => {
    const query = `{ users(first: 1) { pageInfo { hasNextPage } } } # ${'x'.repeat(70_000)}`;
    const response = await server.gql(query);
    expect(response.status).toBe(413);
    expect(response.body.errors![0]!.extensions).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      type: 'https://portico.dev/problems/payload-too-large',
    });
  });

  it('refuses batched GraphQL requests: one operation per request, so every limit applies to it', async () => {
    const response = await server.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify([{ query: '{ __typename }' }, { query: '{ __typename }' }]),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      errors: [
        {
          message: 'Batching is not supported.',
          extensions: { code: 'BAD_USER_INPUT', type: 'https://portico.dev/problems/invalid-input' },
        },
      ],
    });
  });

  it('refuses a long string argument as invalid input, not a slow insert', async () => {
    const response = await server.gql(
      'mutation ($name: String!) { createUser(input: { name: $name, email: "long@example.com" }) { id } }',
      {
        name: 'x'.repeat(60_000),
      },
    );
    expect(response.body.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', errors: [{ field: 'name' }] });
  });
});

describe('connections per client', () => {
  /** A connection that sends nothing yet; `closed` settles when the server closes it. */
  const openIdle = (url: string) =>
    new Promise<{ socket: net.Socket; closed: Promise<void> }>((resolve, reject) => {
      const { hostname, port } = new URL(url);
      const socket = net.connect(Number(port), hostname);
      const closed = new Promise<void>((done) => socket.once('close', () => done()));
      socket.once('connect', () => resolve({ socket, closed }));
      socket.once('error', reject);
    });
  /** A request on `socket`, and the status line of its answer. */
  const statusOn = (socket: net.Socket) =>
    new Promise<string>((resolve) => {
      socket.once('data', (data: Buffer) => resolve(data.toString('latin1').split('\r\n')[0]!));
      socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
    });

  it('keeps an idle connection open between requests for KEEP_ALIVE_TIMEOUT_MS (65 s), longer than balancers keep theirs, and says so', async () => {
    const { socket } = await openIdle(server.url);
    try {
      const head = await new Promise<string>((resolve) => {
        socket.once('data', (data: Buffer) => resolve(data.toString('latin1').split('\r\n\r\n')[0]!));
        socket.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
      });
      expect(head.toLowerCase()).toContain('keep-alive: timeout=65');
    } finally {
      socket.destroy();
    }
  });

  it('holds one client to MAX_CONNECTIONS_PER_CLIENT open at once: the next is closed at once, the first still served, and a freed place taken again', async () => {
    const limited = await startTestServer({ maxConnectionsPerClient: 3 });
    const sockets: net.Socket[] = [];
    try {
      const held = [await openIdle(limited.url), await openIdle(limited.url), await openIdle(limited.url)];
      sockets.push(...held.map((connection) => connection.socket));
      const refused = await openIdle(limited.url);
      sockets.push(refused.socket);
      await refused.closed;
      expect(await statusOn(held[0]!.socket)).toBe('HTTP/1.1 200 OK');
      held[1]!.socket.destroy();
      await held[1]!.closed;
      // The place is free once the server has seen the close too: polled.
      let status = '';
      await eventually(
        async () => {
          const next = await openIdle(limited.url);
          sockets.push(next.socket);
          status = await Promise.race([statusOn(next.socket), next.closed.then(() => 'closed')]);
          return status !== 'closed';
        },
        'a freed place taken again',
        10_000,
      );
      expect(status).toBe('HTTP/1.1 200 OK');
      expect(limited.logs).toContainEqual(
        match.objectContaining({ msg: 'connection refused: the client holds MAX_CONNECTIONS_PER_CLIENT open', limit: 3 }),
      );
    } finally {
      for (const socket of sockets) socket.destroy();
      await limited.close();
    }
  });
});

describe('URL bound', () => {
  it('refuses a URL over 8 KiB with 414 on both faces, and takes one at the limit', async () => {
    const query = `{ users(first: 1) { pageInfo { hasNextPage } } }`;
    const padded = (length: number) => `/graphql?query=${encodeURIComponent(query)}&x=`.padEnd(length, 'x');
    const long = await server.fetch(padded(8 * 1024 + 1), { headers: { accept: 'application/graphql-response+json' } });
    expect(long.status).toBe(414);
    expect(((await long.json()) as { errors: { message: string; extensions: object }[] }).errors[0]).toEqual({
      message: 'The URL must be at most 8192 characters (it has 8193); send the document in a POST body instead.',
      extensions: { code: 'BAD_USER_INPUT', type: 'https://portico.dev/problems/uri-too-long' },
    });

    const rest = await server.fetch(`/users?cursor=${'x'.repeat(9000)}`);
    expect(rest.status).toBe(414);
    expect(await rest.json()).toMatchObject({ type: 'https://portico.dev/problems/uri-too-long', status: 414, instance: '/users' });

    // At the limit the request is served (yoga ignores the extra parameter).
    const atLimit = await server.fetch(padded(8 * 1024), { headers: { accept: 'application/graphql-response+json' } });
    expect(atLimit.status).toBe(200);
  });
});

describe('CORS', () => {
  it('lets only the configured origins call from a browser, and shows them the rate limit fields', async () => {
    const cors = await startTestServer({ corsOrigins: ['https://app.example.com'] });
    try {
      const preflight = await fetch(`${cors.url}/users`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://app.example.com',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'x-api-key',
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('content-length')).toBeNull();
      expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      expect(preflight.headers.get('access-control-allow-headers')).toContain('x-api-key');
      // A browser app may retry its writes safely, and see that an answer was a replay.
      expect(preflight.headers.get('access-control-allow-headers')).toContain('idempotency-key');
      expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
      // A browser app's traces continue here; it can read which credential a 401 asks for.
      const traced = await fetch(`${cors.url}/graphql`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://app.example.com',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'traceparent, tracestate',
        },
      });
      expect(traced.headers.get('access-control-allow-headers')).toMatch(/traceparent.*tracestate/);

      const allowed = await cors.fetch('/users', { headers: { origin: 'https://app.example.com' } });
      expect(allowed.status).toBe(200);
      expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      expect(allowed.headers.get('access-control-expose-headers')).toContain('ratelimit');
      expect(allowed.headers.get('access-control-expose-headers')).toContain('idempotent-replayed');
      expect(allowed.headers.get('access-control-expose-headers')).toContain('www-authenticate');

      const head = await fetch(`${cors.url}/graphiql/assets/graphiql.css`, { method: 'HEAD' });
      expect([head.status, head.headers.get('content-type')?.split(';')[0], await head.text()]).toEqual([200, 'text/css', '']);

      // A cacheable answer says it varies by Origin, whether it was asked with one or not.
      for (const origin of ['https://app.example.com', 'https://evil.example', undefined]) {
        const asset = await fetch(`${cors.url}/graphiql/assets/graphiql.css`, { headers: origin ? { origin } : {} });
        expect([asset.status, asset.headers.get('cache-control'), asset.headers.get('vary')], origin).toEqual([
          200,
          'public, no-cache',
          'Accept-Encoding, Origin',
        ]);
      }

      const other = await cors.fetch('/users', { headers: { origin: 'https://evil.example' } });
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
      // With no CORS_ORIGINS, no origin is allowed.
      const none = await server.fetch('/users', { headers: { origin: 'https://app.example.com' } });
      expect(none.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await cors.close();
    }
  });
});

describe('CSRF prevention', () => {
  it('refuses a GraphQL GET that a cross-site page could send (key in the URL, no custom header)', async () => {
    const query = encodeURIComponent('{ users(first: 1) { pageInfo { hasNextPage } } }');
    const simple = await fetch(`${server.url}/graphql?query=${query}&api_key=${server.apiKey}`, {
      headers: { accept: 'application/json' },
    });
    expect(simple.status).toBe(403);
    expect(((await simple.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('FORBIDDEN');
    const withHeader = await server.fetch(`/graphql?query=${query}`, { headers: { accept: 'application/json' } });
    expect(withHeader.status).toBe(200);
  });
});

describe('statement timeout', () => {
  it('answers 503 when a statement runs past the timeout, and the connection serves the next request', async () => {
    const slow = await startTestServer({ statementTimeoutMs: 300 });
    const blocker = new pg.Client({ connectionString: slow.orm.config.get('clientUrl') });
    await blocker.connect();
    try {
      // Another session holds the table, so the service's read waits until its timeout cancels it.
      await blocker.query('begin');
      await blocker.query('lock table users in access exclusive mode');
      const rest = await slow.fetch('/users');
      expect(rest.status).toBe(503);
      expect(await rest.json()).toMatchObject({ type: 'https://portico.dev/problems/timeout', status: 503 });
      const gql = await slow.gql('{ users(first: 1) { pageInfo { hasNextPage } } }');
      expect(gql.status).toBe(503);
      expect(gql.body.errors![0]!.extensions.code).toBe('TIMEOUT');
      await blocker.query('rollback');
      expect((await slow.fetch('/users')).status).toBe(200);
    } finally {
      await blocker.end();
      await slow.close();
    }
  });
});
