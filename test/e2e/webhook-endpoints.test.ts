// Webhook endpoints: registering (with the SSRF guard), the secret shown once and stored encrypted,
// rotation, ownership across API keys, the per-key limit, the ping and the fan-out of events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { prefixOf } from '../../src/services/api-key-secrets.ts';
import { revokeApiKey, rotateApiKey } from '../../src/services/api-keys.ts';
import { disableEndpointsOfDeadKeys } from '../../src/services/webhook-endpoints.ts';
import { SecretBox } from '../../src/webhooks/secret-box.ts';
import { usedCredential } from '../support/credentials.ts';
import { match } from '../support/match.ts';
import { expectProblem, rest, type Problem, type User } from '../support/rest.ts';
import { TEST_PEPPER, TEST_WEBHOOK_SECRET_KEY, startTestServer, type TestServer } from '../support/server.ts';
import { eventually } from '../support/steady-load.ts';

interface Endpoint {
  id: string;
  url: string;
  events: string[] | null;
  description: string | null;
  enabled: boolean;
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
  previousSecretExpiresAt: string | null;
  secret: string | null;
}

const RECEIVER = 'http://127.0.0.1:9/hooks';
const MAX_ENDPOINTS = 3;

let server: TestServer;

beforeAll(async () => {
  const defaults = loadConfig({});
  server = await startTestServer({
    webhooks: { ...defaults.webhooks, allowedHosts: ['127.0.0.1'], maxEndpointsPerKey: MAX_ENDPOINTS },
  });
});
afterAll(async () => {
  await server?.close();
});

/** A key of its own per test, so the per-key limit and listings start empty. */
const newKey = (scopes = ['webhooks:manage', 'users:write']) => server.createKey({ name: 'Webhook client', scopes });

async function register(key: string, body: Record<string, unknown> = {}): Promise<Endpoint> {
  const response = await rest<Endpoint>(server, 'POST', '/webhook-endpoints', {
    json: { url: RECEIVER, ...body },
    headers: { 'x-api-key': key },
  });
  if (response.status !== 201) throw new Error(`registration failed: ${response.text}`);
  usedCredential(response.body.secret!);
  return response.body;
}

async function rows<T>(sql: string, values: unknown[] = []): Promise<T[]> {
  return server.orm.em.fork().execute<T[]>(sql, values);
}

/** The event types queued for an endpoint, oldest first. */
async function queuedFor(endpointId: string): Promise<string[]> {
  const found = await rows<{ type: string }>(
    `select e.type from webhook_deliveries d join events e on e.id = d.event_id where d.endpoint_id = ? order by e.id`,
    [endpointId],
  );
  return found.map((row) => row.type);
}

