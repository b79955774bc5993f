// Bytes a well-behaved client never sends: NUL characters and lone surrogates in text, JSON nested
// past any sensible depth, prototype names as fields, oversized headers, slow headers, a body in a
// media type GraphQL does not take, and clients that hang up mid-request. Each is a 4xx with
// Problem Details (or a coded GraphQL error), never a 500, never a stack trace, and nothing is stored.
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { match } from '../support/match.ts';
import { expectProblem, rest, type User } from '../support/rest.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
let user: User;

beforeAll(async () => {
  server = await startTestServer({ requestTimeoutMs: 1500 });
  user = (await rest<User>(server, 'POST', '/users', { json: { name: 'Ada', email: 'ada@example.com' } })).body;
});
afterAll(() => server.close());

const NO_INTERNALS = /\bat .*\(.*:\d+:\d+\)|\.ts:\d+|node_modules|\/src\/|RangeError|\[object Object\]|native code/;

async function userCount(): Promise<number> {
  return (await rest<{ pagination: { total: number } }>(server, 'GET', '/users?page=1')).body.pagination.total;
}

/** Writes raw bytes on a new connection and collects what comes back until the server closes it. */
function raw(request: string | Buffer, { end = true }: { end?: boolean } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const { port } = new URL(server.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
    socket.write(request);
    if (end) socket.end();
  });
}

function parseRaw(response: string): { status: number; headers: Record<string, string>; body: string } {
  const [head = '', ...rest] = response.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') };
}

describe('text that PostgreSQL cannot store, or that is not text', () => {
  const hostile = [
    ['a NUL byte', 'a\u0000b', 'must not contain control characters'],
    ['a lone surrogate', 'x\ud800y', 'must be well-formed Unicode text'],
  ] as const;

  it.each(hostile)('refuses %s in a name or email on POST, PUT and PATCH with 400 naming the field', async (_, text, message) => {
    const before = await userCount();
    for (const [method, path, json, field] of [
      ['POST', '/users', { name: text, email: 'nul@example.com' }, 'name'],
      ['POST', '/users', { name: 'Nul', email: `nul${text}@example.com` }, 'email'],
      ['PUT', `/users/${user.id}`, { name: text, email: 'ada@example.com' }, 'name'],
      ['PATCH', `/users/${user.id}`, { name: text }, 'name'],
      ['PATCH', `/users/${user.id}`, { email: `ada${text}@example.com` }, 'email'],
    ] as const) {
      const response = await rest(server, method, path, { json });
      const problem = expectProblem(response, 400, 'invalid-input', path);
      expect(problem.errors).toEqual([{ field, message: match.stringContaining(message) }]);
    }
    expect(await userCount()).toBe(before);
    const stored = await rest<User>(server, 'GET', `/users/${user.id}`);
    expect(stored.body).toMatchObject({ name: 'Ada', email: 'ada@example.com' });
  });

  it.each(hostile)('refuses %s in createUser over GraphQL with BAD_USER_INPUT naming the field', async (_, text, message) => {
    const response = await server.gql('mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }', {
      input: { name: text, email: 'gql-nul@example.com' },
    });
    expect(response.status).toBe(200);
    expect(response.body.errors![0]!.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      errors: [{ field: 'name', message: match.stringContaining(message) }],
    });
  });
});

