// User tokens (bearer JWTs) over real HTTP on both faces: which tokens verify, and the policy that a
// user's own data needs that user's token unless the API key is an admin key.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, exportSPKI, generateKeyPair } from 'jose';
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { userTokenVerifier } from '../../src/services/user-tokens.ts';
import { createLogger } from '../../src/log.ts';
import { match } from '../support/match.ts';
import { expectProblem } from '../support/rest.ts';
import { eventually } from '../support/steady-load.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';
import type { JwksTiming } from '../../src/services/jwks.ts';
import { usedCredential } from '../support/credentials.ts';
import { startTestServer, TEST_JWT_SECRET, type TestServer } from '../support/server.ts';

let server: TestServer;
let appKey: string;
let admin: string;
let alice: string;
let bob: string;
let bobsOrder: string;

const secret = new TextEncoder().encode(TEST_JWT_SECRET);
/** Every token and key this file sends, to prove none of them reaches the logs. */
const credentials: string[] = [];
/** `iat: null` leaves the claim out. */
type Claims = { iss?: string; aud?: string; exp?: number; iat?: number | null };
const now = () => Math.floor(Date.now() / 1000);
const sign = async (subject: string, claims: Claims = {}, key: Uint8Array = secret) => {
  const token = usedCredential(await signed(subject, claims, key));
  credentials.push(token);
  return token;
};
const signed = (subject: string, claims: Claims, key: Uint8Array) => {
  const jwt = new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(subject)
    .setIssuer(claims.iss ?? 'portico-dev')
    .setAudience(claims.aud ?? 'portico')
    .setExpirationTime(claims.exp ?? now() + 600);
  if (claims.iat !== null) jwt.setIssuedAt(claims.iat ?? now());
  return jwt.sign(key);
};

/** A correctly signed HS256 token of any claims, `sub` included, whatever their types (jose's SignJWT types them). */
function signedClaims(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const body = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ iss: 'portico-dev', aud: 'portico', iat: now(), exp: now() + 600, ...claims })}`;
  const token = `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
  credentials.push(token);
  return usedCredential(token);
}

async function call(method: string, path: string, headers: Record<string, string>, json?: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...headers, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await response.text();
  return {
    status: response.status,
    challenge: response.headers.get('www-authenticate'),
    body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
    text,
  };
}

const graphql = (query: string, headers: Record<string, string>) =>
  call('POST', '/graphql', { accept: 'application/graphql-response+json', ...headers }, { query });
const as = (token?: string) => ({ 'x-api-key': appKey, ...(token ? { authorization: `Bearer ${token}` } : {}) });

beforeAll(async () => {
  server = await startTestServer();
  appKey = await server.createKey({ scopes: ['users:read', 'users:write', 'orders:read', 'orders:write'] });
  admin = server.apiKey;
  const create = async (name: string) =>
    ((await call('POST', '/users', { 'x-api-key': admin }, { name, email: `${name.toLowerCase()}@example.com` })).body as { id: string })
      .id;
  alice = await create('Alice');
  bob = await create('Bob');
  bobsOrder = ((await call('POST', `/users/${bob}/orders`, { 'x-api-key': admin }, { total: 4200 })).body as { id: string }).id;
});
afterAll(async () => {
  const logs = JSON.stringify(server.logs);
  for (const credential of [...credentials, appKey, admin]) expect(logs, 'a credential in the logs').not.toContain(credential);
  await server.close();
});

