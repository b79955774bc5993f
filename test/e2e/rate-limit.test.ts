// Per-key rate limits on both faces: the budget, what a request costs, honest 429s with Retry-After
// and the RateLimit fields, per-key limits, window renewal; and, on Redis, one exact budget shared by
// two instances, and requests going through unmetered while Redis is down.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createLogger } from '../../src/log.ts';
import { openRateLimitCounter } from '../../src/rate-limit/open.ts';
import { generateKeySecret } from '../../src/services/api-key-secrets.ts';
import { match } from '../support/match.ts';
import { rotateApiKey } from '../../src/services/api-keys.ts';
import { TEST_PEPPER, startTestServer, type TestServer } from '../support/server.ts';
import { SKIP_REDIS, startTestRedis, type TestRedis } from '../support/redis.ts';
import { usageSince } from '../support/usage.ts';

const WINDOW_MS = 60_000;

function rateLimitOf(response: { headers: Headers }): { remaining: number; reset: number } {
  const match = /^"per-key";r=(\d+);t=(\d+)$/.exec(response.headers.get('ratelimit') ?? '');
  if (!match) throw new Error(`no RateLimit field: ${response.headers.get('ratelimit')}`);
  return { remaining: Number(match[1]), reset: Number(match[2]) };
}

async function createUser(server: TestServer): Promise<string> {
  const response = await server.gql<{ createUser: { id: string } }>(
    'mutation { createUser(input: { name: "Ada", email: "ada@example.com" }) { id } }',
  );
  return response.body.data!.createUser.id;
}