describe('bodies that are not what they claim', () => {
  it('refuses bytes that are not UTF-8 with 400, rather than storing replacement characters', async () => {
    const body = Buffer.concat([Buffer.from('{"name": "Bad '), Buffer.from([0xff, 0xfe]), Buffer.from('", "email": "utf@example.com"}')]);
    const response = await server.fetch('/users', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const problem = expectProblem(
      { status: response.status, headers: response.headers, text: '', body: await response.json() },
      400,
      'invalid-input',
      '/users',
    );
    expect(problem.errors).toEqual([{ field: 'body', message: 'is not valid UTF-8' }]);
  });

  describe('a GraphQL body that is not UTF-8 is refused with 400, and nothing is written', () => {
    // The name's X becomes a lone 0xE9 (é in Latin-1), which decoding would turn into U+FFFD.
    const mutation = (email: string) => `mutation { createUser(input: { name: "Bad X", email: "${email}" }) { id name } }`;
    const latin1 = (text: string) => {
      const [before, after] = text.split('X');
      return Buffer.concat([Buffer.from(before!), Buffer.from([0xe9]), Buffer.from(after!)]);
    };
    it.for([
      ['application/json', (email: string) => latin1(JSON.stringify({ query: mutation(email) })), 'POST body is not valid UTF-8.'],
      ['application/graphql', (email: string) => latin1(mutation(email)), 'POST body is not valid UTF-8.'],
      [
        'application/x-www-form-urlencoded',
        (email: string) => Buffer.from(`query=${encodeURIComponent(mutation(email)).replace('X', '%E9')}`),
        'POST body holds a percent-escape that is not UTF-8.',
      ],
    ] as const)('sent as %s', async ([contentType, body, message]) => {
      const email = `utf-${contentType.replace(/\W/g, '-')}@example.com`;
      const response = await server.fetch('/graphql', {
        method: 'POST',
        headers: { 'content-type': contentType, accept: 'application/graphql-response+json' },
        body: body(email),
      });
      expect(response.status).toBe(400);
      const answer = (await response.json()) as { data?: unknown; errors: { message: string; extensions: { code: string } }[] };
      expect(answer.data).toBeUndefined();
      expect(answer.errors).toEqual([match.objectContaining({ message, extensions: match.objectContaining({ code: 'BAD_USER_INPUT' }) })]);
      const [row] = await server.orm.em.fork().execute<{ n: number }[]>('select count(*)::int as n from users where email = ?', [email]);
      expect(row!.n).toBe(0);
    });
  });

  it('answers a streamed body over 64 KiB (no Content-Length) with 413, not a dropped connection', async () => {
    const response = parseRaw(
      await raw(
        `POST /users/${user.id}/orders HTTP/1.1\r\nHost: x\r\nx-api-key: ${server.apiKey}\r\n` +
          `content-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n` +
          `10001\r\n${'x'.repeat(65_537)}\r\n0\r\n\r\n`,
        // The server closes the connection after answering (connection: close).
        { end: false },
      ),
    );
    expect(response.status).toBe(413);
    expect(response.headers['content-type']).toBe('application/problem+json');
  });

  it('names a path parameter with a malformed percent-escape', async () => {
    const problem = expectProblem(await rest(server, 'GET', '/users/%ZZ'), 400, 'invalid-input', '/users/%ZZ');
    expect(problem.errors).toEqual([{ field: 'user_id', message: 'holds a malformed percent-escape; encode % as %25' }]);
  });
});

describe('numbers with more digits than a double holds', () => {
  const READ_AS_WRITTEN = /, which cannot be read exactly \(it would be \d+\): send whole numbers without a fraction/;
  const ordersOf = async () =>
    (await server.orm.em.fork().execute<{ n: number }[]>('select count(*)::int as n from orders where user_id = ?', [user.id]))[0]!.n;

  it('are refused in a REST body, naming the field, rather than stored as a whole number never sent', async () => {
    const before = await ordersOf();
    for (const total of ['2147483646.9999999999', '1.0000000000000000001', '9007199254740993']) {
      const response = await server.fetch(`/users/${user.id}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': `digits-${total}` },
        body: `{"total": ${total}}`,
      });
      const problem = expectProblem(
        { status: response.status, headers: response.headers, text: '', body: await response.json() },
        400,
        'invalid-input',
        `/users/${user.id}/orders`,
      );
      expect(problem.errors).toEqual([{ field: 'total', message: match.stringMatching(new RegExp(`^is ${total.replace('.', '\\.')}`)) }]);
      expect(problem.errors![0]!.message).toMatch(READ_AS_WRITTEN);
    }
    // Written exactly, with a fraction of zeros or an exponent, they are whole numbers like any other.
    const exact = await server.fetch(`/users/${user.id}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': `digits-exact-${Date.now()}` },
      body: '{"total": 15.0e1}',
    });
    expect([exact.status, ((await exact.json()) as { total: number }).total]).toEqual([201, 150]);
    expect(await ordersOf()).toBe(before + 1);
  });

  it('are refused in GraphQL variables, sent in a POST body or a GET parameter, before anything runs', async () => {
    const before = await ordersOf();
    const mutation = 'mutation ($input: CreateOrderInput!) { createOrder(input: $input) { id total } }';
    const posted = await server.fetch('/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json',
        'idempotency-key': `digits-${Date.now()}`,
      },
      body: `{"query": ${JSON.stringify(mutation)}, "variables": {"input": {"userId": "${user.id}", "total": 1.0000000000000000001}}}`,
    });
    const answer = (await posted.json()) as {
      data?: unknown;
      errors: { message: string; extensions: { code: string; errors?: { field: string; message: string }[] } }[];
    };
    expect([posted.status, answer.data, answer.errors.map((error) => error.extensions.code)]).toEqual([400, undefined, ['BAD_USER_INPUT']]);
    expect(answer.errors[0]!.message).toMatch(/^The body holds 1\.0000000000000000001, which cannot be read exactly \(it would be 1\)/);
    // Named where it sits in the variables, as a value its type refuses is, for a form to show it by its field.
    expect(answer.errors[0]!.extensions.errors).toEqual([{ field: 'input.total', message: match.stringMatching(READ_AS_WRITTEN) }]);
    expect(await ordersOf()).toBe(before);

    const variables = encodeURIComponent('{"first": 20.0000000000000001}');
    const query = encodeURIComponent('query ($first: Int) { users(first: $first) { edges { node { id } } } }');
    const read = await server.fetch(`/graphql?query=${query}&variables=${variables}`, { headers: { accept: 'application/json' } });
    const refused = (await read.json()) as {
      errors: { message: string; extensions: { code: string; errors?: { field: string; message: string }[] } }[];
    };
    expect([read.status, refused.errors.map((error) => error.extensions.code)]).toEqual([400, ['BAD_USER_INPUT']]);
    expect(refused.errors[0]!.message).toMatch(/^The variables query parameter holds 20\.0000000000000001, which cannot be read exactly/);
    expect(refused.errors[0]!.extensions.errors).toEqual([{ field: 'first', message: match.stringMatching(READ_AS_WRITTEN) }]);

    // In a list, by its index; outside the variables, no field is named.
    const listed = await server.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: `{"query": "query ($ids: [ID!]!) { nodes(ids: $ids) { id } }", "variables": {"ids": ["${user.id}", 2.00000000000000001]}}`,
    });
    const inList = (await listed.json()) as typeof refused;
    expect(inList.errors[0]!.extensions.errors).toEqual([{ field: 'ids[1]', message: match.stringMatching(READ_AS_WRITTEN) }]);
    const outside = await server.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: '{"query": "{ __typename }", "extensions": {"n": 1e-400}}',
    });
    const notVariables = (await outside.json()) as typeof refused;
    expect([outside.status, notVariables.errors[0]!.extensions.errors]).toEqual([400, undefined]);
  });
});

