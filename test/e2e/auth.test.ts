// API keys over real HTTP, on both faces: who may call at all (401), and what a valid key may do (403).
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeApiKey, rotateApiKey } from '../../src/services/api-keys.ts';
import { match } from '../support/match.ts';
import { startTestServer, TEST_PEPPER, type TestServer } from '../support/server.ts';
import { usageSince } from '../support/usage.ts';

let server: TestServer;
/** Every key secret this file handles, to prove none reaches the logs. */
const secrets: string[] = [];

beforeAll(async () => {
  server = await startTestServer();
  secrets.push(server.apiKey);
});
afterAll(async () => {
  const logs = JSON.stringify(server.logs);
  for (const secret of secrets) expect(logs, 'a full key in the logs').not.toContain(secret);
  for (const secret of secrets) expect(logs).not.toContain(secret.slice(16, -4));
  await server.close();
});

async function key(settings: Parameters<TestServer['createKey']>[0] = {}): Promise<string> {
  const secret = await server.createKey(settings);
  secrets.push(secret);
  return secret;
}

const keyId = async (secret: string) =>
  (await server.orm.em.fork().execute<{ id: string }[]>('select id from api_keys where prefix = ?', [secret.slice(0, 16)]))[0]!.id;

async function graphql(query: string, headers: Record<string, string>) {
  const response = await fetch(`${server.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
    body: JSON.stringify({ query }),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as { data?: unknown; errors?: { extensions: { code: string } }[] },
  };
}

async function restGet(path: string, headers: Record<string, string>) {
  const response = await fetch(`${server.url}${path}`, { headers });
  return {
    status: response.status,
    headers: response.headers,
    contentType: response.headers.get('content-type'),
    body: (await response.json()) as Record<string, unknown>,
  };
}

const USERS = '{ users(first: 1) { pageInfo { hasNextPage } } }';

describe('without a valid key', () => {
  it.each([
    ['no key', {}],
    ['an empty key', { 'x-api-key': '' }],
    ['a garbage key', { 'x-api-key': 'garbage' }],
    ['a well-formed unknown key', { 'x-api-key': `pk_test_${'A'.repeat(33)}` }],
  ])('%s gets 401 on both faces', async (_, headers) => {
    const gql = await graphql(USERS, headers);
    expect(gql.status).toBe(401);
    expect(gql.body.errors?.[0]?.extensions.code).toBe('UNAUTHENTICATED');
    expect(gql.headers.get('www-authenticate')).toContain('x-api-key');
    const rest = await restGet('/users', headers);
    expect([rest.status, rest.contentType, rest.body.type]).toEqual([
      401,
      'application/problem+json',
      'https://portico.dev/problems/unauthenticated',
    ]);
    expect(rest.headers.get('www-authenticate')).toContain('x-api-key');
  });

  it('two keys in one request get a 401 that says so, whichever they are', async () => {
    // Node joins a header sent twice with ", ", which no key holds.
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.get(`${server.url}/users`, { headers: { 'x-api-key': [server.apiKey, server.apiKey] } }, (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body: text }));
      });
      request.on('error', reject);
    });
    expect(status).toBe(401);
    expect((JSON.parse(body) as { detail: string }).detail).toBe('Send one API key: x-api-key came more than once.');
  });

  it('a revoked or expired key gets 401', async () => {
    const revoked = await key();
    await revokeApiKey(server.orm.em.fork(), await keyId(revoked));
    expect((await restGet('/users', { 'x-api-key': revoked })).status).toBe(401);
    const expired = await key({ expiresAt: new Date(Date.now() + 60_000) });
    expect((await restGet('/users', { 'x-api-key': expired })).status).toBe(200);
    await server.orm.em
      .fork()
      .execute("update api_keys set expires_at = now() - interval '1 second' where prefix = ?", [expired.slice(0, 16)]);
    expect((await graphql(USERS, { 'x-api-key': expired })).status).toBe(401);
  });

  it('a rotated key works during its grace period and not after; its successor works', async () => {
    const old = await key();
    const { secret: successor } = await rotateApiKey(server.orm.em.fork(), TEST_PEPPER, await keyId(old), 3_600_000);
    secrets.push(successor);
    expect((await restGet('/users', { 'x-api-key': old })).status).toBe(200);
    expect((await restGet('/users', { 'x-api-key': successor })).status).toBe(200);
    await server.orm.em.fork().execute("update api_keys set expires_at = now() - interval '1 second' where prefix = ?", [old.slice(0, 16)]);
    expect((await restGet('/users', { 'x-api-key': old })).status).toBe(401);
    expect((await restGet('/users', { 'x-api-key': successor })).status).toBe(200);
  });

  it('leaves the public endpoints open', async () => {
    for (const path of ['/health', '/ready', '/openapi.json', '/docs'])
      expect((await fetch(`${server.url}${path}`)).status, path).toBe(200);
    const graphiql = await fetch(`${server.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(graphiql.status).toBe(200);
    expect(await graphiql.text()).toContain('x-api-key');
  });
});

