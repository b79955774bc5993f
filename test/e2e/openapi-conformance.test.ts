// What the OpenAPI document promises against what a running server answers: real requests on every
// REST route, successes and problems, each body validated with a JSON Schema 2020-12 validator
// (ajv, with its formats) against the schema the document gives for that operation and status. A
// client generated from the document must be able to read every answer.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isIdnEmail } from '@hyperjump/json-schema-formats';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { buildOpenApiDocument } from '../../src/rest/openapi.ts';
import { schema } from '../../src/graphql/schema.ts';
import { usedCredential } from '../support/credentials.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { eventually } from '../support/steady-load.ts';
import { startTestWorker } from '../support/worker.ts';

type Json = Record<string, unknown>;
interface DocumentedResponse {
  $ref?: string;
  description?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema: Json; example?: { type?: string } }>;
}
interface Operation {
  responses: Record<string, DocumentedResponse>;
}

let server: TestServer;
let document: { paths: Record<string, Record<string, Operation>>; components: { responses: Record<string, DocumentedResponse> } };
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
// RFC 6531 addresses (non-ASCII local parts and domains), checked by a validator of that grammar:
// ajv-formats has no checker of its own for them.
ajv.addFormat('idn-email', isIdnEmail);
/** Headers whose presence is part of the contract: each one sent must be documented for its answer. */
const CONTRACT_HEADERS = [
  'Location',
  'Retry-After',
  'WWW-Authenticate',
  'Idempotent-Replayed',
  'Accept-Encoding',
  'Accept-Patch',
  'RateLimit',
  'RateLimit-Policy',
];
const validators = new Map<string, ValidateFunction>();

beforeAll(async () => {
  server = await startTestServer({ webhooks: { ...loadConfig({}).webhooks, allowedHosts: ['127.0.0.1'] } });
  document = buildOpenApiDocument(schema, 'test', server.url) as typeof document;
  ajv.addSchema(document, 'openapi.json');
});
afterAll(() => server.close());

/** The documented path a request path falls under, by its parameters' positions. */
function templateOf(path: string): string {
  const bare = path.split('?')[0]!;
  const found = Object.keys(document.paths).find((template) => new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`).test(bare));
  if (!found) throw new Error(`no documented path for ${bare}`);
  return found;
}

/** Validates the answer to `method path` against the document; returns the parsed body. */
async function conforming(method: string, path: string, init: { json?: unknown; headers?: Record<string, string> } = {}) {
  const response = await server.fetch(path, {
    method,
    headers: { ...(init.json === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
  const text = await response.text();
  const template = templateOf(path);
  const operation = document.paths[template]![method.toLowerCase()];
  expect(operation, `${method} ${template} is documented`).toBeDefined();
  let answer = operation!.responses[String(response.status)];
  expect(answer, `${method} ${template} documents ${response.status}: ${text}`).toBeDefined();
  if (answer!.$ref) answer = document.components.responses[answer!.$ref.split('/').pop()!];
  const key = `${method} ${template} ${response.status}`;
  const undocumented = CONTRACT_HEADERS.filter((name) => response.headers.has(name) && !(name in (answer!.headers ?? {})));
  expect(undocumented, `${key} sends only documented headers`).toEqual([]);
  const contentType = response.headers.get('content-type')?.split(';')[0] ?? '';
  if (!answer!.content) {
    expect(text, `${method} ${template} ${response.status} has no body`).toBe('');
    return { status: response.status, body: undefined, headers: response.headers };
  }
  const declared = answer!.content[contentType];
  expect(declared, `${method} ${template} ${response.status} is documented in ${contentType}`).toBeDefined();
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile(resolved(declared!.schema));
    validators.set(key, validate);
  }
  const body: unknown = JSON.parse(text);
  expect(validate(body) ? [] : validate.errors, `${key}: ${text}`).toEqual([]);
  if (contentType === 'application/problem+json') {
    // The answer names its problem type where the document says which it may be.
    const type = (body as { type: string }).type;
    const named = declared!.example?.type === type || answer!.description?.includes(`\`${type}\``);
    expect(named, `${key} documents the problem type ${type}`).toBe(true);
  }
  return { status: response.status, body: body as Json, headers: response.headers };
}

/** A schema whose `$ref`s point into the document registered as `openapi.json`. */
function resolved(schemaPart: Json): Json {
  return JSON.parse(JSON.stringify(schemaPart).replaceAll('"#/components/', '"openapi.json#/components/')) as Json;
}