describe('deeply nested JSON', () => {
  const deep = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  it.each([
    ['as a field value', `{"name": ${deep(30_000)}, "email": "deep@example.com"}`],
    ['as the whole body', deep(30_000)],
    ['in objects', `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`],
  ])('is refused %s with 400 Problem Details', async (_, body) => {
    expect(body.length).toBeLessThan(64 * 1024);
    const response = await rest(server, 'POST', '/users', { body });
    const problem = expectProblem(response, 400, 'invalid-input', '/users');
    expect(problem.detail).toMatch(/nested/);
    expect(response.text).not.toMatch(NO_INTERNALS);
  });

  it('is refused in GraphQL variables with BAD_USER_INPUT', async () => {
    const response = await server.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: `{"query": "mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }", "variables": {"input": {"name": ${deep(30_000)}, "email": "x@example.com"}}}`,
    });
    const text = await response.text();
    expect(response.status).toBe(400);
    expect(text).not.toMatch(NO_INTERNALS);
    expect((JSON.parse(text) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('BAD_USER_INPUT');
  });
});

describe('a member given twice in one JSON object', () => {
  it.each([
    ['as written', '{"name": "First", "name": "Second", "email": "twice@example.com"}', 'name'],
    ['once escaped', '{"name": "First", "n\\u0061me": "Second", "email": "twice@example.com"}', 'name'],
    ['nested in a value', '{"name": "Nested", "email": "nested@example.com", "x": {"a": 1, "a": 2}}', 'a'],
  ])('is refused %s, naming it, rather than one of its values silently applied', async (_, body, field) => {
    const response = await rest(server, 'POST', '/users', { body });
    const problem = expectProblem(response, 400, 'invalid-input', '/users');
    expect(problem.errors).toContainEqual({ field, message: 'must be given once' });
  });

  it('is no repetition across objects, or in a string', async () => {
    const user = (await rest<{ id: string }>(server, 'POST', '/users', { json: { name: 'Once', email: 'once@example.com' } })).body;
    const patched = await rest(server, 'PATCH', `/users/${user.id}`, {
      body: '{"name": "\\"name\\": \\"x\\""}',
      contentType: 'application/merge-patch+json',
    });
    expect(patched.status).toBe(200);
  });
});

describe('field names that are also JavaScript names', () => {
  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'prototype'])(
    'reports %s as sent, as a field that cannot be set',
    async (name) => {
      const body = `{"name": "Proto", "email": "proto@example.com", "${name}": {}}`;
      const response = await rest(server, 'POST', '/users', { body });
      const problem = expectProblem(response, 400, 'invalid-input', '/users');
      expect(problem.errors).toEqual([{ field: name, message: 'is not a field that can be set' }]);
      expect(response.text).not.toMatch(NO_INTERNALS);
    },
  );

  it('reports them as query parameters too', async () => {
    for (const name of ['__proto__', 'constructor']) {
      const problem = expectProblem(await rest(server, 'GET', `/users?${name}=1`), 400, 'invalid-input', '/users');
      expect(problem.errors).toEqual([{ field: name, message: 'is not a parameter of this operation' }]);
    }
  });
});