describe('scopes', () => {
  it('a key without the scope a request needs gets 403 for the whole request', async () => {
    const readOnly = await key({ scopes: ['users:read'] });
    const create = await graphql('mutation { createUser(input: { name: "No", email: "no@example.com" }) { id } }', {
      'x-api-key': readOnly,
    });
    expect(create.status).toBe(403);
    expect(create.body.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
    // A nullable field denied alone: 403 too, and with no `data` entry, which GraphQL over HTTP
    // allows only for such an answer.
    const node = await graphql('{ node(id: "ord_01jd3x5kq2f6r0w8c4n1y7s9ta") { id } }', { 'x-api-key': readOnly });
    expect([node.status, 'data' in node.body, node.body.errors?.[0]?.extensions.code]).toEqual([403, false, 'FORBIDDEN']);
    const response = await fetch(`${server.url}/users`, {
      method: 'POST',
      headers: { 'x-api-key': readOnly, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'No', email: 'no@example.com' }),
    });
    expect(response.status).toBe(403);
    expect(((await response.json()) as { type: string }).type).toBe('https://portico.dev/problems/forbidden');
    expect(
      (
        await server.gql<{ userList: { pagination: { total: number } } }>(
          '{ userList(page: 1) { pagination { ... on OffsetPagination { total } } } }',
        )
      ).body.data!.userList.pagination.total,
    ).toBe(0);
  });

  it('denies a field inside an otherwise allowed query as a coded error on that field', async () => {
    // Root fields are nullable: a denied one is null beside the data of those allowed.
    const readUsers = await key({ scopes: ['users:read'] });
    const result = await graphql('{ users(first: 1) { pageInfo { hasNextPage } } order(id: "ord_01jd3x5kq2f6r0w8c4n1y7s9ta") { id } }', {
      'x-api-key': readUsers,
    });
    expect(result.status).toBe(200);
    expect(result.body.data).toEqual({ users: { pageInfo: { hasNextPage: false } }, order: null });
    expect(result.body.errors).toEqual([
      match.objectContaining({ path: ['order'], extensions: match.objectContaining({ code: 'FORBIDDEN' }) }),
    ]);

    // A field that was allowed and ran answers, even when its answer is null (no such user): the
    // request is not one of which nothing could run, and its null says "not found", not "denied".
    const missing = await graphql(
      '{ user(id: "usr_01m8g65eycetzaha7yd9gcs85a") { id } order(id: "ord_01jd3x5kq2f6r0w8c4n1y7s9ta") { id } }',
      {
        'x-api-key': readUsers,
      },
    );
    expect([missing.status, missing.body.data]).toEqual([200, { user: null, order: null }]);
    // `orders` is non-null in the specified schema: refused beside a field that ran, it nulls the
    // data, and it is still no 403. `orderList`, nullable, leaves the rest.
    const beside = await graphql(
      `
        {
          a: user(id: "usr_01m8g65eycetzaha7yd9gcs85a") {
            id
          }
          b: orders(userId: "usr_01m8g65eycetzaha7yd9gcs85a") {
            id
          }
        }
      `,
      {
        'x-api-key': readUsers,
      },
    );
    expect([beside.status, beside.body.data]).toEqual([200, null]);
    const listed = await graphql(
      '{ a: user(id: "usr_01m8g65eycetzaha7yd9gcs85a") { id } b: orderList(userId: "usr_01m8g65eycetzaha7yd9gcs85a") { items { id } } }',
      { 'x-api-key': readUsers },
    );
    expect([listed.status, listed.body.data]).toEqual([200, { a: null, b: null }]);
    expect(listed.body.errors).toEqual([
      match.objectContaining({ path: ['b'], extensions: match.objectContaining({ code: 'FORBIDDEN' }) }),
    ]);
    // A field below an allowed one refused: the allowed one ran. (A user must exist for the page to
    // hold one whose orders are refused.)
    await server.gql('mutation { createUser(input: { name: "Below", email: "below@example.com" }) { id } }');
    const below = await graphql(
      `
        {
          user(id: "usr_01m8g65eycetzaha7yd9gcs85a") {
            id
          }
          users(first: 1) {
            edges {
              node {
                orders {
                  id
                }
              }
            }
          }
        }
      `,
      {
        'x-api-key': readUsers,
      },
    );
    expect([below.status, below.body.errors?.[0]?.extensions.code]).toEqual([200, 'FORBIDDEN']);
    expect(missing.body.errors).toEqual([
      match.objectContaining({ path: ['order'], extensions: match.objectContaining({ code: 'FORBIDDEN' }) }),
    ]);
  });

  it('gives REST routes the scope of the field behind them', async () => {
    const user = await server.gql<{ createUser: { id: string } }>(
      'mutation { createUser(input: { name: "Scoped", email: "scoped@example.com" }) { id } }',
    );
    const id = user.body.data!.createUser.id;
    const usersOnly = await key({ scopes: ['users:read'] });
    expect((await restGet(`/users/${id}`, { 'x-api-key': usersOnly })).status).toBe(200);
    expect((await restGet(`/users/${id}/orders`, { 'x-api-key': usersOnly })).status).toBe(403);
    const ordersOnly = await key({ scopes: ['orders:read'] });
    // A user's orders are their own data: the key's scope is not enough without their user token (401).
    expect((await restGet(`/users/${id}/orders`, { 'x-api-key': ordersOnly })).status).toBe(401);
    const denied = await restGet(`/users/${id}`, { 'x-api-key': ordersOnly });
    expect(denied.status).toBe(403);
    // REST's own words: the route, not the GraphQL field behind it.
    expect(denied.body.detail).toBe('This API key may not use GET /users/{user_id} (it needs the scope users:read).');
    const admin = await key({ scopes: ['admin'] });
    expect((await restGet(`/users/${id}/orders`, { 'x-api-key': admin })).status).toBe(200);
  });

  it('lets any valid key introspect the schema', async () => {
    const minimal = await key({ scopes: ['webhooks:manage'] });
    const result = await graphql('{ __schema { queryType { name } } }', { 'x-api-key': minimal });
    expect([result.status, result.body.data]).toEqual([200, { __schema: { queryType: { name: 'Query' } } }]);
  });
});