describe('tokens that do not verify', () => {
  const unsigned = () =>
    `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(
      JSON.stringify({ sub: alice, iss: 'portico-dev', aud: 'portico', exp: Math.floor(Date.now() / 1000) + 600 }),
    ).toString('base64url')}.`;

  it.each([
    ['alg none', unsigned],
    ['a bad signature', () => sign(alice, {}, new TextEncoder().encode('another-secret-that-is-long-enough-0123456789'))],
    ['an expired token', () => sign(alice, { exp: Math.floor(Date.now() / 1000) - 3600 })],
    ['a wrong issuer', () => sign(alice, { iss: 'https://elsewhere.example.com/' })],
    ['a wrong audience', () => sign(alice, { aud: 'someone-else' })],
    ['a lifetime over JWT_MAX_AGE (24 h)', () => sign(alice, { exp: now() + 24 * 3600 + 60 })],
    ['no iat and an expiry further away than JWT_MAX_AGE', () => sign(alice, { iat: null, exp: now() + 24 * 3600 + 120 })],
    ['an iat in the future beyond the clock tolerance', () => sign(alice, { iat: now() + 120 })],
    ['garbage', () => Promise.resolve('not.a.jwt')],
    ['a subject that is not a string', () => Promise.resolve(signedClaims({ sub: [alice] }))],
    ['a subject that is a number', () => Promise.resolve(signedClaims({ sub: 42 }))],
    ['a subject that is no user id', () => sign('alice')],
  ])('%s gets 401 with error="invalid_token" on both faces', async (_, token) => {
    const value = await token();
    const rest = await call('GET', `/users/${alice}`, as(value));
    expect([rest.status, rest.body?.type]).toEqual([401, 'https://portico.dev/problems/unauthenticated']);
    expect(rest.challenge).toContain('error="invalid_token"');
    const gql = await graphql(`{ user(id: "${alice}") { id } }`, as(value));
    expect(gql.status).toBe(401);
    expect(gql.challenge).toContain('error="invalid_token"');
  });

  it('accepts a lifetime of exactly JWT_MAX_AGE, an iat within the clock tolerance, and no iat with a near expiry', async () => {
    // One reading of the clock: two could fall either side of a second, a lifetime a second too long.
    const issuedAt = now();
    for (const claims of [{ iat: issuedAt, exp: issuedAt + 24 * 3600 }, { iat: issuedAt + 20 }, { iat: null }]) {
      const response = await call('GET', `/users/${alice}/orders`, as(await sign(alice, claims)));
      expect(response.status, JSON.stringify(claims)).toBe(200);
    }
  });

  it('refuses credentials of another scheme with a plain challenge, and a bearer value that is no token as invalid (RFC 6750 §3)', async () => {
    // Another scheme is no bearer token at all: the challenge says what to send, with no error code.
    const basic = await call('GET', `/users/${alice}`, { 'x-api-key': appKey, authorization: 'Basic YWxpY2U6c2VjcmV0' });
    expect([basic.status, basic.challenge]).toEqual([401, 'Bearer realm="portico"']);
    const malformed = await call('GET', `/users/${alice}`, { 'x-api-key': appKey, authorization: 'Bearer not a token' });
    expect([malformed.status, malformed.challenge]).toEqual([401, 'Bearer realm="portico", error="invalid_token"']);
  });
});

describe('a token sent in the URL', () => {
  it('is never logged: the request line shows it redacted (RFC 6750 access_token)', async () => {
    const token = await sign(alice);
    await fetch(`${server.url}/graphql?query=${encodeURIComponent('{ __typename }')}&access_token=${token}`, {
      headers: { 'x-api-key': appKey },
    });
    const lines = server.logs.filter((line) => typeof line.url === 'string' && line.url.includes('access_token='));
    expect(lines.map((line) => line.url)).toEqual([expect.stringContaining('access_token=%5Bredacted%5D')]);
  });
});