describe('request targets', () => {
  it('answers OPTIONS * (the server as a whole) with 204 and every method it serves, without a key', async () => {
    const response = parseRaw(await raw('OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    expect([response.status, response.headers.allow, response.body]).toEqual([204, 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS', '']);
    // Any other method with an asterisk is still no path.
    expect(parseRaw(await raw('GET * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')).status).toBe(400);
  });

  it('routes a path whose unreserved characters are escaped as the same path (RFC 3986 §6.2.2.2)', async () => {
    const plain = await server.fetch('/users?limit=1');
    const escaped = await server.fetch('/%75sers?limit=1');
    expect([escaped.status, await escaped.json()]).toEqual([plain.status, await plain.json()]);
    // A reserved character escaped stays escaped: `%2F` is not a path separator.
    expect((await server.fetch('/users%2Fx')).status).toBe(404);
  });
});

describe('requests Node refuses before the service sees them', () => {
  it('answers headers over the size limit with 431 Problem Details', async () => {
    const response = parseRaw(
      await raw(`GET /users HTTP/1.1\r\nHost: x\r\nx-api-key: ${server.apiKey}\r\nx-filler: ${'a'.repeat(20_000)}\r\n\r\n`),
    );
    expect(response.status).toBe(431);
    expect(response.headers['content-type']).toBe('application/problem+json');
    expect(Date.parse(response.headers.date ?? '')).not.toBeNaN();
    expect(JSON.parse(response.body)).toMatchObject({
      type: 'https://portico.dev/problems/request-header-fields-too-large',
      status: 431,
    });
    // Logged like every request, though it has no method or path that could be read.
    expect(server.logs).toContainEqual(match.objectContaining({ msg: 'request', status: 431, refusedBy: 'http-parser' }));
  });

  it('answers a URL over the size limit with a Problem Details status, not an empty body', async () => {
    const response = parseRaw(await raw(`GET /users?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`));
    expect([414, 431]).toContain(response.status);
    expect(response.headers['content-type']).toBe('application/problem+json');
    expect((JSON.parse(response.body) as { status: number }).status).toBe(response.status);
  });

  it('answers a malformed request line with 400 Problem Details', async () => {
    const response = parseRaw(await raw('GARBAGE\r\n\r\n'));
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toBe('application/problem+json');
    // Like every answer: stored by no cache.
    expect(response.headers['cache-control']).toBe('no-store');
  });

  it('answers CONNECT, and a method no one has heard of, with 400 Problem Details saying which methods are served', async () => {
    for (const request of [
      'CONNECT /users HTTP/1.1\r\nHost: x\r\n\r\n',
      'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
      'FOO /users HTTP/1.1\r\nHost: x\r\n\r\n',
    ]) {
      const response = parseRaw(await raw(request, { end: false }));
      expect([response.status, response.headers['content-type'], response.headers.connection], request).toEqual([
        400,
        'application/problem+json',
        'close',
      ]);
      expect(JSON.parse(response.body)).toMatchObject({
        type: 'https://portico.dev/problems/invalid-input',
        status: 400,
        detail: match.stringContaining('GET, HEAD, POST, PUT, PATCH, DELETE and OPTIONS'),
      });
    }
  });

  it('cuts slow request headers at the request deadline, with 408 Problem Details', async () => {
    // Headers that never finish: without a bound the connection would stay open for Node's 30 s
    // check interval or longer; the test's own timeout (30 s) is the bound on this wait.
    const response = parseRaw(await raw(`GET /users HTTP/1.1\r\nHost: x\r\nx-api-key: ${server.apiKey}\r\n`, { end: false }));
    expect(response.status).toBe(408);
    expect(response.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(response.body)).toMatchObject({ type: 'https://portico.dev/problems/request-timeout', status: 408 });
  }, 8000);

  it('cuts a body that stops arriving at the request deadline with 408 too, and closes the connection', async () => {
    // The rest of the body never comes; the server must not wait for it, nor call it its own delay.
    const response = parseRaw(
      await raw(
        `POST /users HTTP/1.1\r\nHost: x\r\nx-api-key: ${server.apiKey}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"name":`,
        { end: false },
      ),
    );
    expect(response.status).toBe(408);
    expect(response.headers.connection).toBe('close');
    expect(JSON.parse(response.body)).toMatchObject({ type: 'https://portico.dev/problems/request-timeout', status: 408 });
  }, 8000);
});

