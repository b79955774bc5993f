// The OpenAPI document of the REST facade: checked in as the code prints it, served as checked in,
// valid for two independent tools, and describing exactly the routes the server answers, with the
// HTTP contract (Problem Details, 201 + Location, 204, path patterns) the adapter keeps. SOFA's own
// generated endpoints must not leak out next to it.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_FILE, printedOpenApi } from '../../src/rest/print.ts';
import { ROUTES, pathParameters } from '../../src/rest/routes.ts';
import { match } from '../support/match.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { PRINTED_PUBLIC_URL } from '../../src/rest/print.ts';

type Json = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Json;
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: Json;
  responses: Record<string, Json>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { responses: Record<string, Json>; schemas: Record<string, Json> };
}

const PROBLEM_REF = '#/components/schemas/Problem';
const VERBS = new Set(['create', 'update', 'delete', 'get', 'list', 'remove', 'add', 'set', 'fetch']);

let server: TestServer;
let doc: Document;
beforeAll(async () => {
  server = await startTestServer();
  doc = JSON.parse(await fs.readFile(OPENAPI_FILE, 'utf8')) as Document;
});
afterAll(() => server.close());

/** The operations of the document, with their path and method. */
function operations(): { path: string; method: string; operation: Operation }[] {
  return Object.entries(doc.paths).flatMap(([route, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ path: route, method, operation })),
  );
}

/** A response object, following a `$ref` into `components.responses`. */
function resolveResponse(response: Json): Json {
  const ref = response.$ref;
  if (typeof ref !== 'string') return response;
  const name = ref.replace('#/components/responses/', '');
  expect(doc.components.responses[name], ref).toBeDefined();
  return doc.components.responses[name]!;
}

/** The words of a path segment, split at hyphens, underscores and camelCase humps. */
const words = (segment: string) =>
  segment
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .split(/[\s\-_.{}]+/)
    .filter(Boolean)
    .map((word) => word.toLowerCase());

/** Runs `redocly` from the installed @redocly/cli with this Node, as `npx redocly` would. */
async function redocly(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const require = createRequire(import.meta.url);
  const manifestPath = require.resolve('@redocly/cli/package.json');
  const manifest = JSON.parse(await fs.readFile(manifestPath, 'utf8')) as { bin: Record<string, string> };
  const bin = path.join(path.dirname(manifestPath), manifest.bin.redocly!);
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [bin, ...args], { env, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return {
      code: typeof failed.code === 'number' ? failed.code : -1,
      stdout: failed.stdout ?? '',
      stderr: failed.stderr ?? String(error),
    };
  }
}