describe("a user's own data", () => {
  it('may be changed and read with that user’s token', async () => {
    const token = await sign(alice);
    expect((await call('PATCH', `/users/${alice}`, as(token), { name: 'Alice A.' })).status).toBe(200);
    expect((await call('POST', `/users/${alice}/orders`, as(token), { total: 100 })).status).toBe(201);
    expect((await call('GET', `/users/${alice}/orders`, as(token))).status).toBe(200);
    const gql = await graphql(`{ orders(userId: "${alice}") { total } user(id: "${alice}") { orders { total } } }`, as(token));
    expect([gql.status, gql.body?.data]).toEqual([200, { orders: [{ total: 100 }], user: { orders: [{ total: 100 }] } }]);
  });

  it('needs a token: without one, acting on it is 401 with a Bearer challenge', async () => {
    const rest = await call('PATCH', `/users/${alice}`, as(), { name: 'Nobody' });
    expect([rest.status, rest.body?.type, rest.challenge]).toEqual([
      401,
      'https://portico.dev/problems/unauthenticated',
      'Bearer realm="portico"',
    ]);
    const gql = await graphql(`mutation { deleteUser(id: "${alice}") }`, as());
    expect([gql.status, (gql.body?.errors as { extensions: { code: string } }[])[0]!.extensions.code]).toEqual([401, 'UNAUTHENTICATED']);
  });

  it("is out of reach with another user's token, on every route and every GraphQL path", async () => {
    const token = await sign(alice);
    for (const [method, path, json] of [
      ['PUT', `/users/${bob}`, { name: 'X', email: 'x@example.com' }],
      ['PATCH', `/users/${bob}`, { name: 'X' }],
      ['DELETE', `/users/${bob}`, undefined],
      ['POST', `/users/${bob}/orders`, { total: 1 }],
      ['GET', `/users/${bob}/orders`, undefined],
    ] as const) {
      const response = await call(method, path, as(token), json);
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(response.text).not.toContain('4200');
    }
    expect((await call('GET', `/orders/${bobsOrder}`, as(token))).status).toBe(404);

    for (const query of [
      `{ orders(userId: "${bob}") { id total } }`,
      `{ orderList(userId: "${bob}") { items { id total } } }`,
      `{ user(id: "${bob}") { orders { id total } } }`,
      `{ users(first: 10) { edges { node { id orders { id total } } } } }`,
      `{ order(id: "${bobsOrder}") { id total } }`,
      `mutation { createOrder(input: { userId: "${bob}", total: 1 }) { id } }`,
    ]) {
      const gql = await graphql(query, as(token));
      expect(gql.text, query).not.toContain('4200');
      expect(gql.text, query).not.toContain(bobsOrder);
    }
    const rows = await server.orm.em.fork().execute<{ n: number }[]>('select count(*)::int as n from orders where user_id = ?', [bob]);
    expect(rows[0]!.n).toBe(1);
  });

  it("is not replayed to another user's token that sends the same Idempotency-Key", async () => {
    const [bobs, alices] = [await sign(bob), await sign(alice)];
    const key = (name: string) => ({ 'idempotency-key': `${name}-${Date.now()}-${Math.random()}` });
    const patch = key('patch');
    const own = await call('PATCH', `/users/${bob}`, { ...as(bobs), ...patch }, { name: 'Bob Again' });
    expect(own.status).toBe(200);
    const other = await call('PATCH', `/users/${bob}`, { ...as(alices), ...patch }, { name: 'Bob Again' });
    expect([other.status, other.body?.type]).toEqual([422, 'https://portico.dev/problems/idempotency-key-reused']);
    expect(other.text).not.toContain('bob@example.com');

    const order = key('order');
    expect((await call('POST', `/users/${bob}/orders`, { ...as(bobs), ...order }, { total: 4200 })).status).toBe(201);
    const replayed = await call('POST', `/users/${bob}/orders`, { ...as(alices), ...order }, { total: 4200 });
    expect(replayed.status).toBe(422);
    expect(replayed.text).not.toContain('4200');

    const mutation = `mutation { createOrder(input: { userId: "${bob}", total: 4200 }) { id total } }`;
    const write = key('graphql');
    expect((await graphql(mutation, { ...as(bobs), ...write })).status).toBe(200);
    const foreign = await graphql(mutation, { ...as(alices), ...write });
    expect(foreign.text).not.toContain('4200');
    expect((foreign.body?.errors as { extensions: { code: string } }[])[0]!.extensions.code).toBe('IDEMPOTENCY_KEY_REUSED');
    // Bob's own retry is still his replay.
    const retry = await call('PATCH', `/users/${bob}`, { ...as(bobs), ...patch }, { name: 'Bob Again' });
    expect([retry.status, retry.body?.name]).toEqual([200, 'Bob Again']);
  });

  it('without a token, an order reads alike whether it exists or not, and does not name its user', async () => {
    const missing = 'ord_01jd3x3b8vfb9s1p4t4p6q2k7m';
    const [existing, absent] = [await call('GET', `/orders/${bobsOrder}`, as()), await call('GET', `/orders/${missing}`, as())];
    expect([existing.status, existing.challenge]).toEqual([401, 'Bearer realm="portico"']);
    expect([absent.status, absent.body?.detail]).toEqual([401, existing.body?.detail]);
    expect(existing.text).not.toContain(bob);
    for (const id of [bobsOrder, missing]) {
      for (const query of [`{ order(id: "${id}") { id } }`, `{ node(id: "${id}") { id } }`]) {
        const gql = await graphql(query, as());
        expect([query, gql.status], gql.text).toEqual([query, 401]);
        expect(gql.text).not.toContain(bob);
      }
    }
  });

  it('is open to an admin key without any user token', async () => {
    expect((await call('PATCH', `/users/${bob}`, { 'x-api-key': admin }, { name: 'Bob B.' })).status).toBe(200);
    expect((await call('GET', `/users/${bob}/orders`, { 'x-api-key': admin })).status).toBe(200);
  });
});

describe('what needs only the key', () => {
  it('reading profiles and signing up', async () => {
    expect((await call('GET', `/users/${bob}`, as())).status).toBe(200);
    expect((await graphql(`{ user(id: "${bob}") { name } users(first: 5) { edges { node { id } } } }`, as())).status).toBe(200);
    expect((await call('POST', '/users', as(), { name: 'Carol', email: 'carol@example.com' })).status).toBe(201);
  });
});