describe('registering an endpoint', () => {
  it('answers 201 with its Location and the signing secret, shown this once and stored only encrypted', async () => {
    const key = await newKey();
    const response = await rest<Endpoint>(server, 'POST', '/webhook-endpoints', {
      json: { url: RECEIVER, events: ['ORDER_CREATED'], description: '  Fulfilment  ' },
      headers: { 'x-api-key': key },
    });
    expect(response.status).toBe(201);
    const endpoint = response.body;
    usedCredential(endpoint.secret!);
    expect(endpoint).toEqual({
      id: match.stringMatching(/^wep_[0-7][0-9a-hjkmnp-tv-z]{25}$/),
      url: RECEIVER,
      events: ['ORDER_CREATED'],
      description: 'Fulfilment',
      enabled: true,
      disabledReason: null,
      createdAt: match.any(String),
      updatedAt: endpoint.createdAt,
      previousSecretExpiresAt: null,
      secret: match.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    expect(Buffer.from(endpoint.secret!.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(response.headers.get('location')).toBe(`/webhook-endpoints/${endpoint.id}`);

    const read = await rest<Endpoint>(server, 'GET', `/webhook-endpoints/${endpoint.id}`, { headers: { 'x-api-key': key } });
    expect(read.body).toEqual({ ...endpoint, secret: null });

    const [stored] = await rows<{ secret: string }>(`select secret from webhook_endpoints where id = ?`, [endpoint.id]);
    expect(stored!.secret).not.toContain(endpoint.secret!.slice(6));
    expect(new SecretBox(TEST_WEBHOOK_SECRET_KEY).open(stored!.secret, endpoint.id)).toBe(endpoint.secret);
    expect(() => new SecretBox(TEST_WEBHOOK_SECRET_KEY).open(stored!.secret, 'wep_another')).toThrow();
    expect(JSON.stringify(server.logs)).not.toContain(endpoint.secret!.slice(6));
  });

  it('queues a ping for the new endpoint alone, which the event feed does not show', async () => {
    const key = await newKey();
    const first = await register(key);
    const second = await register(key);
    expect(await queuedFor(first.id)).toEqual(['ping']);
    expect(await queuedFor(second.id)).toEqual(['ping']);
    const [ping] = await rows<{ id: string; data: { object: unknown } }>(
      `select e.id, e.data from webhook_deliveries d join events e on e.id = d.event_id where d.endpoint_id = ?`,
      [second.id],
    );
    // The endpoint as GET /webhook-endpoints/{id} shows it, field for field.
    expect(ping!.data.object).toEqual(
      (await rest(server, 'GET', `/webhook-endpoints/${second.id}`, { headers: { 'x-api-key': key } })).body,
    );
    expectProblem(await rest(server, 'GET', `/events/${ping!.id}`), 404, 'not-found', `/events/${ping!.id}`);
  });

  it('keeps the secret of a creation sent with an Idempotency-Key only encrypted, and replays it to the retry', async () => {
    const key = await newKey();
    const send = () =>
      rest<Endpoint>(server, 'POST', '/webhook-endpoints', {
        json: { url: RECEIVER, description: 'Retried' },
        headers: { 'x-api-key': key, 'idempotency-key': 'create-endpoint-once' },
      });
    const first = await send();
    expect(first.status).toBe(201);
    usedCredential(first.body.secret!);
    // A retry whose first answer was lost still learns the secret: the same answer, byte for byte.
    const again = await send();
    expect([again.status, again.headers.get('idempotent-replayed'), again.text]).toEqual([201, 'true', first.text]);
    // But the recorded answer holds no secret in plain text.
    const stored = await rows<{ body: string }>("select body from idempotency_keys where key = 'create-endpoint-once'");
    expect(stored).toHaveLength(1);
    expect(stored[0]!.body).not.toContain(first.body.secret!);
    expect(stored[0]!.body).not.toContain('whsec_');
  });

  it('works on GraphQL too, the secret included', async () => {
    const key = await newKey();
    const created = await server.gql<{ createWebhookEndpoint: Endpoint }>(
      'mutation { createWebhookEndpoint(input: { url: "https://93.184.216.34/hooks", events: [USER_CREATED, USER_DELETED] }) { id url events secret } }',
      {},
      { 'x-api-key': key },
    );
    const endpoint = created.body.data!.createWebhookEndpoint;
    usedCredential(endpoint.secret!);
    expect(endpoint).toEqual({
      id: match.any(String),
      url: 'https://93.184.216.34/hooks',
      events: ['USER_CREATED', 'USER_DELETED'],
      secret: match.any(String),
    });
    const listed = await server.gql<{ webhookEndpoints: { items: Endpoint[] } }>(
      '{ webhookEndpoints { items { id secret } nextCursor } }',
      {},
      { 'x-api-key': key },
    );
    expect(listed.body.data!.webhookEndpoints.items).toEqual([{ id: endpoint.id, secret: null }]);
  });

  it('refuses bad fields all at once, naming each', async () => {
    const key = await newKey();
    const response = await rest(server, 'POST', '/webhook-endpoints', {
      json: { url: 'ftp://93.184.216.34/', description: 'x'.repeat(501) },
      headers: { 'x-api-key': key },
    });
    const problem = expectProblem(response, 400, 'invalid-input', '/webhook-endpoints');
    expect(problem.errors!.map((error) => error.field)).toEqual(['url', 'description']);
    const unknownType = await rest(server, 'POST', '/webhook-endpoints', {
      json: { url: RECEIVER, events: ['ORDER_SHIPPED'] },
      headers: { 'x-api-key': key },
    });
    expect(expectProblem(unknownType, 400, 'invalid-input', '/webhook-endpoints').errors).toEqual([
      { field: 'events', message: 'must be one of USER_CREATED, USER_UPDATED, USER_DELETED, ORDER_CREATED' },
    ]);
    const empty = await rest(server, 'POST', '/webhook-endpoints', { json: { url: RECEIVER, events: [] }, headers: { 'x-api-key': key } });
    expect(expectProblem(empty, 400, 'invalid-input', '/webhook-endpoints').errors).toEqual([
      { field: 'events', message: 'must name at least one event type, or be null for every type' },
    ]);
    // A list is an array on REST, as the document says, not the single value GraphQL would take for one.
    const single = await rest(server, 'POST', '/webhook-endpoints', {
      json: { url: RECEIVER, events: 'ORDER_CREATED' },
      headers: { 'x-api-key': key },
    });
    expect(expectProblem(single, 400, 'invalid-input', '/webhook-endpoints').errors).toEqual([
      { field: 'events', message: 'must be an array' },
    ]);
  });

  it(`allows at most ${MAX_ENDPOINTS} endpoints per API key, even when registered at once`, async () => {
    const key = await newKey();
    const responses = await Promise.all(
      Array.from({ length: MAX_ENDPOINTS + 3 }, () =>
        rest<Endpoint>(server, 'POST', '/webhook-endpoints', { json: { url: RECEIVER }, headers: { 'x-api-key': key } }),
      ),
    );
    for (const response of responses) if (response.status === 201) usedCredential(response.body.secret!);
    expect(responses.map((response) => response.status).sort()).toEqual([
      ...Array<number>(MAX_ENDPOINTS).fill(201),
      ...Array<number>(3).fill(409),
    ]);
    const refused = responses.find((response) => response.status === 409)!;
    expect((refused.body as unknown as Problem).detail).toMatch(new RegExp(`most it may have \\(${MAX_ENDPOINTS}\\)`));
    // At the limit, a registration is refused before its URL is looked at (nor its host resolved).
    const more = await rest(server, 'POST', '/webhook-endpoints', { json: { url: 'http://10.0.0.1/' }, headers: { 'x-api-key': key } });
    expect(more.status).toBe(409);
  });
});

describe('the SSRF guard', () => {
  // Every spelling of a place a webhook must never reach; the WHATWG parser turns the odd IPv4 forms into dotted quads.
  const HOSTILE: [url: string, reason: RegExp][] = [
    ['http://127.0.0.1:8080/', /loopback/],
    ['http://127.1/', /loopback/],
    ['http://2130706433/', /loopback/],
    ['http://0x7f000001/', /loopback/],
    ['http://0177.0.0.01/', /loopback/],
    ['http://localhost/', /local or metadata name/],
    ['http://api.localhost/', /local or metadata name/],
    ['http://[::1]/', /loopback/],
    ['http://[::ffff:127.0.0.1]/', /loopback/],
    ['http://[::ffff:7f00:1]/', /loopback/],
    ['http://[::127.0.0.1]/', /IPv4-compatible/],
    ['http://0/', /unspecified/],
    ['http://0.0.0.0/', /unspecified/],
    ['http://[::]/', /unspecified/],
    ['http://10.0.0.1/', /private/],
    ['http://172.16.5.4/', /private/],
    ['http://192.168.1.1/', /private/],
    ['http://169.254.169.254/latest/meta-data/', /link-local/],
    ['http://[::ffff:169.254.169.254]/', /link-local/],
    ['http://metadata.google.internal/computeMetadata/v1/', /metadata name/],
    ['http://[fd00:ec2::254]/', /unique-local/],
    ['http://100.100.100.200/', /carrier-grade NAT/],
    ['http://[fe80::1]/', /link-local/],
    ['http://[fc00::1]/', /unique-local/],
    ['http://224.0.0.1/', /multicast/],
    ['http://[ff02::1]/', /multicast/],
    ['http://255.255.255.255/', /broadcast/],
    ['http://[64:ff9b::7f00:1]/', /NAT64/],
    ['http://[2002:7f00:1::]/', /6to4/],
    ['http://192.0.0.192/', /reserved/],
    ['http://user:secret@93.184.216.34/', /credentials/],
    ['ftp://93.184.216.34/', /must use https or http/],
    ['javascript:alert(1)', /must use https or http/],
    ['https://93.184.216.34/#fragment', /fragment/],
    ['https://93.184.216.34/a?b=c#', /fragment/],
    ['/relative/path', /absolute URL/],
    [`https://93.184.216.34/${'a'.repeat(2048)}`, /at most 2048 characters/],
  ];

  // A deployment with no exceptions (the suite's own lets its receiver on 127.0.0.1 through).
  let strict: TestServer;
  beforeAll(async () => {
    strict = await startTestServer({ webhooks: { ...loadConfig({}).webhooks, allowedHosts: [] } }, { sharing: server });
  });
  afterAll(async () => {
    await strict?.close();
  });

  it(`refuses ${HOSTILE.length} hostile URLs at registration, each with the reason`, async () => {
    const key = await newKey();
    const outcomes: string[] = [];
    for (const [url] of HOSTILE) {
      const response = await rest(strict, 'POST', '/webhook-endpoints', { json: { url }, headers: { 'x-api-key': key } });
      const problem = expectProblem(response, 400, 'invalid-input', '/webhook-endpoints');
      outcomes.push(problem.errors?.[0]?.field === 'url' ? problem.errors[0].message : problem.detail);
    }
    HOSTILE.forEach(([url, reason], i) => expect(outcomes[i], url).toMatch(reason));
    expect(await rows(`select 1 from webhook_endpoints where url in (?)`, [HOSTILE.map(([url]) => url)])).toEqual([]);
  });

  it('refuses the same URLs when an endpoint is changed to them', async () => {
    const key = await newKey();
    const endpoint = await register(key);
    for (const [url, reason] of HOSTILE.slice(0, 5)) {
      const response = await rest(strict, 'PATCH', `/webhook-endpoints/${endpoint.id}`, {
        json: { url },
        contentType: 'application/merge-patch+json',
        headers: { 'x-api-key': key },
      });
      expect(expectProblem(response, 400, 'invalid-input', `/webhook-endpoints/${endpoint.id}`).detail).toMatch(reason);
    }
  });

  it('refuses a URL that is no URI as RFC 3986 writes it (the document says `format: uri`), and keeps one that is as sent', async () => {
    const key = await newKey();
    const endpoint = await register(key);
    for (const url of [
      'https://93.184.216.34/a b',
      'https://93.184.216.34/\u00f6',
      'https://93.184.216.34/%zz',
      'https://93.184.216.34/x?a=|',
      'https://93.184.216.34/{x}',
      'https://93.184.216.34\\x',
      'https://93.184.216.34/[x]',
    ]) {
      const created = await rest(strict, 'POST', '/webhook-endpoints', { json: { url }, headers: { 'x-api-key': key } });
      expect(expectProblem(created, 400, 'invalid-input', '/webhook-endpoints').errors![0]!.message, url).toMatch(/RFC 3986/);
      const changed = await server.gql(
        'mutation ($id: ID!, $url: String!) { updateWebhookEndpoint(id: $id, input: { url: $url }) { url } }',
        {
          id: endpoint.id,
          url,
        },
      );
      expect(changed.body.errors?.[0]?.extensions.code, url).toBe('BAD_USER_INPUT');
    }
    // Dot segments would be resolved away before sending: the URL shown would not be the one used.
    for (const url of [
      'https://93.184.216.34/hooks/../x',
      'https://93.184.216.34/./x',
      'https://93.184.216.34/a/..',
      'https://93.184.216.34/%2E%2e/x',
    ]) {
      const created = await rest(strict, 'POST', '/webhook-endpoints', { json: { url }, headers: { 'x-api-key': key } });
      expect(expectProblem(created, 400, 'invalid-input', '/webhook-endpoints').errors![0]!.message, url).toMatch(/\.\. path segments/);
    }
    const dotted = await register(await newKey(), { url: 'https://93.184.216.34/a.b/..c/.../x?y=../z' });
    expect(dotted.url).toBe('https://93.184.216.34/a.b/..c/.../x?y=../z');
    const encoded = await register(key, { url: 'https://93.184.216.34/a%20b/%C3%B6?x=%7C&y=%5B1%5D' });
    expect(encoded.url).toBe('https://93.184.216.34/a%20b/%C3%B6?x=%7C&y=%5B1%5D');
    const v6 = await register(key, { url: 'https://[2606:4700::1111]:8443/hooks' });
    expect(v6.url).toBe('https://[2606:4700::1111]:8443/hooks');
  });

  it('accepts public addresses, and in production only https', async () => {
    const key = await newKey();
    await register(key, { url: 'https://93.184.216.34/hooks?tenant=7' });
    await register(key, { url: 'http://[2606:4700::1111]:8443/hooks' });
    const defaults = loadConfig({});
    const production = await startTestServer({ webhooks: { ...defaults.webhooks, allowHttp: false } }, { sharing: server });
    try {
      const response = await rest(production, 'POST', '/webhook-endpoints', { json: { url: 'http://93.184.216.34/' } });
      expect(expectProblem(response, 400, 'invalid-input', '/webhook-endpoints').detail).toMatch(/must use https/);
    } finally {
      await production.close();
    }
  });

  it('refuses text PostgreSQL cannot store as sent (NUL, lone surrogates, control characters) with 400, on both faces, and changes nothing', async () => {
    const key = await newKey();
    const endpoint = await register(key, { description: 'Kept' });
    for (const [json, field] of [
      [{ url: RECEIVER, description: 'a\u0000b' }, 'description'],
      [{ url: RECEIVER, description: 'a\ud800b' }, 'description'],
      [{ url: `${RECEIVER}/a\u0000b` }, 'url'],
      [{ url: `${RECEIVER}/a\ud800b` }, 'url'],
      [{ url: `${RECEIVER}/a\u0001b` }, 'url'],
    ] as const) {
      const created = await rest(server, 'POST', '/webhook-endpoints', { json, headers: { 'x-api-key': key } });
      expect(expectProblem(created, 400, 'invalid-input', '/webhook-endpoints').errors?.map((error) => error.field)).toEqual([field]);
      const changed = await rest(server, 'PATCH', `/webhook-endpoints/${endpoint.id}`, {
        json: { [field]: json[field] },
        contentType: 'application/merge-patch+json',
        headers: { 'x-api-key': key },
      });
      expect(expectProblem(changed, 400, 'invalid-input', `/webhook-endpoints/${endpoint.id}`).errors?.map((error) => error.field)).toEqual(
        [field],
      );
    }
    const graphql = await server.gql<{ createWebhookEndpoint: unknown }>(
      'mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { secret } }',
      { input: { url: RECEIVER, description: 'a\u0000b' } },
      { 'x-api-key': key },
    );
    expect(graphql.body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    const kept = await rest<Endpoint>(server, 'GET', `/webhook-endpoints/${endpoint.id}`, { headers: { 'x-api-key': key } });
    expect(kept.body).toMatchObject({ url: RECEIVER, description: 'Kept' });
    // The database answered every time: nothing here is an outage.
    expect((await fetch(`${server.url}/ready`)).status).toBe(200);
    expect(server.logs.filter((line) => String(line.msg).startsWith('database unreachable'))).toEqual([]);
  });
});

describe('managing endpoints', () => {
  it('updates only the fields given; null events means every type', async () => {
    const key = await newKey();
    const endpoint = await register(key, { events: ['USER_CREATED'], description: 'Old' });
    const patch = (json: unknown) =>
      rest<Endpoint>(server, 'PATCH', `/webhook-endpoints/${endpoint.id}`, {
        json,
        contentType: 'application/merge-patch+json',
        headers: { 'x-api-key': key },
      });
    expect((await patch({ enabled: false })).body).toMatchObject({
      enabled: false,
      events: ['USER_CREATED'],
      description: 'Old',
      secret: null,
    });
    expect((await patch({ events: null, description: null })).body).toMatchObject({ enabled: false, events: null, description: null });
    const refused = await patch({ url: null, enabled: null });
    expect(expectProblem(refused, 400, 'invalid-input', `/webhook-endpoints/${endpoint.id}`).errors).toEqual([
      { field: 'url', message: 'cannot be null' },
      { field: 'enabled', message: 'cannot be null' },
    ]);
  });

  it('on GraphQL, keeps the fields whose variables were not sent (GraphQL input coercion)', async () => {
    const key = await newKey();
    const endpoint = await register(key, { events: ['ORDER_CREATED'], description: 'Fulfilment' });
    const updated = await server.gql<{ updateWebhookEndpoint: Endpoint }>(
      `mutation ($id: ID!, $events: [EventType!], $description: String, $enabled: Boolean) {
        updateWebhookEndpoint(id: $id, input: { events: $events, description: $description, enabled: $enabled }) { events description enabled }
      }`,
      { id: endpoint.id, enabled: false },
      { 'x-api-key': key },
    );
    expect(updated.body).toEqual({
      data: { updateWebhookEndpoint: { events: ['ORDER_CREATED'], description: 'Fulfilment', enabled: false } },
    });
  });

  it('rotates the secret: the new one shown once, the old one signing beside it for the overlap', async () => {
    const key = await newKey();
    const endpoint = await register(key);
    const [before] = await rows<{ secret: string }>(`select secret from webhook_endpoints where id = ?`, [endpoint.id]);
    const rotated = await rest<Endpoint>(server, 'POST', `/webhook-endpoints/${endpoint.id}/secrets`, {
      json: { overlapSeconds: 3600 },
      headers: { 'x-api-key': key },
    });
    expect(rotated.status).toBe(200);
    usedCredential(rotated.body.secret!);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    const expiresIn = Date.parse(rotated.body.previousSecretExpiresAt!) - Date.now();
    expect(expiresIn).toBeGreaterThan(3500_000);
    expect(expiresIn).toBeLessThanOrEqual(3600_000);
    const [after] = await rows<{ secret: string; previous_secret: string }>(
      `select secret, previous_secret from webhook_endpoints where id = ?`,
      [endpoint.id],
    );
    const box = new SecretBox(TEST_WEBHOOK_SECRET_KEY);
    expect([box.open(after!.secret, endpoint.id), box.open(after!.previous_secret, endpoint.id)]).toEqual([
      rotated.body.secret,
      endpoint.secret,
    ]);
    expect(after!.previous_secret).toBe(before!.secret);

    // No body: the default overlap; an overlap of 0 retires the old secret at once.
    const again = await rest<Endpoint>(server, 'POST', `/webhook-endpoints/${endpoint.id}/secrets`, { headers: { 'x-api-key': key } });
    usedCredential(again.body.secret!);
    expect(Date.parse(again.body.previousSecretExpiresAt!) - Date.now()).toBeGreaterThan(86_000_000);
    // A body of whitespace alone holds no value: the same as none.
    const blank = await server.fetch(`/webhook-endpoints/${endpoint.id}/secrets`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: ' \n',
    });
    const blankAnswer = (await blank.json()) as Endpoint;
    usedCredential(blankAnswer.secret!);
    expect([blank.status, Date.parse(blankAnswer.previousSecretExpiresAt!) - Date.now() > 86_000_000]).toEqual([200, true]);
    const immediate = await server.gql<{ rotateWebhookEndpointSecret: Endpoint }>(
      'mutation($id: ID!) { rotateWebhookEndpointSecret(id: $id, input: { overlapSeconds: 0 }) { secret previousSecretExpiresAt } }',
      { id: endpoint.id },
      { 'x-api-key': key },
    );
    usedCredential(immediate.body.data!.rotateWebhookEndpointSecret.secret!);
    expect(immediate.body.data!.rotateWebhookEndpointSecret.previousSecretExpiresAt).toBeNull();
    const tooLong = await rest(server, 'POST', `/webhook-endpoints/${endpoint.id}/secrets`, {
      json: { overlapSeconds: 8 * 86_400 },
      headers: { 'x-api-key': key },
    });
    // Out of range or not whole, one message.
    const fractional = await rest(server, 'POST', `/webhook-endpoints/${endpoint.id}/secrets`, {
      json: { overlapSeconds: 1.5 },
      headers: { 'x-api-key': key },
    });
    expect(
      [tooLong, fractional].map(
        (answer) => expectProblem(answer, 400, 'invalid-input', `/webhook-endpoints/${endpoint.id}/secrets`).errors,
      ),
    ).toEqual([
      [{ field: 'overlapSeconds', message: 'must be a whole number from 0 to 604800' }],
      [{ field: 'overlapSeconds', message: 'must be a whole number from 0 to 604800' }],
    ]);
    expect(JSON.stringify(server.logs)).not.toContain('whsec_');
  });

  it('rotates once at a time: of two rotations at once, each secret answered signs, one as the new secret and one as the old', async () => {
    const key = await newKey();
    const endpoint = await register(key);
    const rotate = () =>
      rest<Endpoint>(server, 'POST', `/webhook-endpoints/${endpoint.id}/secrets`, {
        json: { overlapSeconds: 3600 },
        headers: { 'x-api-key': key },
      });
    const box = new SecretBox(TEST_WEBHOOK_SECRET_KEY);
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all([rotate(), rotate(), rotate()]);
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
      const secrets = answers.map((answer) => usedCredential(answer.body.secret!));
      const [row] = await rows<{ secret: string; previous_secret: string }>(
        `select secret, previous_secret from webhook_endpoints where id = ?`,
        [endpoint.id],
      );
      const [current, previous] = [box.open(row!.secret, endpoint.id), box.open(row!.previous_secret, endpoint.id)];
      // One after another: the last rotation kept the one before it as the old secret.
      expect(secrets).toContain(current);
      expect(secrets).toContain(previous);
      expect(current).not.toBe(previous);
    }
  });

  it('keeps no old secret that cannot sign: after the webhook key changed, a rotation signs with the new secret alone', async () => {
    const key = await newKey();
    const endpoint = await register(key);
    const unreadable = new SecretBox('another-webhook-secret-key-that-is-long-enough-0123').seal('whsec_old', endpoint.id);
    await rows(`update webhook_endpoints set secret = ? where id = ?`, [unreadable, endpoint.id]);
    const rotated = await rest<Endpoint>(server, 'POST', `/webhook-endpoints/${endpoint.id}/secrets`, {
      json: { overlapSeconds: 3600 },
      headers: { 'x-api-key': key },
    });
    expect(rotated.status).toBe(200);
    usedCredential(rotated.body.secret!);
    expect(rotated.body.previousSecretExpiresAt).toBeNull();
    const [row] = await rows<{ previous_secret: string | null }>(`select previous_secret from webhook_endpoints where id = ?`, [
      endpoint.id,
    ]);
    expect(row!.previous_secret).toBeNull();
  });

  it("keeps each key to its own endpoints: another key's are not found; an admin key sees all; a rotated key keeps them", async () => {
    const owner = await newKey();
    const stranger = await newKey();
    const admin = await server.createKey({ name: 'Back office', scopes: ['admin'] });
    const endpoint = await register(owner);
    const as = (key: string, method: string, suffix = '', json?: unknown) =>
      rest(server, method, `/webhook-endpoints/${endpoint.id}${suffix}`, {
        ...(json === undefined ? {} : { json }),
        ...(method === 'PATCH' ? { contentType: 'application/merge-patch+json' } : {}),
        headers: { 'x-api-key': key },
      });
    for (const [method, suffix, json] of [
      ['GET', ''],
      ['PATCH', '', { enabled: false }],
      ['POST', '/secrets', {}],
      ['DELETE', ''],
    ] as const) {
      expectProblem(await as(stranger, method, suffix, json), 404, 'not-found', `/webhook-endpoints/${endpoint.id}${suffix}`);
    }
    // Another key's endpoint is not found before its new URL is looked at (nor its host resolved).
    expectProblem(await as(stranger, 'PATCH', '', { url: 'http://10.0.0.1/' }), 404, 'not-found', `/webhook-endpoints/${endpoint.id}`);
    const strangers = await rest<{ items: Endpoint[] }>(server, 'GET', '/webhook-endpoints', { headers: { 'x-api-key': stranger } });
    expect(strangers.body.items).toEqual([]);
    expect((await as(admin, 'GET')).status).toBe(200);
    const all = await rest<{ items: Endpoint[] }>(server, 'GET', '/webhook-endpoints?limit=100', { headers: { 'x-api-key': admin } });
    expect(all.body.items.map((item) => item.id)).toContain(endpoint.id);

    const [ownerKey] = await rows<{ id: string }>(`select id from api_keys where prefix = ?`, [prefixOf(owner)]);
    const successor = usedCredential((await rotateApiKey(server.orm.em.fork(), TEST_PEPPER, ownerKey!.id, 60_000)).secret);
    // The new key reaches the server by notification.
    await eventually(async () => (await as(successor, 'GET')).status !== 401, 'the rotated key to verify', 10_000);
    expect((await as(successor, 'GET')).status).toBe(200);
    expect((await as(owner, 'DELETE')).status).toBe(204);
    // An admin key sees every key's endpoints, so it is told there is none, not that this key has none.
    expectProblem(await as(admin, 'GET'), 404, 'not-found', `/webhook-endpoints/${endpoint.id}`);
    expect(expectProblem(await as(admin, 'DELETE'), 404, 'not-found', `/webhook-endpoints/${endpoint.id}`).detail).toBe(
      `No webhook endpoint has the id ${endpoint.id}.`,
    );
    expect(expectProblem(await as(stranger, 'DELETE'), 404, 'not-found', `/webhook-endpoints/${endpoint.id}`).detail).toBe(
      `No webhook endpoint of this API key has the id ${endpoint.id}.`,
    );
  });

  it('stops sending events to the endpoints of a key revoked, or expired, with its successors: they are disabled, saying why', async () => {
    const admin = await server.createKey({ name: 'Back office', scopes: ['admin'] });
    const keyId = async (key: string) => (await rows<{ id: string }>(`select id from api_keys where prefix = ?`, [prefixOf(key)]))[0]!.id;
    const createUser = (email: string) => rest(server, 'POST', '/users', { json: { name: 'Fan', email }, headers: { 'x-api-key': admin } });
    const read = async (id: string) =>
      (await rest<Endpoint>(server, 'GET', `/webhook-endpoints/${id}`, { headers: { 'x-api-key': admin } })).body;

    // Rotated: the successor lives, and the endpoint with it, even once the old key is revoked.
    const rotated = await newKey();
    const kept = await register(rotated, { events: ['USER_CREATED'] });
    usedCredential((await rotateApiKey(server.orm.em.fork(), TEST_PEPPER, await keyId(rotated), 60_000)).secret);
    await revokeApiKey(server.orm.em.fork(), await keyId(rotated));
    // Revoked, as a leaked key is: at once, in the revocation's transaction.
    const leaked = await newKey();
    const revoked = await register(leaked, { events: ['USER_CREATED'] });
    await revokeApiKey(server.orm.em.fork(), await keyId(leaked));
    expect(await read(revoked.id)).toMatchObject({
      enabled: false,
      disabledReason: match.stringMatching(/^The API key that registered it was revoked at /),
    });
    // Expired: by the service's upkeep, which runs every minute.
    const expiring = await newKey();
    const lapsed = await register(expiring, { events: ['USER_CREATED'] });
    await rows(`update api_keys set expires_at = now() - interval '1 second' where lineage_id = ?`, [await keyId(expiring)]);
    expect(await disableEndpointsOfDeadKeys(server.orm.em.fork())).toBe(1);
    expect(await read(lapsed.id)).toMatchObject({
      enabled: false,
      disabledReason: match.stringMatching(/^Every API key that could manage it has expired or was revoked /),
    });

    expect((await createUser('fan-after-revocation@example.com')).status).toBe(201);
    // Each was sent its ping when registered; the user's creation, only the living key's.
    expect(await queuedFor(revoked.id)).not.toContain('user.created');
    expect(await queuedFor(lapsed.id)).not.toContain('user.created');
    expect(await queuedFor(kept.id)).toContain('user.created');
    expect(await read(kept.id)).toMatchObject({ enabled: true, disabledReason: null });
  });

  it('needs the webhooks:manage scope', async () => {
    const key = await newKey(['users:read', 'users:write']);
    expectProblem(
      await rest(server, 'GET', '/webhook-endpoints', { headers: { 'x-api-key': key } }),
      403,
      'forbidden',
      '/webhook-endpoints',
    );
    expectProblem(
      await rest(server, 'POST', '/webhook-endpoints', { json: { url: RECEIVER }, headers: { 'x-api-key': key } }),
      403,
      'forbidden',
      '/webhook-endpoints',
    );
  });

  it('pages through its endpoints with a cursor bound to the key', async () => {
    const key = await newKey();
    const ids = [(await register(key)).id, (await register(key)).id, (await register(key)).id];
    const first = await rest<{ items: Endpoint[]; nextCursor: string }>(server, 'GET', '/webhook-endpoints?limit=2', {
      headers: { 'x-api-key': key },
    });
    const second = await rest<{ items: Endpoint[]; nextCursor: string | null }>(
      server,
      'GET',
      `/webhook-endpoints?limit=2&cursor=${first.body.nextCursor}`,
      { headers: { 'x-api-key': key } },
    );
    expect([...first.body.items, ...second.body.items].map((item) => item.id)).toEqual(ids);
    expect(second.body.nextCursor).toBeNull();
    const other = await newKey();
    expectProblem(
      await rest(server, 'GET', `/webhook-endpoints?cursor=${first.body.nextCursor}`, { headers: { 'x-api-key': other } }),
      400,
      'invalid-input',
      '/webhook-endpoints',
    );
  });
});

describe('fan-out', () => {
  it('queues each event for every enabled endpoint subscribed to its type at the time, and no other', async () => {
    const key = await newKey();
    const everything = await register(key);
    const ordersOnly = await register(key, { events: ['ORDER_CREATED'] });
    const disabled = await register(key);
    await rest(server, 'PATCH', `/webhook-endpoints/${disabled.id}`, {
      json: { enabled: false },
      contentType: 'application/merge-patch+json',
      headers: { 'x-api-key': key },
    });
    const user = await rest<User>(server, 'POST', '/users', { json: { name: 'Fan Out', email: `fan-out-${Date.now()}@example.com` } });
    await rest(server, 'POST', `/users/${user.body.id}/orders`, { json: { total: 10 } });
    const late = await newKey();
    const latecomer = await register(late);
    await rest(server, 'DELETE', `/users/${user.body.id}`);

    expect(await queuedFor(everything.id)).toEqual(['ping', 'user.created', 'order.created', 'user.deleted']);
    expect(await queuedFor(ordersOnly.id)).toEqual(['ping', 'order.created']);
    expect(await queuedFor(disabled.id)).toEqual(['ping']);
    expect(await queuedFor(latecomer.id)).toEqual(['ping', 'user.deleted']);
  });

  it('lets writes go on while endpoints are deleted: an endpoint deleted as an event is recorded is skipped, not an error', async () => {
    const key = await newKey();
    const user = await rest<User>(server, 'POST', '/users', { json: { name: 'Racing', email: `racing-${Date.now()}@example.com` } });
    let churning = true;
    const statuses: number[] = [];
    const writer = async () => {
      while (churning) statuses.push((await rest(server, 'POST', `/users/${user.body.id}/orders`, { json: { total: 1 } })).status);
    };
    const writers = [writer(), writer(), writer()];
    try {
      for (let i = 0; i < 40; i++) {
        const endpoint = await register(key);
        expect((await rest(server, 'DELETE', `/webhook-endpoints/${endpoint.id}`, { headers: { 'x-api-key': key } })).status).toBe(204);
      }
    } finally {
      churning = false;
      await Promise.all(writers);
    }
    expect(statuses.length).toBeGreaterThan(40);
    expect(statuses.filter((status) => status !== 201)).toEqual([]);
  });
});