describe('the request target and Host', () => {
  const create = (target: string, host: string) => {
    const body = JSON.stringify({ name: 'Hosted', email: 'hosted@example.com' });
    return raw(
      `POST ${target} HTTP/1.1\r\nHost: ${host}\r\nx-api-key: ${server.apiKey}\r\ncontent-type: application/json\r\n` +
        `content-length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      { end: false },
    );
  };

  it('routes by the request line alone: a Host holding a path is refused with 400 and runs nothing', async () => {
    const before = await userCount();
    for (const host of ['a/users#', 'a/users?limit=1#', 'a b', '[::1', 'a:99999', 'a@b']) {
      const response = parseRaw(await create('/openapi.json', host));
      expect([host, response.status]).toEqual([host, 400]);
      expect(response.headers['content-type']).toBe('application/problem+json');
      const problem = JSON.parse(response.body) as { type: string; detail: string };
      expect(problem.type).toBe('https://portico.dev/problems/invalid-input');
      expect(problem.detail).toMatch(/Host/);
      expect(response.body).not.toMatch(NO_INTERNALS);
    }
    expect(await userCount()).toBe(before);
  });

  it('refuses a request with two Host headers, or none, with 400 Problem Details', async () => {
    for (const head of [`GET /users HTTP/1.1\r\nHost: a\r\nHost: b\r\n`, `GET /users HTTP/1.1\r\n`]) {
      const response = parseRaw(await raw(`${head}x-api-key: ${server.apiKey}\r\nConnection: close\r\n\r\n`, { end: false }));
      expect(response.status).toBe(400);
      expect(JSON.parse(response.body)).toMatchObject({
        type: 'https://portico.dev/problems/invalid-input',
        detail: match.stringMatching(/Host/),
      });
    }
  });

  it('takes a request target in absolute form as its path (RFC 9112 §3.2.2), and hosts with ports or IPv6', async () => {
    const response = parseRaw(
      await raw(`GET http://other.example/users?limit=1 HTTP/1.1\r\nHost: x\r\nx-api-key: ${server.apiKey}\r\nConnection: close\r\n\r\n`, {
        end: false,
      }),
    );
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toMatchObject({ data: match.any(Array) });
    for (const host of ['localhost:4000', '[::1]:80', '127.0.0.1', 'api.example.com']) {
      const ok = parseRaw(
        await raw(`GET /users?limit=1 HTTP/1.1\r\nHost: ${host}\r\nx-api-key: ${server.apiKey}\r\nConnection: close\r\n\r\n`, {
          end: false,
        }),
      );
      expect([host, ok.status]).toEqual([host, 200]);
    }
  });
});

describe('GraphQL bodies in other media types', () => {
  /** POSTs `body` to /graphql with `headers`, asking for GraphQL's own response media type. */
  const postGraphQL = (body: BodyInit, headers: Record<string, string>) =>
    server.fetch('/graphql', { method: 'POST', headers: { accept: 'application/graphql-response+json', ...headers }, body });
  type Errors = { errors: { message: string; extensions: Record<string, unknown> }[] };

  it('answers a text/plain POST with 415 and a coded error naming the media types it takes', async () => {
    const response = await postGraphQL('{ users(first: 1) { edges { node { id } } } }', { 'content-type': 'text/plain' });
    expect(response.status).toBe(415);
    const body = (await response.json()) as Errors;
    expect(body.errors[0]!.message).toMatch(/application\/json/);
    expect(body.errors[0]!.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      type: 'https://portico.dev/problems/unsupported-media-type',
    });
  });

  it.each(['APPLICATION/JSON', 'Application/Json; Charset=UTF-8', 'application/json ; charset=utf-8'])(
    'reads JSON whatever the letter case and spacing of its media type (%j), as HTTP compares them',
    async (type) => {
      const response = await postGraphQL(JSON.stringify({ query: '{ __typename }' }), { 'content-type': type });
      expect([response.status, await response.json()]).toEqual([200, { data: { __typename: 'Query' } }]);
    },
  );

  it('answers a JSON body in another charset than UTF-8 with 415 naming UTF-8, rather than misreading it', async () => {
    const text = '{"query":"mutation { createUser(input: { name: \\"Zoë\\", email: \\"latin@example.com\\" }) { id } }"}';
    for (const [charset, bytes] of [
      ['utf-16', Buffer.from(text, 'utf16le')],
      ['ISO-8859-1', Buffer.from(text, 'latin1')],
    ] as const) {
      const response = await postGraphQL(bytes, { 'content-type': `application/json; charset=${charset}` });
      expect(response.status).toBe(415);
      const body = (await response.json()) as Errors;
      expect(body.errors[0]!.message).toMatch(new RegExp(`UTF-8.*not ${charset}`, 'i'));
      expect(body.errors[0]!.extensions).toMatchObject({ type: 'https://portico.dev/problems/unsupported-media-type' });
    }
    const [row] = await server.orm.em
      .fork()
      .execute<{ n: number }[]>("select count(*)::int as n from users where email = 'latin@example.com'");
    expect(row!.n).toBe(0);
    // UTF-8 named in any spelling is read as ever.
    for (const charset of ['utf-8', 'UTF-8', '"utf-8"', 'utf8']) {
      const response = await postGraphQL('{"query":"{ __typename }"}', { 'content-type': `application/json; charset=${charset}` });
      expect([charset, response.status]).toEqual([charset, 200]);
    }
  });

  it('answers a compressed body with 415 and Accept-Encoding: identity on both faces, storing nothing', async () => {
    const before = await userCount();
    const gzipped = (value: unknown) => gzipSync(JSON.stringify(value));
    const graphql = await postGraphQL(
      gzipped({ query: 'mutation { createUser(input: { name: "Zip", email: "zip@example.com" }) { id } }' }),
      {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      },
    );
    expect([graphql.status, graphql.headers.get('accept-encoding')]).toEqual([415, 'identity']);
    const body = (await graphql.json()) as Errors;
    expect(body.errors[0]!.message).toMatch(/uncompressed, not in gzip/);
    const rest = await server.fetch('/users', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipped({ name: 'Zip', email: 'zip@example.com' }),
    });
    expect([rest.status, rest.headers.get('accept-encoding')]).toEqual([415, 'identity']);
    expect(await rest.json()).toMatchObject({
      type: 'https://portico.dev/problems/unsupported-media-type',
      detail: match.stringMatching(/gzip/),
    });
    expect(await userCount()).toBe(before);
    // identity is no coding at all.
    const plain = await postGraphQL('{"query":"{ __typename }"}', { 'content-type': 'application/json', 'content-encoding': 'identity' });
    expect(plain.status).toBe(200);
  });

  it('says a body is not JSON without echoing it or the parser error back', async () => {
    const response = await postGraphQL('{"query": "{ __typename }", "secret": "hunter2', { 'content-type': 'application/json' });
    expect(response.status).toBe(400);
    const text = await response.text();
    expect(text).not.toContain('hunter2');
    const body = JSON.parse(text) as Errors;
    expect(body.errors[0]!.extensions).toEqual({
      code: 'BAD_USER_INPUT',
      type: 'https://portico.dev/problems/invalid-input',
    });
  });

  it('answers a multipart POST (GraphQL uploads, which the schema has none of) with 415', async () => {
    const form = new FormData();
    form.set('operations', JSON.stringify({ query: 'mutation { createUser(input: { name: "Form", email: "form@example.com" }) { id } }' }));
    form.set('map', '{}');
    const response = await postGraphQL(form, {});
    expect(response.status).toBe(415);
    const body = (await response.json()) as Errors;
    expect(body.errors[0]!.message).toMatch(/not multipart\/form-data/);
    const [row] = await server.orm.em
      .fork()
      .execute<{ n: number }[]>("select count(*)::int as n from users where email = 'form@example.com'");
    expect(row!.n).toBe(0);
  });
});