describe('IP allowlists', () => {
  it('refuse a request from outside the key’s networks with 403, whatever X-Forwarded-For claims', async () => {
    const office = await key({ allowedCidrs: ['10.0.0.0/8'] });
    const refused = await restGet('/users', { 'x-api-key': office });
    expect([refused.status, refused.body.type]).toEqual([403, 'https://portico.dev/problems/forbidden']);
    expect((await restGet('/users', { 'x-api-key': office, 'x-forwarded-for': '10.1.2.3' })).status).toBe(403);
    expect((await graphql(USERS, { 'x-api-key': office })).status).toBe(403);
    const local = await key({ allowedCidrs: ['127.0.0.1', '::1'] });
    expect((await restGet('/users', { 'x-api-key': local })).status).toBe(200);
  });

  it('believe X-Forwarded-For only from a trusted proxy', async () => {
    const behindProxy = await startTestServer({ trustProxy: ['127.0.0.1/32'] });
    try {
      const office = await behindProxy.createKey({ allowedCidrs: ['10.0.0.0/8'] });
      const through = (forwardedFor: string) =>
        fetch(`${behindProxy.url}/users`, { headers: { 'x-api-key': office, 'x-forwarded-for': forwardedFor } });
      expect((await through('10.1.2.3')).status).toBe(200);
      expect((await through('10.1.2.3, 203.0.113.5')).status).toBe(403);
    } finally {
      await behindProxy.close();
    }
  });
});