describe('tokens from an identity provider', () => {
  it('a JWT_PUBLIC_KEY that is not a public key for JWT_ALGORITHM stops the start with one sentence naming it', async () => {
    const { publicKey } = await generateKeyPair('RS256', { extractable: true });
    const rsaPem = await exportSPKI(publicKey);
    const jwt = loadConfig({}).jwt;
    for (const [pem, algorithm] of [
      ['-----BEGIN PUBLIC KEY-----\ngarbage\n-----END PUBLIC KEY-----', 'RS256'],
      [rsaPem, 'ES256'],
    ] as const) {
      await expect(
        userTokenVerifier({ ...jwt, publicKey: pem, publicKeyAlgorithm: algorithm }, '/nonexistent', createLogger('silent')),
      ).rejects.toThrow(
        match.objectContaining({
          name: 'ConfigError',
          message: match.stringMatching(/^JWT_PUBLIC_KEY must be a PEM public key .* for JWT_ALGORITHM/),
        }),
      );
    }
    // The key it is, for its algorithm, verifies.
    await expect(
      userTokenVerifier({ ...jwt, publicKey: rsaPem, publicKeyAlgorithm: 'RS256' }, '/nonexistent', createLogger('silent')),
    ).resolves.toBeTypeOf('function');
  });

  it('verify against its JWKS URL, and tokens signed by other keys do not', async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
    const jwks = http.createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })),
    );
    await new Promise<void>((resolve) => jwks.listen(0, '127.0.0.1', resolve));
    const jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks.json`;
    const idp = await startTestServer({
      jwt: { ...loadConfig({}).jwt, jwksUrl, issuer: 'https://id.example.com/', audience: 'portico-api' },
    });
    try {
      const userId = (
        (await (
          await fetch(`${idp.url}/users`, {
            method: 'POST',
            headers: { 'x-api-key': idp.apiKey, 'content-type': 'application/json' },
            body: JSON.stringify({ name: 'Dana', email: 'dana@example.com' }),
          })
        ).json()) as { id: string }
      ).id;
      const key = await idp.createKey({ scopes: ['orders:read'] });
      const token = (signingKey: CryptoKey) =>
        new SignJWT({})
          .setProtectedHeader({ alg: 'RS256', kid: 'test-key' })
          .setSubject(userId)
          .setIssuer('https://id.example.com/')
          .setAudience('portico-api')
          .setExpirationTime('5m')
          .sign(signingKey);
      const get = async (bearer: string) =>
        (await fetch(`${idp.url}/users/${userId}/orders`, { headers: { 'x-api-key': key, authorization: `Bearer ${bearer}` } })).status;
      expect(await get(await token(privateKey))).toBe(200);
      expect(await get(await token((await generateKeyPair('RS256')).privateKey))).toBe(401);
    } finally {
      await idp.close();
      jwks.close();
    }
  });
});

describe("the identity provider's signing keys (JWT_JWKS_URL) when the provider fails", () => {
  interface Provider {
    url: string;
    mode: 'ok' | 'failing';
    hits: number;
    close(): void;
  }

  async function startProvider(jwk: object): Promise<Provider> {
    const provider = { url: '', mode: 'ok' as Provider['mode'], hits: 0, close: () => undefined as void };
    const server = http.createServer((_req, res) => {
      provider.hits += 1;
      if (provider.mode === 'failing') res.writeHead(500).end('down for maintenance');
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    provider.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
    provider.close = () => void server.close();
    return provider;
  }

  /** A server checking tokens against a provider, reached through a TCP proxy when `proxied`. */
  async function setUp(timing: JwksTiming, { proxied = false } = {}) {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const provider = await startProvider({ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' });
    const { port } = new URL(provider.url);
    const proxy = proxied ? await startTcpProxy({ host: '127.0.0.1', port: Number(port) }) : undefined;
    const jwksUrl = proxy ? provider.url.replace(`:${port}/`, `:${proxy.port}/`) : provider.url;
    const server = await startTestServer(
      { jwt: { ...loadConfig({}).jwt, jwksUrl, issuer: 'https://id.example.com/', audience: 'portico-api' } },
      { jwksTiming: timing },
    );
    const created = await server.gql<{ createUser: { id: string } }>(
      'mutation { createUser(input: { name: "Eve", email: "eve@example.com" }) { id } }',
    );
    const userId = created.body.data!.createUser.id;
    const key = await server.createKey({ scopes: ['orders:read'] });
    const sign = (kid: string, signingKey: CryptoKey = privateKey) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'RS256', kid })
        .setSubject(userId)
        .setIssuer('https://id.example.com/')
        .setAudience('portico-api')
        .setExpirationTime('5m')
        .sign(signingKey);
    const get = (token: string) =>
      server.fetch(`/users/${userId}/orders`, { headers: { 'x-api-key': key, authorization: `Bearer ${token}` } });
    return { provider, proxy, server, sign, get, userId };
  }

  it('keeps checking tokens with the keys last fetched, holds fetches back after a failure, and answers 503 (not 401) for a key it cannot fetch', async () => {
    const { provider, server, sign, get, userId } = await setUp({
      timeoutMs: 1000,
      refreshAfterMs: 100,
      unknownKeyCooldownMs: 30_000,
      retryFirstMs: 60_000,
      retryMaxMs: 60_000,
    });
    try {
      const token = await sign('k1');
      expect((await get(token)).status).toBe(200);
      expect(provider.hits).toBe(1);

      provider.mode = 'failing';
      // Once the keys are old, a request fetches them again in the background, and is answered meanwhile.
      await eventually(
        async () =>
          (await get(token)).status === 200 && server.logs.some((line) => String(line.msg).includes('signing keys cannot be fetched')),
        'the background fetch to fail and be logged, while tokens are still checked',
        10_000,
      );
      const hits = provider.hits;
      for (let i = 0; i < 5; i += 1) expect((await get(token)).status).toBe(200);
      // A key id the kept keys lack cannot be checked while the provider fails: 503, and no new fetch each time.
      for (let i = 0; i < 5; i += 1) {
        const response = await get(await sign(`forged-${i}`));
        expectProblem(
          { status: response.status, headers: response.headers, text: '', body: await response.json() },
          503,
          'unavailable',
          `/users/${userId}/orders`,
        );
        expect(response.headers.get('retry-after')).toMatch(/^\d+$/);
        expect(response.headers.get('www-authenticate')).toBeNull();
      }
      expect(provider.hits).toBe(hits);
      // A token the kept keys refuse is still refused as invalid.
      expect((await get(await sign('k1', (await generateKeyPair('RS256')).privateKey))).status).toBe(401);
      // Logged once for the whole episode, with the reason.
      expect(server.logs.filter((line) => String(line.msg).includes('signing keys cannot be fetched'))).toEqual([
        match.objectContaining({ level: 50, err: 'HTTP 500' }),
      ]);
    } finally {
      await server.close();
      provider.close();
    }
  });

  it.each(['refuse', 'reset', 'blackhole'] as const)(
    'answers 503 within the fetch bound while the network to the provider is down (%s), and serves once it is back',
    async (fault) => {
      const { provider, proxy, server, sign, get } = await setUp(
        { timeoutMs: 1000, refreshAfterMs: 600_000, unknownKeyCooldownMs: 30_000, retryFirstMs: 50, retryMaxMs: 100 },
        { proxied: true },
      );
      try {
        await proxy!.set(fault);
        const token = await sign('k1');
        const refused = await get(token);
        // The fetch's own bound answered, not the request's deadline.
        expect([refused.status, ((await refused.json()) as { detail: string }).detail]).toEqual([
          503,
          match.stringMatching(/^The identity provider's signing keys cannot be fetched right now/),
        ]);
        await proxy!.set('pass');
        await eventually(async () => (await get(token)).status === 200, 'tokens to verify once the network is back', 10_000);
      } finally {
        await server.close();
        await proxy!.close();
        provider.close();
      }
    },
  );

  it('answers 503 while it has never had the keys, and serves once the provider is back', async () => {
    const { provider, server, sign, get } = await setUp({
      timeoutMs: 1000,
      refreshAfterMs: 600_000,
      unknownKeyCooldownMs: 30_000,
      retryFirstMs: 50,
      retryMaxMs: 100,
    });
    try {
      provider.mode = 'failing';
      const token = await sign('k1');
      const refused = await get(token);
      expect([refused.status, refused.headers.get('www-authenticate')]).toEqual([503, null]);
      provider.mode = 'ok';
      await eventually(async () => (await get(token)).status === 200, 'tokens to verify once the provider is back', 10_000);
      expect(server.logs.some((line) => String(line.msg).includes('signing keys are fetched again'))).toBe(true);
    } finally {
      await server.close();
      provider.close();
    }
  });
});