async function fetchProblem(method: string, target: string): Promise<{ status: number; contentType: string | null; body: Json }> {
  const response = await server.fetch(target, {
    method,
    headers: { accept: 'application/json', ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
    body: method === 'POST' ? '{}' : undefined,
  });
  const text = await response.text();
  return { status: response.status, contentType: response.headers.get('content-type'), body: (text ? JSON.parse(text) : {}) as Json };
}

describe('the checked-in document', () => {
  it('is the document the code prints (run `npm run schema:print` to refresh it)', async () => {
    expect(await fs.readFile(OPENAPI_FILE, 'utf8'), 'schema/openapi.json is stale: run `npm run schema:print`').toBe(printedOpenApi());
  });

  it('is what a running server serves at GET /openapi.json, to any origin, naming the address it came to', async () => {
    const response = await fetch(`${server.url}/openapi.json`, { headers: { origin: 'https://editor.example.com' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const text = await response.text();
    const served = JSON.parse(text) as Document & { servers: { url: string }[] };
    // HEAD: the same headers, the length of what GET sends included.
    const head = await fetch(`${server.url}/openapi.json`, { method: 'HEAD' });
    expect([head.status, head.headers.get('content-length')]).toEqual([200, String(Buffer.byteLength(text))]);
    expect(served.servers).toEqual([{ url: server.url, description: 'This service' }]);
    // The checked-in copy names the default address, so it stays the same wherever it is printed.
    expect({ ...served, servers: (doc as Document & { servers: unknown }).servers }).toEqual(doc);
    expect((doc as Document & { servers: unknown }).servers).toEqual([{ url: PRINTED_PUBLIC_URL, description: 'This service' }]);
    const configured = await startTestServer({ publicUrl: 'https://api.example.com' }, { sharing: server });
    try {
      const named = (await (await fetch(`${configured.url}/openapi.json`)).json()) as { servers: { url: string }[] };
      expect(named.servers[0]!.url).toBe('https://api.example.com');
    } finally {
      await configured.close();
    }
  });

  it('names the address a trusted proxy says it was fetched from, and believes no one else', async () => {
    const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.com' };
    const serverOf = async (url: string) =>
      ((await (await fetch(`${url}/openapi.json`, { headers: forwarded })).json()) as { servers: { url: string }[] }).servers[0]!.url;
    expect(await serverOf(server.url)).toBe(server.url);
    const behindProxy = await startTestServer({ trustProxy: ['127.0.0.0/8', '::1/128'] }, { sharing: server });
    try {
      expect(await serverOf(behindProxy.url)).toBe('https://api.example.com');
      // RFC 7239's Forwarded says the same.
      const standard = await fetch(`${behindProxy.url}/openapi.json`, {
        headers: { forwarded: 'for=192.0.2.60;proto=https;host="api.example.com:8443"' },
      });
      expect(((await standard.json()) as { servers: { url: string }[] }).servers[0]!.url).toBe('https://api.example.com:8443');
    } finally {
      await behindProxy.close();
    }
  });

  it('is a valid OpenAPI document for swagger-parser', async () => {
    const validated = await SwaggerParser.validate(structuredClone(doc) as never);
    expect(validated).toMatchObject({ openapi: '3.1.0' });
  });

  it('passes `redocly lint` with every rule (redocly.yaml) with no errors or warnings', async () => {
    const { code, stdout, stderr } = await redocly('lint', OPENAPI_FILE, '--format=json');
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: unknown[] };
    expect([report.totals.errors, report.totals.warnings], JSON.stringify(report.problems, null, 2)).toEqual([0, 0]);
  });
});

describe('what tools learn from the document', () => {
  it("carries a user's life end to end, as the documented Arazzo workflow run by `redocly respect` against a live server", async () => {
    const { code, stdout, stderr } = await redocly(
      'respect',
      'schema/user-life.arazzo.yaml',
      '--server',
      `portico=${server.url}`,
      '--input',
      `apiKey=${server.apiKey}`,
      '--input',
      `email=arazzo-${process.pid}-${Date.now()}@example.com`,
    );
    expect(code, `${stdout}\n${stderr}`).toBe(0);
    // Every step's criteria, and respect's own checks of each answer against the document (status, media type, schema).
    expect(stdout).toMatch(/Workflows: 1 passed, 1 total/);
    expect(stdout).toMatch(/Steps: 7 passed, 7 total/);
    expect(stdout).toMatch(/Checks: (\d+) passed, \1 total/);
  });

  it('names the user token, and exactly the operations that need it besides the key (unless it is an admin key)', () => {
    const withToken = operations().filter(({ operation }) => 'security' in operation);
    expect(withToken.map(({ operation }) => operation.operationId).sort()).toEqual(
      ROUTES.filter((route) => route.userToken)
        .map((route) => route.operationId)
        .sort(),
    );
    expect(withToken.length).toBe(6);
    for (const { operation } of withToken)
      expect((operation as unknown as Json).security).toEqual([{ ApiKey: [], UserToken: [] }, { ApiKey: [] }]);
    const schemes = (doc.components as unknown as { securitySchemes: Json }).securitySchemes;
    expect(schemes.UserToken).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(doc.components.responses.Unauthenticated).toMatchObject({ headers: { 'WWW-Authenticate': match.any(Object) } });
  });

  it('describes what REST does, not what GraphQL does', () => {
    const described = Object.fromEntries(
      operations().map(({ operation }) => [operation.operationId, (operation as { description?: string }).description ?? '']),
    );
    expect(described.getUser).toMatch(/404/);
    expect(described.getUser).not.toMatch(/null/);
    expect(described.getOrder).toMatch(/404/);
    expect(described.deleteUser).toMatch(/204 with no body/);
    expect(described.listUserOrders).not.toMatch(/NOT_FOUND|sort/);
    expect(Object.entries(described).filter(([, text]) => text === '')).toEqual([]);
    expect((doc as unknown as { info: Json }).info.contact).toEqual({ name: 'Portico', url: 'https://portico.dev' });
  });

  it('marks every field of a response required, nullable ones included (nextCursor is always there)', () => {
    for (const name of ['OrderList', 'EventList', 'WebhookEndpointList', 'CursorPagination', 'User', 'WebhookEndpoint']) {
      const schema = doc.components.schemas[name] as { properties: Json; required: string[] };
      expect(schema.required.sort(), name).toEqual(Object.keys(schema.properties).sort());
    }
    expect((doc.components.schemas.OrderList as { properties: Record<string, Json> }).properties.nextCursor).toMatchObject({
      type: ['string', 'null'],
    });
  });

  it('refuses an empty list of event types, as the service does (null is every type)', () => {
    for (const name of ['CreateWebhookEndpointBody', 'UpdateWebhookEndpointBody', 'WebhookEndpoint']) {
      const events = (doc.components.schemas[name] as { properties: Record<string, Json> }).properties.events;
      expect(events, name).toMatchObject({ type: ['array', 'null'], minItems: 1 });
    }
  });
});

describe('the documented routes', () => {
  it('are exactly the routes of the route table, each under its path and method', () => {
    const documented = operations().map(
      ({ path: route, method, operation }) => `${method.toUpperCase()} ${route} ${operation.operationId}`,
    );
    const routed = ROUTES.map((route) => `${route.method} ${route.path} ${route.operationId}`);
    expect(documented.sort()).toEqual(routed.sort());
    expect(new Set(routed).size).toBe(ROUTES.length);
  });

  it('name resources, not actions, and include no SOFA webhook', () => {
    for (const route of Object.keys(doc.paths)) {
      // SOFA's own route for GraphQL subscriptions; webhook endpoints are a resource of ours.
      expect(route).not.toMatch(/^\/webhook(\/|$)/);
      for (const segment of route.split('/').filter(Boolean)) {
        for (const word of words(segment)) expect(VERBS.has(word), `${route}: "${segment}" reads as a verb`).toBe(false);
      }
    }
  });

  it('answer errors with Problem Details: a 4xx and a 500 on every operation', () => {
    for (const { path: route, method, operation } of operations()) {
      const statuses = Object.keys(operation.responses);
      const clientErrors = statuses.filter((status) => /^4\d\d$/.test(status));
      expect(clientErrors.length, `${method} ${route}`).toBeGreaterThan(0);
      expect(statuses, `${method} ${route}`).toContain('500');
      for (const status of [...clientErrors, '500']) {
        const response = resolveResponse(operation.responses[status]!);
        const content = response.content as Record<string, { schema?: Json }> | undefined;
        expect(Object.keys(content ?? {}), `${method} ${route} ${status}`).toEqual(['application/problem+json']);
        expect(content!['application/problem+json']!.schema, `${method} ${route} ${status}`).toEqual({ $ref: PROBLEM_REF });
      }
    }
    expect(doc.components.schemas.Problem).toMatchObject({ required: match.arrayContaining(['type', 'title', 'status', 'detail']) });
  });

  it('document 201 with a Location header for a POST that creates a resource, and 204 with no content for DELETE', () => {
    const creating = new Set(ROUTES.filter((r) => r.location).map((r) => `${r.method.toLowerCase()} ${r.path}`));
    for (const { path: route, method, operation } of operations()) {
      const success = Object.keys(operation.responses).filter((status) => /^2\d\d$/.test(status));
      // A POST that makes no new resource of its own (a secret rotation) answers 200 with what it changed.
      if (method === 'post' && !creating.has(`post ${route}`)) expect(success, `POST ${route}`).toEqual(['200']);
      if (creating.has(`${method} ${route}`)) {
        expect(success, `POST ${route}`).toEqual(['201']);
        const created = operation.responses['201']!;
        expect(created.headers, `POST ${route}`).toMatchObject({ Location: { schema: { type: 'string' } } });
        expect(created.content, `POST ${route}`).toHaveProperty(['application/json', 'schema', '$ref']);
      }
      if (method === 'delete') {
        expect(success, `DELETE ${route}`).toEqual(['204']);
        expect(operation.responses['204']!.content, `DELETE ${route}`).toBeUndefined();
      }
    }
    expect(creating.size).toBeGreaterThanOrEqual(3);
    expect(operations().filter((o) => o.method === 'post')).toHaveLength(ROUTES.filter((r) => r.method === 'POST').length);
    expect(operations().some((o) => o.method === 'delete')).toBe(true);
  });

  it('offer Idempotency-Key on every write, with its 409 and 422 answers and Idempotent-Replayed, and on no read', () => {
    for (const { path: route, method, operation } of operations()) {
      const header = operation.parameters?.find((parameter) => parameter.in === 'header' && parameter.name === 'Idempotency-Key');
      if (method === 'get') {
        expect(header, `GET ${route}`).toBeUndefined();
        continue;
      }
      expect(header, `${method} ${route}`).toMatchObject({ required: false, schema: { minLength: 1, maxLength: 255 } });
      const inFlight = resolveResponse(operation.responses['409']!);
      expect(inFlight.description, `${method} ${route}`).toMatch(/Idempotency key in use/);
      expect(inFlight.headers, `${method} ${route}`).toHaveProperty('Retry-After');
      expect(resolveResponse(operation.responses['422']!).description, `${method} ${route}`).toBe('Idempotency key reused');
      const success = Object.entries(operation.responses).find(([status]) => /^2\d\d$/.test(status))![1];
      expect(success.headers, `${method} ${route}`).toHaveProperty('Idempotent-Replayed');
    }
  });

  it('take a JSON body and no query parameters on body routes, and no body elsewhere', () => {
    for (const route of ROUTES) {
      const operation = doc.paths[route.path]![route.method.toLowerCase()]!;
      const inQuery = (operation.parameters ?? []).filter((parameter) => parameter.in === 'query');
      if (route.body) {
        expect(inQuery, `${route.method} ${route.path}`).toEqual([]);
        expect(operation.requestBody, `${route.method} ${route.path}`).toMatchObject({ required: !route.body.optional });
        expect(Object.keys(operation.requestBody!.content as Json)).toEqual([...route.body.mediaTypes]);
      } else {
        expect(operation.requestBody, `${route.method} ${route.path}`).toBeUndefined();
      }
    }
  });

  it('declare every path parameter, required and with a pattern', () => {
    for (const route of ROUTES) {
      const operation = doc.paths[route.path]![route.method.toLowerCase()]!;
      const inPath = (operation.parameters ?? []).filter((parameter) => parameter.in === 'path');
      expect(
        inPath.map((parameter) => parameter.name),
        `${route.method} ${route.path}`,
      ).toEqual(pathParameters(route.path));
      for (const parameter of inPath) {
        expect(parameter.required, `${route.path} ${parameter.name}`).toBe(true);
        expect(parameter.schema, `${route.path} ${parameter.name}`).toMatchObject({
          type: 'string',
          pattern: match.stringMatching(/^\^.+\$$/),
        });
        expect(() => new RegExp(parameter.schema!.pattern as string)).not.toThrow();
      }
    }
  });
});

describe('what SOFA would generate on its own is not served', () => {
  it.each([
    ['POST', '/webhook'],
    ['DELETE', '/webhook/anything'],
    ['POST', '/create-order'],
    ['POST', '/create-user'],
    ['GET', '/user-list'],
    ['GET', '/order-list'],
    ['GET', '/user/usr_01jd3x3b8vfb9s1p4t4p6q2k7m'],
  ])('%s %s is a 404 problem', async (method, target) => {
    const { status, contentType, body } = await fetchProblem(method, target);
    expect(status).toBe(404);
    expect(contentType).toBe('application/problem+json');
    expect(body).toMatchObject({ type: 'https://portico.dev/problems/not-found', status: 404, instance: target });
  });

  it('GET /orders, the collection without an id, is a 4xx problem rather than a list', async () => {
    const { status, contentType, body } = await fetchProblem('GET', '/orders');
    expect([404, 405]).toContain(status);
    expect(contentType).toBe('application/problem+json');
    expect(body).toMatchObject({ status, instance: '/orders', type: match.stringMatching(/^https:\/\/portico\.dev\/problems\//) });
  });
});