describe('the api_key query parameter', () => {
  it('works, but the response warns, the log warns, and no log line holds the key', async () => {
    const secret = await key();
    const response = await fetch(`${server.url}/users?limit=1&api_key=${secret}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('warning')).toContain('x-api-key header');
    expect(server.logs.some((line) => line.level === 40 && String(line.msg).includes('query string'))).toBe(true);
    const logged = server.logs.find((line) => typeof line.url === 'string' && line.url.includes('api_key='));
    expect(logged?.url).toBe(`/users?limit=1&api_key=${encodeURIComponent(`${secret.slice(0, 16)}…${secret.slice(-4)}`)}`);
    const viaPost = await fetch(`${server.url}/graphql?api_key=${secret}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: USERS }),
    });
    expect(viaPost.status).toBe(200);
    // Bodies of the other media types a POST may have, which are read another way.
    for (const [type, body] of [
      ['application/graphql', USERS],
      ['application/x-www-form-urlencoded', new URLSearchParams({ query: USERS }).toString()],
    ]) {
      const other = await fetch(`${server.url}/graphql?api_key=${secret}`, {
        method: 'POST',
        headers: { 'content-type': type!, 'x-graphql-yoga-csrf': '1' },
        body,
      });
      const answer = (await other.json()) as { data?: { users: unknown }; errors?: unknown };
      expect([other.status, answer.errors, answer.data?.users !== undefined], type).toEqual([200, undefined, true]);
    }
    // A GraphQL GET with the key only in its URL is what a cross-site page could send: refused (CSRF).
    expect((await fetch(`${server.url}/graphql?query=${encodeURIComponent(USERS)}&api_key=${secret}`)).status).toBe(403);
  });

  it('is masked in the log however its name is spelled: the server decodes the name, so the log must too', async () => {
    const secret = await key();
    for (const name of ['api%5Fkey', '%61pi_key', 'api%5fkey']) {
      const response = await fetch(`${server.url}/users?limit=1&${name}=${secret}`);
      expect(response.status, name).toBe(200);
    }
    expect(server.logs.filter((line) => JSON.stringify(line).includes(secret))).toEqual([]);
  });
});

describe('usage', () => {
  it('is counted per key, day and operation without a write per request, and written in one flush', async () => {
    const since = Date.now();
    const secret = await key({ name: 'Counted' });
    const id = await keyId(secret);
    const user = await server.gql<{ createUser: { id: string } }>(
      'mutation { createUser(input: { name: "Counted", email: "counted@example.com" }) { id } }',
    );
    const userId = user.body.data!.createUser.id;
    await server.usage.flush();
    server.statements.length = 0;

    for (let i = 0; i < 3; i++) expect((await restGet(`/users/${userId}`, { 'x-api-key': secret })).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await graphql(`{ user(id: "${userId}") { id } }`, { 'x-api-key': secret })).status).toBe(200);
    expect((await graphql(USERS, { 'x-api-key': secret })).status).toBe(200);
    // Root fields reached through a fragment are the operation too, as the rate limiter counts them.
    const viaFragment = `query { ...Both } fragment Both on Query { user(id: "${userId}") { id } users(first: 1) { edges { cursor } } }`;
    expect((await graphql(viaFragment, { 'x-api-key': secret })).status).toBe(200);
    expect(server.statements.filter((sql) => sql.includes('api_key_usage'))).toEqual([]);

    await server.usage.flush();
    expect(server.statements.filter((sql) => sql.includes('api_key_usage'))).toHaveLength(1);
    expect(await usageSince(server.orm.em.fork(), id, since)).toEqual({
      totals: { 'Query.user': 5, 'Query.user+Query.users': 1, 'Query.users': 1 },
      inTime: true,
    });
    const [row] = await server.orm.em
      .fork()
      .execute<{ last_used_ip: string; last_used_at: Date }[]>('select last_used_ip, last_used_at from api_keys where id = ?', [id]);
    expect(row!.last_used_ip).toBe('127.0.0.1');
    expect(Date.now() - new Date(row!.last_used_at).getTime()).toBeLessThan(3_600_000);
  });
});