describe('clients that hang up', () => {
  it('are not logged as errors', async () => {
    const marker = `hangup-${Date.now()}`;
    const body = JSON.stringify({ name: 'Half', email: 'half@example.com' });
    await new Promise<void>((resolve) => {
      const { port } = new URL(server.url);
      const socket = net.connect(Number(port), '127.0.0.1', () => {
        // Announces a body it never finishes sending, then goes away.
        socket.write(
          `POST /users HTTP/1.1\r\nHost: x\r\nx-api-key: ${server.apiKey}\r\nx-request-id: ${marker}\r\n` +
            `content-type: application/json\r\ncontent-length: ${body.length + 100}\r\n\r\n${body}`,
        );
        setTimeout(() => socket.destroy(), 100);
      });
      socket.on('close', () => resolve());
      socket.on('error', () => undefined);
    });
    // The request's own log line says it ended; nothing about it may be an error.
    const deadline = Date.now() + 5000;
    while (!server.logs.some((line) => line.requestId === marker && line.msg === 'request') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(server.logs.some((line) => line.requestId === marker && line.msg === 'request')).toBe(true);
    expect(server.logs.filter((line) => line.requestId === marker && (line.level as number) >= 50)).toEqual([]);
  });
});

describe('GraphQL requests that cannot run', () => {
  const graphqlAnswer = async (path: string, init: RequestInit = {}) => {
    const response = await server.fetch(path, {
      ...init,
      headers: { accept: 'application/graphql-response+json', ...(init.body ? { 'content-type': 'application/json' } : {}) },
    });
    const text = await response.text();
    expect(text).not.toMatch(NO_INTERNALS);
    return {
      status: response.status,
      body: JSON.parse(text) as { data?: unknown; errors: { message: string; extensions: { code: string } }[] },
    };
  };

  it('refuses a value nested deeper than the parser can follow as too complex, not an internal error', async () => {
    const query = `{ user(id: ${'['.repeat(5000)}) { id } }`;
    const { status, body } = await graphqlAnswer('/graphql', { method: 'POST', body: JSON.stringify({ query }) });
    expect([status, body.errors[0]?.extensions.code]).toEqual([400, 'QUERY_TOO_COMPLEX']);
    expect(body.errors[0]?.message).toMatch(/nest/i);
  });

  it('refuses a subscription, which the schema has none of, as invalid input', async () => {
    const { status, body } = await graphqlAnswer('/graphql', {
      method: 'POST',
      body: JSON.stringify({ query: 'subscription { __typename }' }),
    });
    expect([status, body.errors[0]?.extensions.code]).toEqual([400, 'BAD_USER_INPUT']);
    expect(body.errors[0]?.message).toMatch(/subscription/);
  });

  it.each(['PUT', 'DELETE', 'PATCH'])('answers %s, a method GraphQL is not served by, with 405 naming the ones it is', async (method) => {
    const response = await server.fetch('/graphql', {
      method,
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    const body = (await response.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect([response.status, response.headers.get('allow'), body.errors[0]?.extensions.code]).toEqual([
      405,
      'GET, POST, OPTIONS',
      'BAD_USER_INPUT',
    ]);
    expect(body.errors[0]?.message).not.toContain('Content-Type');
  });

  it('answers an Accept that asks for JSON in UTF-8, which it is', async () => {
    const response = await server.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json; charset=utf-8' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(response.status).toBe(200);
  });

  it.each(['text/html', 'application/xml', 'image/png, text/*;q=0', 'application/json; charset=iso-8859-1'])(
    'answers Accept: %s, which allows nothing GraphQL answers in, with 406 saying what it answers in',
    async (accept) => {
      const response = await server.fetch('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
      const body = (await response.json()) as { errors: { message: string; extensions: { code: string; type: string } }[] };
      expect([response.status, body.errors[0]?.extensions.type]).toEqual([406, 'https://portico.dev/problems/not-acceptable']);
      expect(body.errors[0]?.message).toContain('application/graphql-response+json');
    },
  );

  it('answers an operationName the document does not have as a request that cannot run: 400, or 200 to application/json', async () => {
    for (const [accept, status] of [
      ['application/graphql-response+json', 400],
      ['application/json', 200],
    ] as const) {
      const response = await server.fetch('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept },
        body: JSON.stringify({ query: 'query A { __typename }', operationName: 'B' }),
      });
      const body = (await response.json()) as { data?: unknown; errors: { message: string; extensions: { code: string } }[] };
      expect([response.status, body.data, body.errors[0]?.extensions.code], accept).toEqual([status, undefined, 'BAD_USER_INPUT']);
      expect(body.errors[0]?.message).toBe(
        'No operation to run: `operationName` must name one of the operations in the document (and is needed when it holds several).',
      );
    }
  });

  it('names the input field of any literal its type refuses, as variables are named', async () => {
    const query = 'mutation {\n  createOrder(input: { userId: "usr_01jd3x3b8vfb9s1p4t4p6q2k7m", total: "x" }) { id }\n}';
    const { status, body } = await graphqlAnswer('/graphql', { method: 'POST', body: JSON.stringify({ query }) });
    const [error] = body.errors as { message: string; extensions: { code: string; errors?: unknown } }[];
    expect([status, error!.extensions.code]).toEqual([400, 'BAD_USER_INPUT']);
    expect(error!.message).toMatch(/^total: Int cannot represent/);
    expect(error!.extensions.errors).toEqual([{ field: 'total', message: match.stringMatching(/^Int cannot represent/) }]);

    // An enum value that does not exist, a null where a value is needed, a field left out.
    for (const [literal, field, message] of [
      ['{ events(type: user_created) { pageInfo { hasNextPage } } }', 'type', /^Value "user_created" does not exist in "EventType" enum/],
      [
        'mutation { createUser(input: { name: null, email: "a@example.com" }) { id } }',
        'name',
        /^Expected value of type "String!", found null/,
      ],
      [
        'mutation { createUser(input: { name: "A" }) { id } }',
        'email',
        /^Field "CreateUserInput.email" of required type "String!" was not provided/,
      ],
    ] as const) {
      const refused = await graphqlAnswer('/graphql', { method: 'POST', body: JSON.stringify({ query: literal }) });
      const [first] = refused.body.errors as { message: string; extensions: { code: string; errors?: unknown } }[];
      expect([refused.status, first!.extensions.code, first!.message.startsWith(`${field}: `)], literal).toEqual([
        400,
        'BAD_USER_INPUT',
        true,
      ]);
      expect(first!.extensions.errors, literal).toEqual([{ field, message: match.stringMatching(message) }]);
    }
  });

  it('names where in the variables a value its type refuses sits: the variable, then the path within it', async () => {
    const user = 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m';
    const create = 'mutation ($input: CreateOrderInput!) { createOrder(input: $input) { id } }';
    const page = 'query ($n: Int) { users(first: $n) { pageInfo { hasNextPage } } }';
    for (const [query, variables, field, message] of [
      [create, { input: { userId: user, total: 'x' } }, 'input.total', /^Int cannot represent non-integer value: "x"$/],
      [create, { input: { userId: user } }, 'input.total', /^Field "total" of required type "Int!" was not provided\.$/],
      [create, { input: { userId: user, total: 1, note: 'x' } }, 'input.note', /^Field "note" is not defined by type "CreateOrderInput"\./],
      [create, {}, 'input', /^of required type "CreateOrderInput!" was not provided\.$/],
      [create, { input: null }, 'input', /^of non-null type "CreateOrderInput!" must not be null\.$/],
      [page, { n: 'x' }, 'n', /^Int cannot represent non-integer value: "x"$/],
      [
        'query ($ids: [ID!]!) { nodes(ids: $ids) { id } }',
        { ids: ['a', null] },
        'ids[1]',
        /^Expected non-nullable type "ID!" not to be null\.$/,
      ],
    ] as const) {
      const refused = await graphqlAnswer('/graphql', { method: 'POST', body: JSON.stringify({ query, variables }) });
      const [first, ...rest] = refused.body.errors as { message: string; extensions: { code: string; errors?: unknown } }[];
      const label = JSON.stringify(variables);
      expect([refused.status, refused.body.data, first!.extensions.code, rest], label).toEqual([400, undefined, 'BAD_USER_INPUT', []]);
      expect(first!.message, label).toMatch(/^Variable "\$\w+" /);
      expect(first!.extensions.errors, label).toEqual([{ field, message: match.stringMatching(message) }]);
    }
  });

  it('refuses a null condition for @skip or @include rather than leaving the field out (a nullable variable with a default)', async () => {
    for (const directive of ['skip', 'include']) {
      const query = `query ($s: Boolean = false) { a: __typename b: __typename @${directive}(if: $s) }`;
      const refused = await graphqlAnswer('/graphql', { method: 'POST', body: JSON.stringify({ query, variables: { s: null } }) });
      const [error] = refused.body.errors as { message: string; extensions: { code: string } }[];
      expect([refused.status, refused.body.data, error!.extensions.code, error!.message], directive).toEqual([
        400,
        undefined,
        'BAD_USER_INPUT',
        'Argument "if" of non-null type "Boolean!" must not be null.',
      ]);
      const given = await graphqlAnswer('/graphql', { method: 'POST', body: JSON.stringify({ query, variables: { s: true } }) });
      expect(given.body.data, directive).toEqual(directive === 'skip' ? { a: 'Query' } : { a: 'Query', b: 'Query' });
    }
  });

  it('refuses a DateTime written in the document that is not an instant naming its field, where it is', async () => {
    for (const value of ['2026-11-27', '2026-02-30T00:00:00Z', '12']) {
      const query = `mutation {\n  resendDeadWebhookDeliveries(endpointId: "wep_01jd3x3b8vfb9s1p4t4p6q2k7m", input: { to: "2026-11-28T00:00:00Z", from: ${JSON.stringify(value)} }) { queued }\n}`;
      const { status, body } = await graphqlAnswer('/graphql', { method: 'POST', body: JSON.stringify({ query }) });
      const [error] = body.errors as { message: string; locations?: unknown; extensions: { code: string; errors?: unknown } }[];
      expect([value, status, body.errors.length, error!.extensions.code]).toEqual([value, 400, 1, 'BAD_USER_INPUT']);
      expect(error!.message).toMatch(/^from: must be an ISO 8601 instant/);
      expect(error!.extensions.errors).toEqual([{ field: 'from', message: match.stringMatching(/^must be an ISO 8601 instant/) }]);
      expect(error!.locations).toEqual([{ line: 2, column: query.split('\n')[1]!.indexOf('from:') + 7 }]);
    }
  });

  it('answers a request that is not a well-formed GraphQL request 400 whatever the client accepts, with no Allow', async () => {
    for (const body of [
      '{}',
      '{"query": 123}',
      '{"query": "{ __typename }", "variables": "x"}',
      '{"query": "{ __typename }", "operationName": 1}',
      '[]',
      '{"query": "{ __typename }"',
    ]) {
      for (const accept of ['application/json', 'application/graphql-response+json']) {
        const response = await server.fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', accept }, body });
        const answer = (await response.json()) as { errors: { extensions: { code: string } }[] };
        expect([body, accept, response.status, response.headers.get('allow'), answer.errors[0]?.extensions.code]).toEqual([
          body,
          accept,
          400,
          null,
          'BAD_USER_INPUT',
        ]);
      }
    }
    // A well-formed request whose document does not parse is one that cannot run: 200 to application/json.
    const syntax = await server.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: '{"query": "{ users { "}',
    });
    expect(syntax.status).toBe(200);
  });

  it.each([
    ['variables', 'notjson'],
    ['extensions', '{'],
  ])('refuses a GET whose %s parameter is not JSON as invalid input, naming it', async (name, value) => {
    const { status, body } = await graphqlAnswer(
      `/graphql?query=${encodeURIComponent('{ __typename }')}&${name}=${encodeURIComponent(value)}`,
      {
        headers: { 'x-graphql-yoga-csrf': '1' },
      },
    );
    expect([status, body.errors[0]?.extensions.code]).toEqual([400, 'BAD_USER_INPUT']);
    expect(body.errors[0]?.message).toContain(name);
  });
});

describe('everything above', () => {
  it('logged no error', () => {
    expect(server.logs.filter((line) => (line.level as number) >= 50).map((line) => line.msg)).toEqual([]);
  });
});