describe('every REST answer is what the OpenAPI document says it is', () => {
  it('users and orders, successes and problems', async () => {
    const created = await conforming('POST', '/users', { json: { name: 'Åsa Öberg', email: 'ÅSA@bücher.example' } });
    expect(created.status).toBe(201);
    const user = created.body!.id as string;
    await conforming('GET', `/users/${user}`);
    await conforming('GET', '/users?limit=1&sort=-name');
    await conforming('GET', '/users?page=1&limit=1');
    await conforming('PATCH', `/users/${user}`, { json: { name: 'Åsa' } });
    await conforming('PUT', `/users/${user}`, { json: { name: 'Åsa Ö.', email: 'åsa@bücher.example' } });
    const order = await conforming('POST', `/users/${user}/orders`, { json: { total: 1999 } });
    await conforming('GET', `/users/${user}/orders`);
    await conforming('GET', `/orders/${order.body!.id as string}`);
    await conforming('GET', '/events?limit=2');

    expect((await conforming('GET', '/users/usr_01jd3x3b8vfb9s1p4t4p6q2k7m')).status).toBe(404);
    expect((await conforming('POST', '/users', { json: { name: 'x' } })).status).toBe(400);
    // Fields and parameters are named as the client wrote them, an empty name too.
    expect((await conforming('GET', '/users?=1')).status).toBe(400);
    expect((await conforming('POST', '/users', { json: { name: 'N', email: 'n@example.com', '': 1 } })).status).toBe(400);
    expect((await conforming('POST', '/users', { json: { name: 'Again', email: 'åsa@bücher.example' } })).status).toBe(409);
    expect((await conforming('GET', '/users', { headers: { 'x-api-key': '' } })).status).toBe(401);
    expect((await conforming('GET', '/users', { headers: { 'x-filler': 'a'.repeat(17_000) } })).status).toBe(431);
    expect((await conforming('GET', `/users?after_id=${user}&sort=name`)).status).toBe(400);
    // Refusals a write keeps for its Idempotency-Key come back replayed, as the document says they may.
    for (const [path, json, status] of [
      ['/users', { name: 'Again', email: 'åsa@bücher.example' }, 409],
      ['/users', { name: 'Bad', email: 'not an address' }, 400],
      ['/users/usr_01jd3x3b8vfb9s1p4t4p6q2k7m/orders', { total: 5 }, 404],
    ] as const) {
      const headers = { 'idempotency-key': `conformance-${status}` };
      expect((await conforming('POST', path, { json, headers })).status).toBe(status);
      const replay = await conforming('POST', path, { json, headers });
      expect([replay.status, replay.headers.get('idempotent-replayed')]).toEqual([status, 'true']);
    }
    const encoded = await conforming('POST', '/users', {
      json: { name: 'Z', email: 'z@example.com' },
      headers: { 'content-encoding': 'gzip' },
    });
    expect([encoded.status, encoded.headers.get('accept-encoding')]).toEqual([415, 'identity']);
    const patched = await conforming('PATCH', `/users/${user}`, { json: { name: 'Z' }, headers: { 'content-type': 'text/plain' } });
    expect(patched.status).toBe(415);
    expect(patched.headers.get('accept-patch')).toContain('application/merge-patch+json');
    // A write with no body of its own is refused a body over the limit, as documented.
    expect((await conforming('DELETE', `/users/${user}`, { json: { padding: 'x'.repeat(70_000) } })).status).toBe(413);
    expect((await conforming('DELETE', `/users/${user}`)).status).toBe(204);
  });

  it('webhook endpoints, their deliveries and their secrets', async () => {
    const created = await conforming('POST', '/webhook-endpoints', {
      json: { url: 'http://127.0.0.1:9/hooks', events: null, description: null },
    });
    expect(created.status).toBe(201);
    usedCredential(created.body!.secret as string);
    const endpoint = created.body!.id as string;
    await conforming('GET', `/webhook-endpoints/${endpoint}`);
    await conforming('GET', '/webhook-endpoints');
    await conforming('PATCH', `/webhook-endpoints/${endpoint}`, { json: { events: ['ORDER_CREATED'], description: 'Orders' } });
    await conforming('PATCH', `/webhook-endpoints/${endpoint}`, { json: { events: null, description: null } });
    const rotated = await conforming('POST', `/webhook-endpoints/${endpoint}/secrets`, { json: {} });
    usedCredential(rotated.body!.secret as string);
    await conforming('GET', `/webhook-endpoints/${endpoint}/deliveries`);
    await conforming('POST', `/webhook-endpoints/${endpoint}/redeliveries`, { json: {} });
    expect((await conforming('DELETE', `/webhook-endpoints/${endpoint}`)).status).toBe(204);
  });

  it('a re-send of a delivery that is under way', async () => {
    // A receiver that answers the endpoint's ping and holds every event: its first attempt stays under way.
    const held: http.ServerResponse[] = [];
    const receiver = http.createServer((request, response) => {
      if (request.headers['x-portico-event-type'] === 'ping') response.end();
      else held.push(response);
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    // Its attempts time out long after the re-send below is answered.
    const worker = await startTestWorker(server, { timeoutMs: 10_000 });
    try {
      const port = (receiver.address() as AddressInfo).port;
      const created = await conforming('POST', '/webhook-endpoints', {
        json: { url: `http://127.0.0.1:${port}/hooks`, events: ['USER_CREATED'] },
      });
      usedCredential(created.body!.secret as string);
      const endpoint = created.body!.id as string;
      await conforming('POST', '/users', { json: { name: 'Held', email: 'held@example.com' } });
      await eventually(() => held.length > 0, "the event's first attempt to be under way", 10_000);
      const list = await conforming('GET', `/webhook-endpoints/${endpoint}/deliveries`);
      const { eventId } = (list.body!.items as { eventId: string; eventType: string }[]).find((item) => item.eventType === 'user.created')!;
      const refused = await conforming('POST', `/webhook-endpoints/${endpoint}/deliveries/${eventId}/attempts`);
      expect([refused.status, refused.body!.type]).toEqual([409, 'https://portico.dev/problems/conflict']);
      expect((await conforming('DELETE', `/webhook-endpoints/${endpoint}`)).status).toBe(204);
    } finally {
      for (const response of held) response.destroy();
      await worker.stop();
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });
});
