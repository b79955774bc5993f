// Idempotency keys over real HTTP against a real PostgreSQL: replays on both faces, refusals, what is
// and is not kept, expiry, concurrency across two instances, and a crash between commit and response.
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withFailpoint } from '../support/failpoints.ts';
import { match } from '../support/match.ts';
import { expectProblem, rest, type Order, type RestResponse } from '../support/rest.ts';
import { loadConfig } from '../../src/config.ts';
import { usageSince } from '../support/usage.ts';
import { startTestServer, testUserToken, type TestServer } from '../support/server.ts';
import { fingerprintOf } from '../../src/services/idempotency.ts';
import { prefixOf } from '../../src/services/api-key-secrets.ts';
import { startServiceProcess } from '../support/service-process.ts';
import { eventually } from '../support/steady-load.ts';

let server: TestServer;
let second: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  second = await startTestServer({}, { sharing: server });
});
afterAll(async () => {
  await second.close();
  await server.close();
});

let counter = 0;
const uniqueKey = () => `key-${process.pid}-${++counter}-${Math.random().toString(36).slice(2)}`;

async function createUser(on: TestServer = server): Promise<string> {
  counter += 1;
  const response = await rest<{ id: string }>(on, 'POST', '/users', {
    json: { name: `Retrier ${counter}`, email: `retrier-${counter}@example.com` },
  });
  expect(response.status).toBe(201);
  return response.body.id;
}

async function ordersOf(userId: string): Promise<number> {
  const rows = await server.orm.em.fork().execute<{ n: number }[]>('select count(*)::int as n from orders where user_id = ?', [userId]);
  return rows[0]!.n;
}

/** Places an order through `on`, always as the same client (the first server's API key). */
const placeOrder = (userId: string, key: string | undefined, json: unknown = { total: 1999 }, on: TestServer = server) =>
  rest<Order>(on, 'POST', `/users/${userId}/orders`, {
    json,
    headers: { 'x-api-key': server.apiKey, ...(key === undefined ? {} : { 'idempotency-key': key }) },
  });

const CREATE_ORDER = 'mutation ($input: CreateOrderInput!) { createOrder(input: $input) { id total userId } }';