describe('one instance, counters in memory', () => {
  let server: TestServer;
  let userId: string;

  beforeAll(async () => {
    server = await startTestServer({ rateLimit: { max: 3, unidentifiedMax: 1_000_000, windowMs: WINDOW_MS, redisUrl: undefined } });
    userId = await createUser(server);
  });
  afterAll(() => server.close());

  const restGet = (key: string) => server.fetch(`/users/${userId}`, { headers: { 'x-api-key': key } });
  const gqlGet = (key: string) => server.gql(`{ user(id: "${userId}") { id } }`, {}, { 'x-api-key': key });

  it('refuses a request that runs more operations than the whole budget without a Retry-After: no wait would let it pass', async () => {
    const key = await server.createKey({ name: 'Too much at once' });
    const four = await server.gql(
      '{ a: rateLimit { remaining } b: rateLimit { remaining } c: rateLimit { remaining } d: rateLimit { remaining } }',
      {},
      { 'x-api-key': key },
    );
    expect(four.status).toBe(429);
    expect(four.headers.get('retry-after')).toBeNull();
    expect(four.body.errors![0]!.message).toContain('This request runs 4 operations; send fewer at once.');
    // The fields still say where the budget stands, and a request that fits is admitted.
    expect(rateLimitOf(four).remaining).toBe(3);
    expect((await gqlGet(key)).status).toBe(200);
  });

  it('admits the limit, then answers 429 on both faces with Retry-After and the RateLimit fields', async () => {
    const key = await server.createKey({ name: 'Limited' });
    for (const expected of [2, 1, 0]) {
      const response = expected === 1 ? await gqlGet(key) : await restGet(key);
      expect(response.status).toBe(200);
      expect(response.headers.get('ratelimit-policy')).toBe('"per-key";q=3;w=60');
      expect(rateLimitOf(response).remaining).toBe(expected);
      expect(rateLimitOf(response).reset).toBeGreaterThanOrEqual(1);
      expect(rateLimitOf(response).reset).toBeLessThanOrEqual(60);
      expect(response.headers.get('retry-after')).toBeNull();
    }

    server.statements.length = 0;
    const rest = await restGet(key);
    expect(rest.status).toBe(429);
    expect(rest.headers.get('content-type')).toBe('application/problem+json');
    const retryAfter = rest.headers.get('retry-after');
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(retryAfter)).toBeLessThanOrEqual(60);
    expect(rateLimitOf(rest)).toEqual({ remaining: 0, reset: Number(retryAfter) });
    const body = (await rest.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      type: 'https://portico.dev/problems/quota-exceeded',
      title: 'Too many requests',
      status: 429,
      instance: `/users/${userId}`,
    });
    expect(body.detail).toMatch(/^Rate limit of 3 operations per minute exceeded for this API key; 0 left, the budget renews in \d+ s\.$/);

    const graphql = await gqlGet(key);
    expect(graphql.status).toBe(429);
    expect(graphql.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(graphql.body.data ?? null).toBeNull();
    expect(graphql.body.errors![0]!.extensions).toMatchObject({
      code: 'RATE_LIMITED',
      type: 'https://portico.dev/problems/quota-exceeded',
    });
    // A refused request reaches no resolver: only the API key lookup touched the database.
    expect(server.statements.filter((sql) => !sql.includes('api_keys'))).toEqual([]);
  });

  it('keeps every key to its own budget', async () => {
    const spent = await server.createKey({ name: 'Spent' });
    for (let i = 0; i < 3; i++) expect((await restGet(spent)).status).toBe(200);
    expect((await restGet(spent)).status).toBe(429);
    const other = await server.createKey({ name: 'Other' });
    const response = await restGet(other);
    expect(response.status).toBe(200);
    expect(rateLimitOf(response).remaining).toBe(2);
  });

  it('gives a rotated key and its successor one budget: rotating a key does not double it', async () => {
    const old = await server.createKey({ name: 'Rotated', rateLimitPerMinute: 3 });
    const [{ id }] = await server.orm.em.fork().execute<[{ id: string }]>('select id from api_keys where name = ?', ['Rotated']);
    const { secret: successor } = await rotateApiKey(server.orm.em.fork(), TEST_PEPPER, id, 3_600_000);
    const statuses = [];
    for (const key of [old, old, successor, successor])
      statuses.push((await server.gql('{ rateLimit { remaining } }', {}, { 'x-api-key': key })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('honours a key’s own limit over the default', async () => {
    const generous = await server.createKey({ name: 'Generous', rateLimitPerMinute: 5 });
    for (let i = 4; i >= 0; i--) {
      const response = await restGet(generous);
      expect(response.status).toBe(200);
      expect(response.headers.get('ratelimit-policy')).toBe('"per-key";q=5;w=60');
      expect(rateLimitOf(response).remaining).toBe(i);
    }
    expect((await restGet(generous)).status).toBe(429);

    const strict = await server.createKey({ name: 'Strict', rateLimitPerMinute: 1 });
    expect((await gqlGet(strict)).status).toBe(200);
    expect((await gqlGet(strict)).status).toBe(429);
  });

  it('charges a root field as one operation: a REST call costs what its GraphQL query costs', async () => {
    const key = await server.createKey({ name: 'Costs', rateLimitPerMinute: 10 });
    const two = await server.gql(`{ a: user(id: "${userId}") { id } b: orders(userId: "${userId}") { id } }`, {}, { 'x-api-key': key });
    expect(two.status).toBe(200);
    expect(rateLimitOf(two).remaining).toBe(8);
    expect(rateLimitOf(await restGet(key)).remaining).toBe(7);
    expect(rateLimitOf(await gqlGet(key)).remaining).toBe(6);
    // Root fields reached through a fragment count too.
    const fragment = await server.gql(
      `query { ...Both } fragment Both on Query { user(id: "${userId}") { id } order(id: "ord_01jd3x3b8vfb9s1p4t4p6q2k7m") { id } }`,
      {},
      { 'x-api-key': key },
    );
    expect(rateLimitOf(fragment).remaining).toBe(4);
    // `__typename` reads nothing: it is no operation, alone or beside one.
    const typename = await server.gql('{ __typename }', {}, { 'x-api-key': key });
    expect([typename.status, typename.body.data, rateLimitOf(typename).remaining]).toEqual([200, { __typename: 'Query' }, 4]);
    const beside = await server.gql(`{ __typename user(id: "${userId}") { id } }`, {}, { 'x-api-key': key });
    expect(rateLimitOf(beside).remaining).toBe(3);
    // One field asked twice under one name (literally, or through a fragment spread twice) runs once.
    const twice = await server.gql(
      `{ user(id: "${userId}") { id } user(id: "${userId}") { name } ...One ...One } fragment One on Query { user(id: "${userId}") { email } }`,
      {},
      { 'x-api-key': key },
    );
    expect([twice.status, rateLimitOf(twice).remaining]).toEqual([200, 2]);
  });

  it('charges only the root fields that run: one skipped by @skip or @include costs nothing, nor is it counted as used', async () => {
    const key = await server.createKey({ name: 'Conditional', rateLimitPerMinute: 10 });
    const since = Date.now();
    const conditional = `query ($on: Boolean!) {
      a: user(id: "${userId}") @include(if: $on) { id }
      ... @skip(if: true) { b: orders(userId: "${userId}") { id } }
      ...Maybe @include(if: $on)
      rateLimit { cost }
    }
    fragment Maybe on Query { c: order(id: "ord_01jd3x3b8vfb9s1p4t4p6q2k7m") { id } }`;
    const off = await server.gql<{ rateLimit: { cost: number } }>(conditional, { on: false }, { 'x-api-key': key });
    expect([off.status, off.body.data?.rateLimit.cost, rateLimitOf(off).remaining]).toEqual([200, 1, 9]);
    const on = await server.gql<{ rateLimit: { cost: number } }>(conditional, { on: true }, { 'x-api-key': key });
    expect([on.status, on.body.data?.rateLimit.cost, rateLimitOf(on).remaining]).toEqual([200, 3, 6]);
    const [{ id }] = await server.orm.em.fork().execute<[{ id: string }]>('select id from api_keys where name = ?', ['Conditional']);
    await server.usage.flush();
    expect(await usageSince(server.orm.em.fork(), id, since)).toEqual({
      totals: { 'Query.rateLimit': 1, 'Query.order+Query.rateLimit+Query.user': 1 },
      inTime: true,
    });
  });

  it('tells GraphQL clients their budget in the rateLimit field, this request included', async () => {
    const key = await server.createKey({ name: 'Curious', scopes: ['orders:read'], rateLimitPerMinute: 10 });
    const before = Date.now();
    const response = await server.gql<{
      rateLimit: { limit: number; remaining: number; cost: number; resetAt: string; windowSeconds: number };
    }>('{ rateLimit { limit remaining cost resetAt windowSeconds } again: rateLimit { remaining } }', {}, { 'x-api-key': key });
    expect(response.status).toBe(200);
    expect(response.body.errors).toBeUndefined();
    const budget = response.body.data!.rateLimit;
    expect(budget).toMatchObject({ limit: 10, remaining: 8, cost: 2, windowSeconds: 60 });
    expect(Date.parse(budget.resetAt)).toBeGreaterThan(before);
    expect(Date.parse(budget.resetAt)).toBeLessThanOrEqual(Date.now() + WINDOW_MS);
    expect(rateLimitOf(response).remaining).toBe(8);
  });

  it('refuses a request that does not fit whole, and spends nothing on it', async () => {
    const key = await server.createKey({ name: 'Whole', rateLimitPerMinute: 2 });
    expect(rateLimitOf(await restGet(key)).remaining).toBe(1);
    const three = await server.gql(`{ a: user(id: "${userId}") { id } b: user(id: "${userId}") { id } }`, {}, { 'x-api-key': key });
    expect(three.status).toBe(429);
    expect(three.body.errors!.every((error) => error.extensions.code === 'RATE_LIMITED')).toBe(true);
    expect(rateLimitOf(three).remaining).toBe(1);
    expect((await restGet(key)).status).toBe(200);
  });

  it('charges nothing for a document refused before it runs, and still reports the budget', async () => {
    const key = await server.createKey({ name: 'Broken documents', rateLimitPerMinute: 2 });
    const broken = await server.gql('{ user(id: ', {}, { 'x-api-key': key });
    expect(broken.status).toBe(400);
    expect(broken.headers.get('ratelimit-policy')).toBe('"per-key";q=2;w=60');
    expect(rateLimitOf(broken).remaining).toBe(2);
    // Refused by the REST layer before the operation runs (an unknown parameter).
    const invalid = await server.fetch('/users?colour=blue', { headers: { 'x-api-key': key } });
    expect(invalid.status).toBe(400);
    expect(rateLimitOf(invalid).remaining).toBe(2);
    // A path parameter that is not an id of its kind, malformed or of another kind, likewise.
    for (const path of ['/users/garbage', `/users/${userId.replace('usr_', 'ord_')}`, '/users/garbage/orders', '/orders/garbage']) {
      const malformed = await server.fetch(path, { headers: { 'x-api-key': key } });
      expect(malformed.status, path).toBe(400);
      expect(rateLimitOf(malformed).remaining, path).toBe(2);
    }
    // Query parameters outside what the OpenAPI document allows them (its enums, id patterns and
    // lengths), likewise.
    const endpoint = 'wep_01jd3x5kq2f6r0w8c4n1y7s9ta';
    for (const path of [
      '/users?after_id=usr_x',
      '/users?sort=colour',
      `/users?cursor=${'a'.repeat(2000)}`,
      `/webhook-endpoints/${endpoint}/deliveries?status=DEAD`,
      '/events?type=order.created',
    ]) {
      const refused = await server.fetch(path, { headers: { 'x-api-key': key } });
      expect(refused.status, path).toBe(400);
      expect(rateLimitOf(refused).remaining, path).toBe(2);
    }
    expect(rateLimitOf(await restGet(key)).remaining).toBe(1);
  });

  it('sends no RateLimit fields to requests without a valid key', async () => {
    const response = await server.fetch('/users', { headers: { 'x-api-key': '' } });
    expect(response.status).toBe(401);
    expect(response.headers.get('ratelimit')).toBeNull();
  });
});

describe('requests without a valid key', () => {
  it('limits requests without a valid key per client address, costing no database work, and leaves valid keys alone', async () => {
    const server = await startTestServer({ rateLimit: { max: 3, unidentifiedMax: 3, windowMs: WINDOW_MS, redisUrl: undefined } });
    onTestFinished(() => server.close());
    const userId = await createUser(server);
    const restGet = (key: string) => server.fetch(`/users/${userId}`, { headers: { 'x-api-key': key } });
    const gqlGet = (key: string) => server.gql(`{ user(id: "${userId}") { id } }`, {}, { 'x-api-key': key });
    const stranger = () => generateKeySecret('test').secret;
    server.statements.length = 0;
    // The address's budget of three is spent by unknown keys and by no key at all…
    expect((await restGet(stranger())).status).toBe(401);
    expect((await gqlGet(stranger())).status).toBe(401);
    expect((await fetch(`${server.url}/users/${userId}`)).status).toBe(401);
    // …then both faces answer 429, with the address's budget in the RateLimit fields.
    const rest = await restGet(stranger());
    expect(rest.status).toBe(429);
    expect(rest.headers.get('ratelimit-policy')).toBe('"per-address";q=3;w=60');
    expect(rest.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await rest.json()).toMatchObject({ type: 'https://portico.dev/problems/quota-exceeded', status: 429 });
    const graphql = await gqlGet(stranger());
    expect(graphql.status).toBe(429);
    expect(graphql.body.errors![0]!.extensions.code).toBe('RATE_LIMITED');
    // Unknown prefixes are refused from memory.
    expect(server.statements).toEqual([]);
    // A valid key from the same address is not affected.
    expect((await restGet(await server.createKey({ name: 'Neighbour' }))).status).toBe(200);
  });

  it('counts a valid key used from outside its allowlist as not identified, and a user token that does not verify against the key', async () => {
    const server = await startTestServer({ rateLimit: { max: 3, unidentifiedMax: 2, windowMs: WINDOW_MS, redisUrl: undefined } });
    onTestFinished(() => server.close());
    const userId = await createUser(server);
    // A backend forwarding its users' tokens: a bad one is the key's request, paid from its budget,
    // and answered 401 with the challenge that makes the client get a new token.
    const backend = await server.createKey({ name: 'Backend' });
    const badToken = { 'x-api-key': backend, authorization: 'Bearer not.a.token' };
    for (let remaining = 2; remaining >= 0; remaining -= 1) {
      const refused = await server.fetch(`/users/${userId}`, { headers: badToken });
      expect([refused.status, refused.headers.get('www-authenticate'), refused.headers.get('ratelimit')]).toEqual([
        401,
        'Bearer realm="portico", error="invalid_token"',
        match.stringMatching(new RegExp(`^"per-key";r=${remaining};t=\\d+$`)),
      ]);
    }
    // Past the key's budget: its 429, still saying the token is bad.
    const spent = await server.fetch(`/users/${userId}`, { headers: badToken });
    expect([spent.status, spent.headers.get('www-authenticate'), spent.headers.get('ratelimit-policy')]).toEqual([
      429,
      'Bearer realm="portico", error="invalid_token"',
      '"per-key";q=3;w=60',
    ]);
    expect(((await spent.json()) as { detail: string }).detail).toMatch(
      /^The user token is not valid.* This API key's rate limit is spent besides/,
    );

    // None of that came from the address's budget for requests that are not identified.
    const elsewhere = await server.createKey({ name: 'Office only', allowedCidrs: ['10.0.0.0/8'] });
    expect((await server.fetch(`/users/${userId}`, { headers: { 'x-api-key': elsewhere } })).status).toBe(403);
    expect((await server.fetch(`/users/${userId}`, { headers: { 'x-api-key': elsewhere } })).status).toBe(403);
    const refused = await server.fetch(`/users/${userId}`, { headers: { 'x-api-key': elsewhere } });
    expect([refused.status, refused.headers.get('ratelimit-policy')]).toEqual([429, '"per-address";q=2;w=60']);
    // Another key, used as it may be, is not affected.
    expect((await server.fetch(`/users/${userId}`)).status).toBe(200);
  });

  it('gives an IPv6 client one budget for its whole /64, which it could otherwise spread over 2^64 addresses', async () => {
    const server = await startTestServer({
      trustProxy: ['127.0.0.1/32', '::1/128'],
      rateLimit: { max: 1_000, unidentifiedMax: 2, windowMs: WINDOW_MS, redisUrl: undefined },
    });
    onTestFinished(() => server.close());
    const from = (address: string) => fetch(`${server.url}/users`, { headers: { 'x-forwarded-for': address } });
    expect((await from('2001:db8:1:2::a')).status).toBe(401);
    expect((await from('2001:0DB8:0001:0002:0000:0000:0000:000b')).status).toBe(401);
    const spent = await from('2001:db8:1:2:ffff:ffff:ffff:ffff');
    expect(spent.status).toBe(429);
    expect((await spent.json()) as { detail: string }).toMatchObject({ detail: match.stringContaining('from 2001:db8:1:2::/64') });
    // The next /64, and IPv4 addresses one by one, have budgets of their own.
    expect((await from('2001:db8:1:3::a')).status).toBe(401);
    for (const address of ['192.0.2.1', '192.0.2.1', '192.0.2.2', '::ffff:192.0.2.2']) expect((await from(address)).status).toBe(401);
    expect((await from('192.0.2.1')).status).toBe(429);
  });
});

describe('window renewal', () => {
  it('admits requests again once the window has passed', async () => {
    // Two seconds: long enough for the second request to land in the first one's window on a slow machine.
    const server = await startTestServer({ rateLimit: { max: 1, unidentifiedMax: 1_000_000, windowMs: 2000, redisUrl: undefined } });
    try {
      const first = await server.fetch('/users?limit=1');
      expect(first.status).toBe(200);
      expect(first.headers.get('ratelimit-policy')).toBe('"per-key";q=1;w=2');
      const refused = await server.fetch('/users?limit=1');
      expect(refused.status).toBe(429);
      // Whole seconds, rounded up, of what is left of the window.
      expect(['1', '2']).toContain(refused.headers.get('retry-after'));
      // Polled with a deadline; refused attempts spend nothing, so the first one past the window passes.
      const deadline = Date.now() + 10_000;
      let status = refused.status;
      while (status === 429 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        status = (await server.fetch('/users?limit=1')).status;
      }
      expect(status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe('Redis unreachable at start', () => {
  it('serves unmetered, and says so', async () => {
    // Nothing listens on port 1: connections are refused.
    const server = await startTestServer({
      rateLimit: { max: 1, unidentifiedMax: 1_000_000, windowMs: WINDOW_MS, redisUrl: 'redis://127.0.0.1:1' },
    });
    try {
      expect(
        server.logs.some((line) => line.level === 50 && String(line.msg).startsWith('rate limit store (REDIS_URL) unreachable at start')),
      ).toBe(true);
      for (let i = 0; i < 3; i++) {
        const response = await server.fetch('/users?limit=1');
        expect(response.status).toBe(200);
        expect(response.headers.get('ratelimit')).toBeNull();
      }
    } finally {
      await server.close();
    }
  });
});

describe.skipIf(SKIP_REDIS)('several instances sharing Redis', () => {
  let redis: TestRedis;
  let first: TestServer;
  let second: TestServer;

  beforeAll(async () => {
    redis = await startTestRedis();
    const rateLimit = { max: 100, unidentifiedMax: 1_000_000, windowMs: WINDOW_MS, redisUrl: redis.url };
    first = await startTestServer({ rateLimit });
    second = await startTestServer({ rateLimit }, { sharing: first });
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
    await redis?.stop();
  });

  it('refuses to start on a database number this Redis does not have, rather than count in database 0', async () => {
    const config = { max: 1, unidentifiedMax: 1, windowMs: WINDOW_MS, redisUrl: `${redis.url}/99` };
    await expect(openRateLimitCounter(config, createLogger('silent'))).rejects.toThrow(
      match.objectContaining({ name: 'StartupError', message: match.stringMatching(/^REDIS_URL names database 99/) }),
    );
  });

  it('refuses to start when this Redis refuses the password, naming REDIS_URL and never the password', async () => {
    const guarded = await startTestRedis({ password: 'open-sesame-0123456789' });
    const config = (password: string) => ({
      max: 1,
      unidentifiedMax: 1,
      windowMs: WINDOW_MS,
      redisUrl: guarded.url.replace('redis://', `redis://:${password}@`),
    });
    try {
      const refused: unknown = await openRateLimitCounter(config('wrong-password-0123'), createLogger('silent')).catch(
        (error: unknown) => error,
      );
      expect(refused).toMatchObject({
        name: 'StartupError',
        message: match.stringMatching(/^REDIS_URL's password .*is refused by this Redis/),
      });
      expect(String((refused as Error).message)).not.toContain('wrong-password');
      // The right one counts.
      const counter = await openRateLimitCounter(config('open-sesame-0123456789'), createLogger('silent'));
      try {
        expect(counter.stats.degraded).toBe(false);
      } finally {
        await counter.close();
      }
    } finally {
      await guarded.stop();
    }
  });

  it('lets exactly the limit through when 200 requests race across two instances', async () => {
    // Both instances were connected before they served: nothing went through unmetered.
    expect([...first.logs, ...second.logs].filter((line) => String(line.msg).startsWith('rate limit store'))).toEqual([]);
    const key = await first.createKey({ name: 'Burst' });
    const userId = await createUser(first);
    const statuses = await Promise.all(
      Array.from({ length: 200 }, (_, i) => {
        const server = i % 2 === 0 ? first : second;
        // Both faces, both instances: the budget is one.
        return i % 4 < 2
          ? server.fetch(`/users/${userId}`, { headers: { 'x-api-key': key } }).then((r) => r.status)
          : server.gql(`{ user(id: "${userId}") { id } }`, {}, { 'x-api-key': key }).then((r) => r.status);
      }),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(100);
    expect(statuses.filter((status) => status === 429)).toHaveLength(100);
    const after = await second.fetch(`/users/${userId}`, { headers: { 'x-api-key': key } });
    expect(after.status).toBe(429);
    expect(rateLimitOf(after).remaining).toBe(0);
  });

  it('lets requests through unmetered while Redis is down, says so in the log, and limits again when it is back', async () => {
    const key = await first.createKey({ name: 'Outage', rateLimitPerMinute: 2 });
    const get = () => first.fetch('/users?limit=1', { headers: { 'x-api-key': key } });
    expect(rateLimitOf(await get()).remaining).toBe(1);

    await redis.stop();
    for (let i = 0; i < 5; i++) {
      const response = await get();
      expect(response.status).toBe(200);
      // Nothing was counted, so nothing is claimed.
      expect(response.headers.get('ratelimit')).toBeNull();
    }
    const outage = first.logs.filter((line) => line.msg === 'rate limit store unreachable; requests go through unmetered until it is back');
    expect(outage).toHaveLength(1);
    expect(outage[0]!.level).toBe(50);
    // The outage is a figure for monitoring; the instance stays ready, since requests are served.
    const ready = await fetch(`${first.url}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', rateLimits: { degraded: true, unmeteredRequests: 5 } });

    await redis.start();
    // The client reconnects on its own; poll until budgets are counted again (the new Redis is empty).
    const deadline = Date.now() + 10_000;
    let response = await get();
    while (!response.headers.get('ratelimit') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      response = await get();
    }
    expect(response.status).toBe(200);
    expect(rateLimitOf(response).remaining).toBe(1);
    expect((await get()).status).toBe(200);
    expect((await get()).status).toBe(429);
    const recovered = first.logs.find((line) => line.msg === 'rate limit store reachable again; limits apply');
    expect(recovered?.unmeteredRequests).toBeGreaterThanOrEqual(5);
    const after = (await (await fetch(`${first.url}/ready`)).json()) as { rateLimits: { degraded: boolean; unmeteredRequests: number } };
    expect(after.rateLimits.degraded).toBe(false);
    expect(after.rateLimits.unmeteredRequests).toBe(recovered!.unmeteredRequests);
  });
});