describe('Idempotency-Key on REST', () => {
  it('replays a completed POST byte for byte, with Idempotent-Replayed, and writes once', async () => {
    const userId = await createUser();
    const key = uniqueKey();
    const first = await placeOrder(userId, key);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await placeOrder(userId, key);
    expect([again.status, again.text, again.headers.get('location'), again.headers.get('content-type')]).toEqual([
      201,
      first.text,
      first.headers.get('location'),
      first.headers.get('content-type'),
    ]);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    // A replay is an answer like any other: its rate limit fields, and no Retry-After (that is the 409's).
    expect([again.headers.get('retry-after'), again.headers.has('ratelimit')]).toEqual([null, true]);
    expect(await ordersOf(userId)).toBe(1);
  });

  it('treats the same body written differently (key order, spacing) as the same request', async () => {
    const userId = await createUser();
    const key = uniqueKey();
    await rest(server, 'POST', `/users/${userId}/orders`, { body: '{"total": 5, "status": "paid"}', headers: { 'idempotency-key': key } });
    const again = await rest(server, 'POST', `/users/${userId}/orders`, {
      body: '{"status":"paid","total":5}',
      headers: { 'idempotency-key': key },
    });
    expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
    expect(await ordersOf(userId)).toBe(1);
  });

  it('refuses the same key for a different request with 422, and writes nothing more', async () => {
    const userId = await createUser();
    const key = uniqueKey();
    expect((await placeOrder(userId, key)).status).toBe(201);
    const reused = await placeOrder(userId, key, { total: 2000 });
    const problem = expectProblem(reused, 422, 'idempotency-key-reused', `/users/${userId}/orders`);
    expect(problem.detail).toContain('different request');
    // Every answer to a request with a valid key carries its rate limit fields, refusals of the key too.
    expect([reused.headers.has('ratelimit'), reused.headers.has('ratelimit-policy')]).toEqual([true, true]);
    const otherUser = await createUser();
    expectProblem(await placeOrder(otherUser, key), 422, 'idempotency-key-reused', `/users/${otherUser}/orders`);
    expect([await ordersOf(userId), await ordersOf(otherUser)]).toEqual([1, 0]);
  });

  it.each([
    ['over 255 characters', 'k'.repeat(256)],
    ['outside printable ASCII', 'clé-1'],
  ])('refuses a key %s with 400 naming the header, and writes nothing', async (_what, key) => {
    const userId = await createUser();
    const problem = expectProblem(await placeOrder(userId, key), 400, 'invalid-input', `/users/${userId}/orders`);
    expect(problem.errors).toEqual([{ field: 'Idempotency-Key', message: match.stringContaining('printable ASCII') }]);
    expect(await ordersOf(userId)).toBe(0);
  });

  it('spends no unit of the rate limit on a malformed key, on either face: refused before anything runs', async () => {
    const userId = await createUser();
    const apiKey = await server.createKey({ name: 'Budget watcher', scopes: ['users:read', 'orders:write', 'admin'] });
    const left = (response: { headers: Headers }) => /r=(\d+)/.exec(response.headers.get('ratelimit') ?? '')?.[1];
    const malformed = { 'x-api-key': apiKey, 'idempotency-key': 'k'.repeat(256) };
    const rests = [];
    for (let i = 0; i < 2; i++) {
      rests.push(await rest(server, 'POST', `/users/${userId}/orders`, { json: { total: 1 }, headers: malformed }));
      rests.push(await server.gql(CREATE_ORDER, { input: { userId, total: 5 } }, malformed));
    }
    expect(rests.map((response) => response.status)).toEqual([400, 400, 400, 400]);
    expect(new Set(rests.map(left)).size).toBe(1);
    const read = await rest(server, 'GET', `/users/${userId}`, { headers: { 'x-api-key': apiKey } });
    expect(Number(left(read))).toBe(Number(left(rests[0]!)) - 1);
  });

  it('refuses a key sent twice with 400, though the two joined would be a well-formed key', async () => {
    const userId = await createUser();
    const body = JSON.stringify({ total: 1 });
    const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => (answer += String(chunk)));
    const closed = new Promise((resolve) => socket.on('close', resolve));
    socket.write(
      `POST /users/${userId}/orders HTTP/1.1\r\nHost: x\r\nx-api-key: ${server.apiKey}\r\ncontent-type: application/json\r\n` +
        `idempotency-key: a1\r\nidempotency-key: a2\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
    );
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('must be sent once (it came 2 times)');
    expect(await ordersOf(userId)).toBe(0);
  });

  it('accepts a key of exactly 255 printable characters', async () => {
    const userId = await createUser();
    const key = `${'~ '.repeat(127)}!`;
    expect(key).toHaveLength(255);
    expect((await placeOrder(userId, key)).status).toBe(201);
    expect((await placeOrder(userId, key)).headers.get('idempotent-replayed')).toBe('true');
  });

  it('scopes keys to the API key: another key with the same value is a new request', async () => {
    const userId = await createUser();
    const key = uniqueKey();
    const otherApiKey = await server.createKey({ name: 'Other client' });
    expect((await placeOrder(userId, key)).status).toBe(201);
    const other = await rest(server, 'POST', `/users/${userId}/orders`, {
      json: { total: 1999 },
      headers: { 'idempotency-key': key, 'x-api-key': otherApiKey },
    });
    expect([other.status, other.headers.get('idempotent-replayed')]).toEqual([201, null]);
    expect(await ordersOf(userId)).toBe(2);
  });

  it('keeps a 4xx outcome and replays it', async () => {
    const missing = 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m';
    const key = uniqueKey();
    const first = await placeOrder(missing, key);
    expectProblem(first, 404, 'not-found', `/users/${missing}/orders`);
    const again = await placeOrder(missing, key);
    expect([again.status, again.text, again.headers.get('idempotent-replayed')]).toEqual([404, first.text, 'true']);
  });

  it('keeps no 401 (a caller not identified): the retry with the credential runs, once; a 403 is kept', async () => {
    const userId = await createUser();
    const writer = await server.createKey({ name: 'User writer', scopes: ['users:write'] });
    const key = uniqueKey();
    const patch = (headers: Record<string, string>) =>
      rest<{ name: string }>(server, 'PATCH', `/users/${userId}`, {
        json: { name: 'With a token' },
        headers: { 'x-api-key': writer, 'idempotency-key': key, ...headers },
      });
    // Without the user's token (or with one that does not verify): 401, and the key stays free.
    expectProblem(await patch({}), 401, 'unauthenticated', `/users/${userId}`);
    expectProblem(await patch({ authorization: 'Bearer not.a.token' }), 401, 'unauthenticated', `/users/${userId}`);
    const token = await testUserToken(userId);
    const done = await patch({ authorization: `Bearer ${token}` });
    expect([done.status, done.headers.get('idempotent-replayed'), done.body.name]).toEqual([200, null, 'With a token']);
    const again = await patch({ authorization: `Bearer ${token}` });
    expect([again.status, again.text, again.headers.get('idempotent-replayed')]).toEqual([200, done.text, 'true']);

    // Identified, and refused (another user's token): an outcome like any 4xx, replayed to the retry.
    const otherKey = uniqueKey();
    const other = await testUserToken(await createUser());
    const refuse = (bearer: string) =>
      rest(server, 'PATCH', `/users/${userId}`, {
        json: { name: 'Not theirs' },
        headers: { 'x-api-key': writer, 'idempotency-key': otherKey, authorization: `Bearer ${bearer}` },
      });
    const refused = await refuse(other);
    expectProblem(refused, 403, 'forbidden', `/users/${userId}`);
    const replayed = await refuse(other);
    expect([replayed.status, replayed.text, replayed.headers.get('idempotent-replayed')]).toEqual([403, refused.text, 'true']);
    // The user a token acts for is part of the request: the same key with the user's own token is another request.
    expectProblem(await refuse(token), 422, 'idempotency-key-reused', `/users/${userId}`);
  });

  it("replays to its retry a token's write recorded before fingerprints named the user it acts for (an upgrade within IDEMPOTENCY_TTL)", async () => {
    const userId = await createUser();
    const writer = await server.createKey({ name: 'Upgraded writer', scopes: ['users:write'] });
    const [keyRow] = await server.orm.em.fork().execute<{ id: string }[]>('select id from api_keys where prefix = ?', [prefixOf(writer)]);
    const key = uniqueKey();
    const body = { name: 'Before the upgrade' };
    const recorded = JSON.stringify({ id: userId, name: 'Before the upgrade', recorded: 'by the earlier version' });
    // As the earlier version recorded it: the request's parts without the user a token acts for.
    const earlier = fingerprintOf(['rest', 'PATCH', `/users/${userId}`, { id: userId, input: body }]);
    await server.orm.em.fork().execute(
      `insert into idempotency_keys (api_key_id, key, fingerprint, status, headers, body, created_at, expires_at)
         values (?, ?, ?, 200, '{"content-type": "application/json; charset=utf-8"}', ?, now(), now() + interval '1 hour')`,
      [keyRow!.id, key, earlier, recorded],
    );
    const retry = await rest(server, 'PATCH', `/users/${userId}`, {
      json: body,
      headers: { 'x-api-key': writer, 'idempotency-key': key, authorization: `Bearer ${await testUserToken(userId)}` },
    });
    expect([retry.status, retry.text, retry.headers.get('idempotent-replayed')]).toEqual([200, recorded, 'true']);
  });

  it('ignores the header on reads', async () => {
    const userId = await createUser();
    const read = await rest(server, 'GET', `/users/${userId}`, { headers: { 'idempotency-key': 'k'.repeat(300) } });
    expect([read.status, read.headers.get('idempotent-replayed')]).toEqual([200, null]);
  });

  it('covers every unsafe method: a replayed PATCH changes nothing twice', async () => {
    const userId = await createUser();
    const key = uniqueKey();
    const patch = () => rest(server, 'PATCH', `/users/${userId}`, { json: { name: 'Patched once' }, headers: { 'idempotency-key': key } });
    const first = await patch();
    expect(first.status).toBe(200);
    // Written, not only answered: the change ran in the key's transaction and committed with its record.
    expect((await rest<{ name: string }>(server, 'GET', `/users/${userId}`)).body.name).toBe('Patched once');
    await rest(server, 'PATCH', `/users/${userId}`, { json: { name: 'Changed since' } });
    const again = await patch();
    expect([again.status, again.text, again.headers.get('idempotent-replayed')]).toEqual([200, first.text, 'true']);
    expect((await rest<{ name: string }>(server, 'GET', `/users/${userId}`)).body.name).toBe('Changed since');
  });
});

describe('Idempotency-Key on GraphQL', () => {
  const mutate = (userId: string, key: string, total = 700) =>
    server.fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ query: CREATE_ORDER, variables: { input: { userId, total } } }),
    });

  it('replays a mutation byte for byte and writes once', async () => {
    const userId = await createUser();
    const key = uniqueKey();
    const first = await mutate(userId, key);
    const firstText = await first.text();
    expect(JSON.parse(firstText)).toEqual({ data: { createOrder: { id: match.stringMatching(/^ord_/), total: 700, userId } } });
    const again = await mutate(userId, key);
    expect([again.status, await again.text(), again.headers.get('idempotent-replayed')]).toEqual([first.status, firstText, 'true']);
    expect(await ordersOf(userId)).toBe(1);
  });

  it('refuses the key for other variables with IDEMPOTENCY_KEY_REUSED (422)', async () => {
    const userId = await createUser();
    const key = uniqueKey();
    await mutate(userId, key);
    const reused = await server.gql(CREATE_ORDER, { input: { userId, total: 701 } }, { 'idempotency-key': key });
    expect(reused.status).toBe(422);
    expect(reused.body.errors?.[0]?.extensions.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await ordersOf(userId)).toBe(1);
  });

  it('refuses a malformed key on a mutation as a request error: 400, nothing run', async () => {
    const userId = await createUser();
    const response = await server.gql(CREATE_ORDER, { input: { userId, total: 5 } }, { 'idempotency-key': 'k'.repeat(256) });
    expect(response.status).toBe(400);
    expect(response.body.data).toBeUndefined();
    expect(response.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', errors: [{ field: 'Idempotency-Key' }] });
    expect(await ordersOf(userId)).toBe(0);
  });

  it('ignores the header on queries, however malformed', async () => {
    const response = await server.gql('{ users(first: 1) { edges { node { id } } } }', {}, { 'idempotency-key': 'k'.repeat(300) });
    expect([response.status, response.body.errors]).toEqual([200, undefined]);
  });

  it.each([
    // The database refuses it: the order's foreign key finds no user.
    ['the database', 'createOrder(input: { userId: "usr_01jd3x3b8vfb9s1p4t4p6q2k7m", total: 2 }) { id }'],
    // The service refuses it, with the transaction still sound.
    ['the service', 'updateUser(id: "usr_01jd3x3b8vfb9s1p4t4p6q2k7m", input: { name: "X" }) { id }'],
  ])('a document whose second mutation %s refuses keeps nothing of the first, and replays that outcome', async (_by, second) => {
    const userId = await createUser();
    const key = uniqueKey();
    const both = `mutation { a: createOrder(input: { userId: "${userId}", total: 1 }) { id } b: ${second} }`;
    const first = await server.gql(both, {}, { 'idempotency-key': key });
    expect([first.body.data, first.body.errors?.map((e) => e.extensions.code)]).toEqual([null, ['NOT_FOUND']]);
    expect(await ordersOf(userId)).toBe(0);
    const again = await server.gql(both, {}, { 'idempotency-key': key });
    expect([again.status, again.body, again.headers.get('idempotent-replayed')]).toEqual([first.status, first.body, 'true']);
    expect(await ordersOf(userId)).toBe(0);
  });

  it.each(['multipart/mixed', 'text/event-stream'])(
    'answers a mutation asked for as %s well-formed, replays it in that type, and refuses a retry that does not accept it',
    async (streamed) => {
      const userId = await createUser();
      const key = uniqueKey();
      const send = (accept: string) =>
        server.fetch('/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': key, accept },
          body: JSON.stringify({ query: CREATE_ORDER, variables: { input: { userId, total: 5 } } }),
        });
      // fetch refuses a response that is both chunked and of a stated length.
      const first = await send(streamed);
      const firstText = await first.text();
      expect([first.status, first.headers.get('content-type')?.split(';')[0], first.headers.get('cache-control')]).toEqual([
        200,
        streamed,
        'no-store',
      ]);
      expect(firstText).toContain('"createOrder"');
      const again = await send(streamed);
      expect([again.status, await again.text(), again.headers.get('idempotent-replayed'), again.headers.get('cache-control')]).toEqual([
        200,
        firstText,
        'true',
        'no-store',
      ]);
      const elsewise = await send('application/json');
      const refused = (await elsewise.json()) as { errors: { message: string; extensions: { type: string } }[] };
      expect([elsewise.status, refused.errors[0]?.extensions.type, elsewise.headers.get('idempotent-replayed')]).toEqual([
        406,
        'https://portico.dev/problems/not-acceptable',
        null,
      ]);
      expect(refused.errors[0]?.message).toContain(streamed);
      expect(await ordersOf(userId)).toBe(1);
    },
  );

  it('fingerprints REST and GraphQL apart: the same key on the other face is refused', async () => {
    const userId = await createUser();
    const key = uniqueKey();
    expect((await placeOrder(userId, key, { total: 700 })).status).toBe(201);
    const other = await server.gql(CREATE_ORDER, { input: { userId, total: 700 } }, { 'idempotency-key': key });
    expect(other.body.errors?.[0]?.extensions.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });
});

describe('Idempotency-Key under concurrency', () => {
  it('30 identical requests at once on two instances write one order; the rest are 409 or replays, none 5xx', async () => {
    const userId = await createUser();
    const key = uniqueKey();
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => placeOrder(userId, key, { total: 1999 }, i % 2 ? second : server)),
    );
    const created = answers.filter((a) => a.status === 201 && a.headers.get('idempotent-replayed') === null);
    const replays = answers.filter((a) => a.status === 201 && a.headers.get('idempotent-replayed') === 'true');
    const inFlight = answers.filter((a) => a.status === 409);
    expect(created).toHaveLength(1);
    expect(created.length + replays.length + inFlight.length).toBe(30);
    for (const replay of replays) expect(replay.text).toBe(created[0]!.text);
    for (const refusal of inFlight) {
      expectProblem(refusal, 409, 'idempotency-key-in-flight', `/users/${userId}/orders`);
      expect(refusal.headers.get('retry-after')).toBe('1');
      expect(refusal.headers.has('ratelimit')).toBe(true);
    }
    for (const replay of replays) expect([replay.headers.get('retry-after'), replay.headers.has('ratelimit')]).toEqual([null, true]);
    expect(await ordersOf(userId)).toBe(1);
    // Refusals and replays are answers, not failures: nothing worth an error line.
    const errors = [...server.logs, ...second.logs].filter((line) => (line.level as number) >= 50);
    expect(errors).toEqual([]);
  });
});

describe('usage', () => {
  it('counts a write once, however often it is replayed', async () => {
    const since = Date.now();
    const secret = await server.createKey({ name: 'Replayed' });
    const [{ id }] = (await server.orm.em
      .fork()
      .execute<{ id: string }[]>('select id from api_keys where prefix = ?', [secret.slice(0, 16)])) as [{ id: string }];
    const userId = await createUser();
    const key = uniqueKey();
    const send = () =>
      rest(server, 'POST', `/users/${userId}/orders`, { json: { total: 5 }, headers: { 'x-api-key': secret, 'idempotency-key': key } });
    expect((await send()).status).toBe(201);
    for (let i = 0; i < 2; i++) expect((await send()).headers.get('idempotent-replayed')).toBe('true');
    await server.usage.flush();
    expect(await usageSince(server.orm.em.fork(), id, since)).toEqual({ totals: { 'Mutation.createOrder': 1 }, inTime: true });
  });
});

describe('what is not kept', () => {
  it('a failed commit (5xx) keeps nothing: the retry runs the write once', async () => {
    const userId = await createUser();
    const key = uniqueKey();
    const failed = await withFailpoint('fail-idempotent-commit', () => placeOrder(userId, key, { total: 3 }));
    expect(failed.status).toBe(500);
    expect(await ordersOf(userId)).toBe(0);
    const retried = await placeOrder(userId, key, { total: 3 });
    expect([retried.status, retried.headers.get('idempotent-replayed')]).toEqual([201, null]);
    expect(await ordersOf(userId)).toBe(1);
  });

  it('a failed commit keeps nothing of a change made through the unit of work either (an update)', async () => {
    const userId = await createUser();
    const before = (await rest<{ name: string }>(server, 'GET', `/users/${userId}`)).body.name;
    const key = uniqueKey();
    const patch = () =>
      rest(server, 'PATCH', `/users/${userId}`, { json: { name: 'Renamed under a key' }, headers: { 'idempotency-key': key } });
    expect((await withFailpoint('fail-idempotent-commit', patch)).status).toBe(500);
    expect((await rest<{ name: string }>(server, 'GET', `/users/${userId}`)).body.name).toBe(before);
    const retried = await patch();
    expect([retried.status, retried.headers.get('idempotent-replayed')]).toEqual([200, null]);
    expect((await rest<{ name: string }>(server, 'GET', `/users/${userId}`)).body.name).toBe('Renamed under a key');
  });

  it('a write the rate limiter refused (429) keeps nothing: once the budget renews, the same key runs', async () => {
    const limited = await startTestServer({ rateLimit: { ...loadConfig({}).rateLimit, max: 1, windowMs: 3000 } }, { sharing: server });
    try {
      const userId = await createUser();
      const apiKey = await limited.createKey({ name: 'Limited client' });
      const send = (key: string) =>
        rest(limited, 'POST', `/users/${userId}/orders`, { json: { total: 9 }, headers: { 'x-api-key': apiKey, 'idempotency-key': key } });
      const key = uniqueKey();
      // Spend the budget, then be refused.
      await eventually(async () => (await send(uniqueKey())).status === 429, 'the budget to be spent', 10_000);
      expect((await send(key)).status).toBe(429);
      const before = await ordersOf(userId);
      let later: RestResponse | undefined;
      await eventually(async () => (later = await send(key)).status !== 429, 'the budget to renew', 10_000);
      expect([later!.status, later!.headers.get('idempotent-replayed')]).toEqual([201, null]);
      expect(await ordersOf(userId)).toBe(before + 1);
    } finally {
      await limited.close();
    }
  });

  it('after IDEMPOTENCY_TTL the key is new', async () => {
    const shortLived = await startTestServer({ idempotency: { ttlMs: 1000, required: false } }, { sharing: server });
    try {
      const userId = await createUser();
      const key = uniqueKey();
      expect((await placeOrder(userId, key, { total: 1 }, shortLived)).status).toBe(201);
      let later: RestResponse<Order> | undefined;
      // 422 while the record lives. A retry that meets the record in the instant it expires is told
      // to retry (409, Retry-After), as a client would for a key in use.
      await eventually(
        async () => ![422, 409].includes((later = await placeOrder(userId, key, { total: 2 }, shortLived)).status),
        'the record to expire',
        10_000,
      );
      expect([later!.status, later!.body.total]).toEqual([201, 2]);
      expect(await ordersOf(userId)).toBe(2);
    } finally {
      await shortLived.close();
    }
  });
});

describe('IDEMPOTENCY_REQUIRED', () => {
  let strict: TestServer;
  beforeAll(async () => {
    strict = await startTestServer({ idempotency: { ttlMs: 86_400_000, required: true } }, { sharing: server });
  });
  afterAll(() => strict.close());

  it('refuses a POST without the header on both faces, and accepts it with one', async () => {
    const userId = await createUser();
    const problem = expectProblem(
      await placeOrder(userId, undefined, { total: 1 }, strict),
      400,
      'invalid-input',
      `/users/${userId}/orders`,
    );
    expect(problem.errors).toEqual([{ field: 'Idempotency-Key', message: match.stringContaining('required') }]);
    const graphql = await strict.gql(CREATE_ORDER, { input: { userId, total: 1 } });
    expect(graphql.status).toBe(400);
    expect(graphql.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', errors: [{ field: 'Idempotency-Key' }] });
    expect(await ordersOf(userId)).toBe(0);
    expect((await placeOrder(userId, uniqueKey(), { total: 1 }, strict)).status).toBe(201);
    // Reads and other writes need none.
    expect((await rest(strict, 'GET', `/users/${userId}`)).status).toBe(200);
    expect((await rest(strict, 'PATCH', `/users/${userId}`, { json: { name: 'No key needed' } })).status).toBe(200);
  });
});

describe('the background purge', () => {
  it('deletes expired records in bounded batches and leaves live ones', async () => {
    const { purgeExpiredIdempotencyKeys, PURGE_BATCH } = await import('../../src/services/idempotency.ts');
    const em = server.orm.em.fork();
    const apiKeyId = (await em.execute<{ id: string }[]>('select id from api_keys limit 1'))[0]!.id;
    await em.execute(
      `insert into idempotency_keys (api_key_id, key, fingerprint, status, headers, body, created_at, expires_at)
       select ?, 'purge-' || n, 'f', 201, '{}', null, now() - interval '2 days', now() - interval '1 day' from generate_series(1, ?) n`,
      [apiKeyId, PURGE_BATCH + 5],
    );
    await em.execute(
      `insert into idempotency_keys (api_key_id, key, fingerprint, status, headers, body, created_at, expires_at)
       values (?, 'purge-live', 'f', 201, '{}', null, now(), now() + interval '1 day')`,
      [apiKeyId],
    );
    expect(await purgeExpiredIdempotencyKeys(em)).toBeGreaterThanOrEqual(PURGE_BATCH + 5);
    const left = await em.execute<{ key: string }[]>(`select key from idempotency_keys where key like 'purge-%'`);
    expect(left).toEqual([{ key: 'purge-live' }]);
  });
});

describe('a crash between commit and response', () => {
  /** Sends one order with one key, first to a service that crashes at `failpoint`, then to a restarted one. */
  async function crashThenRetry(failpoint: string) {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'portico-idempotency-'));
    try {
      const userId = await createUser();
      const key = uniqueKey();
      const send = (url: string) =>
        fetch(`${url}/users/${userId}/orders`, {
          method: 'POST',
          headers: { 'x-api-key': server.apiKey, 'idempotency-key': key, 'content-type': 'application/json' },
          body: JSON.stringify({ total: 4200 }),
        });
      const crashing = await startServiceProcess(server.databaseUrl, dataDir, failpoint);
      await expect(send(crashing.url)).rejects.toThrow();
      expect(await crashing.exited).toBe('SIGKILL');
      const ordersAfterCrash = await ordersOf(userId);

      const restarted = await startServiceProcess(server.databaseUrl, dataDir, '');
      try {
        // Until PostgreSQL has seen the dead connection, the key may still read as in use (409).
        let retry: Response | undefined;
        await eventually(async () => (retry = await send(restarted.url)).status !== 409, 'the crashed request to be rolled back', 10_000);
        const body = (await retry!.json()) as Order;
        return {
          ordersAfterCrash,
          retry: [retry!.status, retry!.headers.get('idempotent-replayed'), body.total, retry!.headers.get('location')],
          location: `/orders/${body.id}`,
          orders: await ordersOf(userId),
        };
      } finally {
        restarted.stop();
        await restarted.exited;
      }
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  }

  it('after commit: the restarted service replays the committed outcome, without writing again', async () => {
    const outcome = await crashThenRetry('crash-after-idempotent-commit');
    expect(outcome).toEqual({ ordersAfterCrash: 1, retry: [201, 'true', 4200, outcome.location], location: match.any(String), orders: 1 });
  });

  it('before commit: nothing was written, and the retry writes once', async () => {
    const outcome = await crashThenRetry('crash-before-idempotent-commit');
    expect(outcome).toEqual({ ordersAfterCrash: 0, retry: [201, null, 4200, outcome.location], location: match.any(String), orders: 1 });
  });
});
