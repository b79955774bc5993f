// Fuzzes the REST facade, and the GraphQL mutations behind it, with generated hostile requests.
//
// The REST requests are derived from the OpenAPI document the server itself serves, so a new route or
// parameter is fuzzed without touching this file. Each property starts from a request that is valid
// for its operation and makes one part of it hostile (a path id, the query, the headers, the method, a
// body field's value or type, an extra body field, a missing one, or the body text as a whole); a
// "mixed" property makes several parts hostile at once. Two more properties cover what the HTTP server
// meets before any route: oversized or unparsable requests, and bodies streamed without a length.
// Hostile means what clients really send by mistake or malice: NUL bytes, lone surrogates, prototype
// keys as names, very long strings, out-of-range and non-integer numbers written as text, wrong JSON
// types, empty and invalid JSON, nesting thousands deep, and invalid percent-encoding.
//
// What it proves, whatever a client sends:
// - the service never answers 5xx;
// - every error is RFC 9457 Problem Details (`application/problem+json`, a portico.dev type, the HTTP
//   status repeated in the body), with field errors that name fields as strings;
// - no response carries internals: stack frames, source paths, "[object Object]" or printed functions;
// - GraphQL errors carry only client-side codes, never INTERNAL;
// - the server logs nothing at error level, which it reserves for failures of its own.
//
// The seed is fixed, so a failure repeats run after run; PORTICO_LONG_TESTS=1 runs 50 times as many.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runs, timeLimit } from '../support/long-mode.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const SEED = 20261123;
const PROBLEM_TYPE = 'https://portico.dev/problems/';
const LEAK = /\bat .*\(.*:\d+:\d+\)|\.ts:\d+|node_modules|\/src\//;
// What a name, a value or a function looks like after it went through String() by mistake.
const MANGLED = /\[object \w+\]|function|native code/;
const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'] as const;
// Bodies stay under the 64 KiB limit unless a case means to exceed it.
const MAX_BODY = 64 * 1024;

let server: TestServer;
let world: World;

// ---------------------------------------------------------------------------------------------
// The OpenAPI document, reduced to what a client can vary.

interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  enum?: string[];
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema: Schema;
}

interface OpenApiDocument {
  paths: Record<
    string,
    Record<string, { operationId: string; parameters?: Parameter[]; requestBody?: { content: Record<string, { schema: Schema }> } }>
  >;
  components: { schemas: Record<string, Schema> };
}

interface Operation {
  method: string;
  path: string;
  operationId: string;
  pathParams: Parameter[];
  queryParams: Parameter[];
  body?: { mediaTypes: string[]; schema: Schema };
}

function operationsOf(document: OpenApiDocument): Operation[] {
  const resolve = (schema: Schema): Schema =>
    schema.$ref ? resolve(document.components.schemas[schema.$ref.replace('#/components/schemas/', '')]!) : schema;
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => {
      const parameters = (operation.parameters ?? []).map((p) => ({ ...p, schema: resolve(p.schema) }));
      const content = operation.requestBody?.content;
      const schema = content && Object.values(content)[0]?.schema;
      return {
        method: method.toUpperCase(),
        path,
        operationId: operation.operationId,
        pathParams: parameters.filter((p) => p.in === 'path'),
        queryParams: parameters.filter((p) => p.in === 'query'),
        ...(content && schema ? { body: { mediaTypes: Object.keys(content), schema: resolve(schema) } } : {}),
      };
    }),
  );
}

/** The id prefix a parameter's pattern demands (`usr`, `ord`), if it is an id. */
const idKindOf = (schema: Schema): string | undefined => /^\^([a-z]+)_/.exec(schema.pattern ?? '')?.[1];

// ---------------------------------------------------------------------------------------------
// Real rows, so that generated ids sometimes exist. The fuzz deletes users; their slots are refilled
// so later runs still meet real ids.

class World {
  readonly ids = { usr: [] as string[], ord: [] as string[] };
  readonly cursors: string[] = [];
  #created = 0;

  async seed(slots: number): Promise<void> {
    for (let slot = 0; slot < slots; slot += 1) await this.populate(slot);
    const users = await json<{ pagination: { nextCursor: string } }>('/users?limit=1');
    const byName = await json<{ pagination: { nextCursor: string } }>('/users?limit=1&sort=-name');
    const orders = await json<{ nextCursor: string }>(`/users/${this.ids.usr[0]}/orders?limit=1`);
    this.cursors.push(users.pagination.nextCursor, byName.pagination.nextCursor, orders.nextCursor);
  }

  async populate(slot: number): Promise<void> {
    this.#created += 1;
    const user = await post<{ id: string }>('/users', { name: `Seed User ${this.#created}`, email: `seed-${this.#created}@example.com` });
    const order = await post<{ id: string }>(`/users/${user.id}/orders`, { total: 1999 });
    await post(`/users/${user.id}/orders`, { total: 0, status: 'paid' });
    this.ids.usr[slot] = user.id;
    this.ids.ord[slot] = order.id;
  }

  id(kind: string, slot: number): string {
    const ids = kind === 'ord' ? this.ids.ord : this.ids.usr;
    return ids[slot % ids.length]!;
  }

  async deleted(id: string): Promise<void> {
    const slot = this.ids.usr.indexOf(id);
    if (slot >= 0) await this.populate(slot);
  }
}

async function json<T>(path: string): Promise<T> {
  const response = await server.fetch(path);
  if (response.status !== 200) throw new Error(`seeding: GET ${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

async function post<T>(path: string, body: unknown): Promise<T> {
  const response = await server.fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (response.status !== 201) throw new Error(`seeding: POST ${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

// ---------------------------------------------------------------------------------------------
// Hostile values. Strings are JS strings; body values are JSON *text*, so that numbers like 1e309
// reach the server as written and nesting can be deeper than JSON.stringify could produce.

/** A fragment with a little text around it, so it is not always the whole value. */
const around = (fragment: string) =>
  fc.tuple(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 })).map(([before, after]) => before + fragment + after);

const longString = (max: number) =>
  fc.tuple(fc.constantFrom('x', 'é', '😀', ' '), fc.integer({ min: 201, max })).map(([unit, count]) => unit.repeat(count));

/** Strings no validation expects; `max` bounds the long ones (a URL has less room than a body). */
const hostileStrings = (max: number): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constant('a\u0000b'),
    around('\u0000'),
    fc.constantFrom('\ud800', 'x\udfffy', '\udc00\ud800'),
    around('\ud800'),
    fc.constantFrom(...PROTOTYPE_KEYS),
    longString(max),
    fc.constantFrom('', ' ', '\t\n', '\u200b', '\u202e', '%00', '%ZZ', "' or 1=1 --", '${7*7}', '../../etc/passwd'),
    fc.string({ unit: 'binary', maxLength: 12 }),
  );

const hostileString = hostileStrings(16_000);
// Percent-encoded, a long one stays under the 8 KiB URL limit; oversized requests have their own property.
const hostileUrlString = hostileStrings(600);

const hostileInteger = fc.constantFrom(
  '3e9',
  '-1',
  '1.5',
  '1e309',
  '-1e309',
  '2147483648',
  '-2147483649',
  '9007199254740993',
  '1e2',
  '-0',
  '0.0',
);

// Prototype keys as *values* too: error messages quote the value, and a lookup of each word in a
// plain object would find Object.prototype's members.
const wrongType = fc.constantFrom('null', 'true', '0', '""', '"1"', '[]', '{}', '[1]', '{"$gt":""}', '"toString"', '["hasOwnProperty"]');

/** `[[[…]]]`: deeper than any recursive walk of the parsed value survives, still under 64 KiB. */
const deepArray = fc.integer({ min: 1_000, max: 30_000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth));
const deepObject = fc.integer({ min: 1_000, max: 10_000 }).map((depth) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth));

const email = fc.stringMatching(/^[a-z][a-z0-9.]{2,12}[a-z0-9]$/).map((local) => `${local}@example.com`);
const personName = fc.stringMatching(/^[A-Z][a-z]{1,10} [A-Z][a-z]{1,12}$/);

function validValue(schema: Schema): fc.Arbitrary<string> {
  if (schema.enum) return fc.constantFrom(...schema.enum).map((value) => JSON.stringify(value));
  if (schema.type === 'integer') return fc.integer({ min: schema.minimum ?? -(2 ** 31), max: schema.maximum ?? 2 ** 31 - 1 }).map(String);
  if (schema.format === 'email') return email.map((value) => JSON.stringify(value));
  if (schema.type === 'string') return personName.map((value) => JSON.stringify(value));
  return wrongType;
}

/** A value of the field's own JSON type that its rules refuse, or that breaks what lies behind them. */
function hostileValue(schema: Schema): fc.Arbitrary<string> {
  if (schema.type === 'integer') {
    const edges = [schema.minimum, schema.maximum].flatMap((edge) => (edge === undefined ? [] : [String(edge - 1), String(edge + 1)]));
    return edges.length > 0 ? fc.oneof(hostileInteger, fc.constantFrom(...edges)) : hostileInteger;
  }
  const strings: fc.Arbitrary<string>[] = [hostileString];
  if (schema.format === 'email') strings.push(hostileString.map((s) => `${s}@example.com`));
  if (schema.enum) strings.push(fc.constantFrom(...schema.enum).map((value) => ` ${value.toUpperCase()}`));
  return fc.oneof(...strings).map((value) => JSON.stringify(value));
}

/** A value of another JSON type, possibly nested thousands deep. */
const wrongTypeValue = fc.oneof(wrongType, deepArray, deepObject);

// ---------------------------------------------------------------------------------------------
// Path segments and query strings, percent-encoded by hand: encodeURIComponent refuses lone
// surrogates, which are sent here as the UTF-8 bytes a careless client would produce (%ED%A0%80).

function percentEncode(text: string): string {
  let encoded = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (code < 0xd800 || code > 0xdfff) encoded += encodeURIComponent(char);
    else
      for (const byte of [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)])
        encoded += `%${byte.toString(16).toUpperCase()}`;
  }
  return encoded;
}

const MANGLES = {
  upper: (id: string) => id.toUpperCase(),
  nul: (id: string) => `${id}%00`,
  'encoded twice': (id: string) => `%2575${id.slice(1)}`,
  truncated: (id: string) => id.slice(0, -1),
};

const MANGLE_NAMES = Object.keys(MANGLES) as (keyof typeof MANGLES)[];

/** A path segment or query value: a real id (possibly mangled), or text sent exactly as written. */
type Segment = { real: string; slot: number; mangle?: keyof typeof MANGLES } | { raw: string };

const realId = (kind: string) => fc.record({ real: fc.constant(kind), slot: fc.nat(9) });
const unknownId = (kind: string) => fc.stringMatching(/^[0-7][0-9a-hjkmnp-tv-z]{25}$/).map((rest) => ({ raw: `${kind}_${rest}` }));

const hostileSegment: fc.Arbitrary<Segment> = fc
  .oneof(
    fc.constantFrom(
      '%ZZ',
      '%ED%A0%80',
      '%00',
      '%',
      '%E0%A4%A',
      '%C0%AF',
      '%2F',
      '%25',
      '%2e%2e',
      '%20',
      '+',
      'usr_',
      'ord_',
      '0',
      '-1',
      '3e9',
    ),
    fc.constantFrom(...PROTOTYPE_KEYS),
    hostileUrlString.map(percentEncode),
    fc.integer({ min: 8_000, max: 9_000 }).map((length) => 'x'.repeat(length)),
  )
  .map((raw) => ({ raw }));

function idSegment(kind: string, hostile: boolean): fc.Arbitrary<Segment> {
  if (!hostile) return fc.oneof({ weight: 4, arbitrary: realId(kind) }, { weight: 1, arbitrary: unknownId(kind) });
  const otherKind = kind === 'usr' ? 'ord' : 'usr';
  return fc.oneof(
    { weight: 3, arbitrary: hostileSegment },
    { weight: 1, arbitrary: realId(otherKind) },
    { weight: 1, arbitrary: fc.record({ real: fc.constant(kind), slot: fc.nat(9), mangle: fc.constantFrom(...MANGLE_NAMES) }) },
  );
}

function resolve(segment: Segment): string {
  if ('raw' in segment) return segment.raw;
  const id = world.id(segment.real, segment.slot);
  return segment.mangle ? MANGLES[segment.mangle](id) : id;
}

function queryValue(parameter: Parameter, hostile: boolean): fc.Arbitrary<Segment> {
  const { schema } = parameter;
  const raw = (values: fc.Arbitrary<string>) => values.map((value) => ({ raw: value }));
  const kind = idKindOf(schema);
  if (kind) return idSegment(kind, hostile);
  if (!hostile) {
    if (schema.type === 'integer') return raw(fc.integer({ min: schema.minimum ?? 1, max: schema.maximum ?? 100 }).map(String));
    if (schema.enum) return raw(fc.constantFrom(...schema.enum).map(encodeURIComponent));
    return raw(fc.oneof(fc.constantFrom(...world.cursors), fc.base64String({ maxLength: 40 }).map(encodeURIComponent)));
  }
  const texts = [hostileSegment.map(resolve), fc.constantFrom('', 'abc', ' 1', '0x10', '1%00', '%2B5')];
  if (schema.type === 'integer') texts.push(hostileInteger.map(encodeURIComponent));
  if (schema.maxLength) texts.push(fc.constant('A'.repeat(schema.maxLength + 1)));
  return raw(fc.oneof(...texts));
}

/** One `name=value` of a query string, encoded; without a value, the name is sent alone. */
interface QueryPart {
  name: string;
  value?: Segment;
}

/** Some of the parameters the operation declares, each with a valid value. */
function validQuery(operation: Operation): fc.Arbitrary<QueryPart[]> {
  const parts = operation.queryParams.map((parameter) =>
    fc.option(
      queryValue(parameter, false).map((value) => ({ name: parameter.name, value })),
      { nil: undefined, freq: 2 },
    ),
  );
  return fc.tuple(...parts).map((chosen) => chosen.filter((part) => part !== undefined));
}

const UNKNOWN_PARAMETERS = [
  ...PROTOTYPE_KEYS,
  'page',
  'input',
  'id',
  'userId',
  'offset',
  'api_key',
  '',
  '%ZZ',
  '%00',
  'limit[]',
  'a%ED%A0%80',
];

/** Valid parameters plus unknown names, repeated names, hostile values or plain garbage. */
function hostileQuery(operation: Operation): fc.Arbitrary<QueryPart[]> {
  const unknown = fc
    .tuple(
      fc.oneof(fc.constantFrom(...UNKNOWN_PARAMETERS), fc.string({ maxLength: 8 }).map(percentEncode)),
      fc.constantFrom('1', '', '%00', 'x'),
    )
    .map(([name, value]) => [{ name, value: { raw: value } }]);
  const garbage = fc.constantFrom('%ZZ', '%', '=', '&', 'a=%E0%A4%A', '%00=1', '==', ';').map((name) => [{ name }]);
  const extras: fc.Arbitrary<QueryPart[]>[] = [unknown, garbage];
  if (operation.queryParams.length > 0) {
    const parameter = fc.constantFrom(...operation.queryParams);
    extras.push(
      parameter.chain((p) =>
        queryValue(p, false).map((value) => [
          { name: p.name, value },
          { name: p.name, value },
        ]),
      ),
    );
    extras.push(parameter.chain((p) => queryValue(p, true).map((value) => [{ name: p.name, value }])));
  }
  return fc
    .tuple(validQuery(operation), fc.array(fc.oneof(...extras), { minLength: 1, maxLength: 3 }))
    .map(([valid, extra]) => [...valid, ...extra.flat()]);
}

// ---------------------------------------------------------------------------------------------
// Headers. The API key is the suite's full-scope key unless a case replaces it.

const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/merge-patch+json',
  'application/json-patch+json',
  'APPLICATION/JSON',
  'application/json; charset=utf-16',
  'application/json, text/plain',
  'application/jsonx',
  ';',
  '',
];

function validHeaders(operation: Operation): fc.Arbitrary<Record<string, string>> {
  if (!operation.body) return fc.constant({});
  return fc.constantFrom(...operation.body.mediaTypes).map((type) => ({ 'content-type': type }));
}

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength: 200 });

const hostileHeaders: fc.Arbitrary<Record<string, string>> = fc.record(
  {
    // Left out, the body goes without any content type (it is sent as bytes).
    'content-type': fc.oneof(fc.constantFrom(...CONTENT_TYPES), printable),
    accept: fc.constantFrom('text/html', 'application/xml', '*/*', 'text/event-stream', 'multipart/mixed', 'application/json;q=0', ''),
    'x-request-id': fc.oneof(printable, fc.constant('a'.repeat(129))),
    'x-api-key': fc.oneof(
      fc.constant(''),
      fc.base64String({ minLength: 4, maxLength: 44 }).map((tail) => `pk_test_${tail}`),
    ),
  },
  { requiredKeys: [] },
);

// ---------------------------------------------------------------------------------------------
// Bodies: a JSON object built from the schema's properties, as (name, value text) entries, and
// serialised by hand so that names like `__proto__` stay ordinary keys in the text.

type Entries = [string, string][];

const objectText = (entries: Entries) => `{${entries.map(([name, value]) => `${JSON.stringify(name)}:${value}`).join(',')}}`;

function validEntries(schema: Schema): fc.Arbitrary<Entries> {
  const required = new Set(schema.required ?? []);
  const fields = Object.entries(schema.properties ?? {}).map(([name, property]) => {
    const entry = validValue(property).map((value): [string, string] => [name, value]);
    return required.has(name) ? entry : fc.option(entry, { nil: undefined });
  });
  return fc.tuple(...fields).map((entries) => entries.filter((entry) => entry !== undefined));
}

/** Valid entries with one field's value replaced. */
function replacedField(schema: Schema, value: (property: Schema) => fc.Arbitrary<string>): fc.Arbitrary<Entries> {
  const properties = Object.entries(schema.properties ?? {});
  const replacement = fc.oneof(...properties.map(([name, property]) => value(property).map((text): [string, string] => [name, text])));
  return fc
    .tuple(validEntries(schema), replacement)
    .map(([entries, [name, value]]) => [...entries.filter(([other]) => other !== name), [name, value]]);
}

const EXTRA_FIELDS = [...PROTOTYPE_KEYS, 'id', 'createdAt', 'updatedAt', 'userId', 'user_id', 'input', 'admin', ''];

function extraField(schema: Schema): fc.Arbitrary<Entries> {
  const name = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...EXTRA_FIELDS) }, { weight: 1, arbitrary: fc.string({ maxLength: 10 }) });
  const value = fc.oneof(fc.constantFrom('{}', 'null', '1', '"x"', '[]', '{"admin":true}'), wrongType);
  return fc
    .tuple(validEntries(schema), name, value, fc.boolean())
    .map(([entries, extra, text, first]): Entries => (first ? [[extra, text], ...entries] : [...entries, [extra, text]]));
}

function missingField(schema: Schema): fc.Arbitrary<Entries> {
  return fc
    .tuple(validEntries(schema), fc.nat())
    .map(([entries, drop]) => entries.filter((_, i) => entries.length === 0 || i !== drop % entries.length));
}

function hostileBodyText(schema: Schema): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(
      '',
      ' ',
      'null',
      '[]',
      '"text"',
      '42',
      'true',
      '{',
      '{"a":1,}',
      "{'a':1}",
      '{"a":NaN}',
      '\ufeff{}',
      '{"a":"\\x"}',
      '{}{}',
      '\u0000',
    ),
    deepArray,
    deepObject,
    // Past the size limit on purpose.
    fc.constant(`{"name":"${'x'.repeat(MAX_BODY)}"}`),
    validEntries(schema)
      .map(objectText)
      .chain((text) => fc.nat(text.length - 1).map((cut) => text.slice(0, cut))),
  );
}

// ---------------------------------------------------------------------------------------------
// Requests.

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

// One property per operation and aspect, so that each kind of failure gets its own counterexample
// instead of hiding behind the first one found.
const BODY_ASPECTS = ['field value', 'field type', 'extra field', 'missing field', 'body text'] as const;
// What the HTTP server does before any route runs; one property each covers every operation.
const SERVER_ASPECTS = ['oversized or unparsable request', 'chunked body'] as const;
const ASPECTS = ['valid', 'path', 'query', 'headers', 'method', ...BODY_ASPECTS, 'mixed', ...SERVER_ASPECTS] as const;
type Aspect = (typeof ASPECTS)[number];
type BodyAspect = (typeof BODY_ASPECTS)[number];

const isBodyAspect = (aspect: Aspect): aspect is BodyAspect => (BODY_ASPECTS as readonly Aspect[]).includes(aspect);

function aspectsOf(operation: Operation): Aspect[] {
  return ASPECTS.filter((aspect) => {
    if ((SERVER_ASPECTS as readonly Aspect[]).includes(aspect)) return false;
    if (aspect === 'path') return operation.pathParams.length > 0;
    if (isBodyAspect(aspect)) return operation.body !== undefined;
    return true;
  });
}

const truncate = (text: string, max = 160) =>
  text.length <= max ? text : `${text.slice(0, max - 40)}…(${text.length} chars)…${text.slice(-20)}`;

class FuzzRequest {
  readonly method: string;
  readonly operation: Operation;
  readonly params: Record<string, Segment>;
  readonly query: QueryPart[];
  readonly headers: Record<string, string>;
  readonly body: string | undefined;
  /** 0: the body goes with a content-length; otherwise streamed (chunked) in this many pieces. */
  readonly chunks: number;

  constructor(fields: Omit<FuzzRequest, 'path' | 'toString' | typeof fc.toStringMethod>) {
    this.method = fields.method;
    this.operation = fields.operation;
    this.params = fields.params;
    this.query = fields.query;
    this.headers = fields.headers;
    this.body = fields.body;
    this.chunks = fields.chunks;
  }

  /** Path and query as sent, with real ids as they are now. */
  path(): string {
    const path = this.operation.path.replace(/\{(\w+)\}/g, (_, name: string) => resolve(this.params[name]!));
    const query = this.query.map(({ name, value }) => (value ? `${name}=${resolve(value)}` : name));
    return query.length > 0 ? `${path}?${query.join('&')}` : path;
  }

  toString(): string {
    const headers = Object.entries(this.headers).map(([name, value]) => ` ${name}: ${JSON.stringify(truncate(value, 60))}`);
    const sent = this.chunks > 0 ? `, chunked in ${this.chunks}` : '';
    const body =
      this.body === undefined ? '' : ` body(${Buffer.byteLength(this.body)} bytes${sent}): ${JSON.stringify(truncate(this.body))}`;
    return `${this.method} ${truncate(this.path(), 200)}${headers.join('')}${body}`;
  }

  [fc.toStringMethod](): string {
    return this.toString();
  }
}

function requestFor(operation: Operation, aspect: Aspect): fc.Arbitrary<FuzzRequest> {
  // The part this property attacks is hostile; in "mixed", each part is hostile a third of the time.
  const part = <T>(mine: Aspect, valid: fc.Arbitrary<T>, hostile: fc.Arbitrary<T>) => {
    if (mine === aspect) return hostile;
    if (aspect === 'mixed') return fc.oneof({ weight: 2, arbitrary: valid }, { weight: 1, arbitrary: hostile });
    return valid;
  };
  const params = (hostile: boolean) =>
    fc.record(Object.fromEntries(operation.pathParams.map((p) => [p.name, idSegment(idKindOf(p.schema) ?? 'usr', hostile)])));
  const framing: fc.Arbitrary<Framing> = aspect === 'oversized or unparsable request' ? oversizedOrUnparsable(operation) : fc.constant({});
  return fc
    .record({
      method: part('method', fc.constant(operation.method), fc.constantFrom(...METHODS.filter((m) => m !== operation.method))),
      params: part('path', params(false), params(true)),
      query: part('query', validQuery(operation), hostileQuery(operation)),
      headers: part('headers', validHeaders(operation), hostileHeaders),
      body: operation.body ? bodyFor(operation.body.schema, aspect) : fc.constant(undefined),
      chunks: aspect === 'chunked body' ? fc.integer({ min: 1, max: 8 }) : fc.constant(0),
      framing,
    })
    .map(({ framing, ...request }) => {
      const method = framing.method ?? request.method;
      return new FuzzRequest({
        ...request,
        operation,
        method,
        query: [...request.query, ...(framing.query ?? [])],
        headers: { ...request.headers, ...framing.headers },
        body: method === 'GET' ? undefined : request.body,
      });
    });
}

/** Changes to a valid request that Node's HTTP parser, not a route, has to answer. */
interface Framing {
  method?: string;
  query?: QueryPart[];
  headers?: Record<string, string>;
}

function oversizedOrUnparsable(operation: Operation): fc.Arbitrary<Framing> {
  const name = operation.queryParams[0]?.name ?? 'padding';
  return fc.oneof(
    // Around and far past the 8 KiB URL limit.
    fc.integer({ min: 7_000, max: 40_000 }).map((length) => ({ query: [{ name, value: { raw: 'x'.repeat(length) } }] })),
    fc.integer({ min: 1_000, max: 40_000 }).map((length) => ({ headers: { 'x-request-id': 'a'.repeat(length) } })),
    // Methods in lower case or unknown to the parser (fetch upper-cases only the standard ones).
    fc.constantFrom('propfind', 'FOO', 'PROPFIND', 'M-SEARCH').map((method) => ({ method })),
  );
}

function bodyFor(schema: Schema, aspect: Aspect): fc.Arbitrary<string> {
  const hostile: Record<BodyAspect, fc.Arbitrary<string>> = {
    'field value': replacedField(schema, hostileValue).map(objectText),
    'field type': replacedField(schema, () => wrongTypeValue).map(objectText),
    'extra field': extraField(schema).map(objectText),
    'missing field': missingField(schema).map(objectText),
    'body text': hostileBodyText(schema),
  };
  const valid = validEntries(schema).map(objectText);
  if (isBodyAspect(aspect)) return hostile[aspect];
  // Streamed without a content-length, the size limit has to be enforced while reading.
  if (aspect === 'chunked body')
    return fc.oneof(
      valid,
      fc.integer({ min: MAX_BODY - 64, max: 4 * MAX_BODY }).map((size) => `{"name":"${'x'.repeat(size)}"}`),
    );
  if (aspect === 'mixed') return fc.oneof({ weight: 2, arbitrary: valid }, ...BODY_ASPECTS.map((a) => hostile[a]));
  return valid;
}

// ---------------------------------------------------------------------------------------------
// What every response must satisfy.

interface Answer {
  status: number;
  contentType: string | null;
  text: string;
  /** Why no response came at all. */
  failure?: string;
}

function violationsOf(answer: Answer): string[] {
  if (answer.failure) return [answer.failure];
  const violations: string[] = [];
  if (answer.status >= 500) violations.push(`status ${answer.status}`);
  if (LEAK.test(answer.text)) violations.push('internals (a stack frame or a source path) in the body');
  if (answer.status === 204 && answer.text !== '') violations.push('a body on a 204');
  if (answer.status < 400) return violations;

  if (answer.contentType?.split(';')[0]?.trim() !== 'application/problem+json')
    violations.push(`content-type ${answer.contentType}, not application/problem+json`);
  let problem: Record<string, unknown>;
  try {
    problem = JSON.parse(answer.text) as Record<string, unknown>;
  } catch {
    return [...violations, 'the body is not JSON'];
  }
  if (typeof problem.type !== 'string' || !problem.type.startsWith(PROBLEM_TYPE)) violations.push(`type ${JSON.stringify(problem.type)}`);
  if (typeof problem.title !== 'string' || problem.title === '') violations.push('no title');
  if (problem.status !== answer.status) violations.push(`status ${JSON.stringify(problem.status)} in the body`);
  if (typeof problem.detail !== 'string') violations.push('no detail');
  else if (MANGLED.test(problem.detail)) violations.push('an object or function printed into detail');
  if (problem.instance !== undefined && typeof problem.instance !== 'string') violations.push('instance is not a string');
  if (problem.errors !== undefined) violations.push(...fieldErrorViolations(problem.errors));
  return violations;
}

function fieldErrorViolations(errors: unknown): string[] {
  if (!Array.isArray(errors)) return ['errors is not a list'];
  return errors.flatMap((error: { field?: unknown; message?: unknown }) => {
    if (typeof error?.field !== 'string' || typeof error.message !== 'string')
      return [`a field error without string field and message: ${JSON.stringify(error)}`];
    if (MANGLED.test(error.field) || MANGLED.test(error.message))
      return [`an object or function printed into a field error: ${JSON.stringify(error)}`];
    return [];
  });
}

async function send(request: FuzzRequest): Promise<Answer> {
  let answer: Answer;
  try {
    const response = await server.fetch(request.path(), { method: request.method, headers: request.headers, ...bodyInit(request) });
    answer = { status: response.status, contentType: response.headers.get('content-type'), text: await response.text() };
  } catch (error) {
    // A reset connection is an answer too, and the worst kind.
    // fetch's own message is only "fetch failed"; the error it wraps says how the connection ended.
    const { cause, message } = error as Error;
    return { status: 0, contentType: null, text: '', failure: `no response: ${cause instanceof Error ? String(cause) : message}` };
  }
  if (request.method === 'DELETE' && answer.status === 204)
    for (const segment of Object.values(request.params)) await world.deleted(resolve(segment));
  return answer;
}

function bodyInit(request: FuzzRequest): RequestInit {
  if (request.body === undefined) return {};
  // Bytes, so that fetch adds no content type of its own when a case leaves it out.
  const bytes = new TextEncoder().encode(request.body);
  if (request.chunks === 0) return { body: bytes };
  const size = Math.ceil(bytes.length / request.chunks);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < bytes.length; at += size) controller.enqueue(bytes.subarray(at, at + size));
      controller.close();
    },
  });
  return { body, duplex: 'half' } as RequestInit;
}

async function holds(request: FuzzRequest): Promise<void> {
  const answer = await send(request);
  const violations = violationsOf(answer);
  if (violations.length > 0) {
    // Quoted, so that a stack trace in the response is not taken for this error's own.
    throw new Error(
      `${violations.join('; ')}\n    → ${answer.status} ${answer.contentType}: ${JSON.stringify(truncate(answer.text, 400))}`,
    );
  }
}

/**
 * Runs one property with the fixed seed; on failure, adds fast-check's shrunk counterexample and its
 * error to `failures`, short enough to read one per failing property.
 */
async function check<T>(
  name: string,
  arbitrary: fc.Arbitrary<T>,
  predicate: (value: T) => Promise<void>,
  numRuns: number,
  failures: string[],
) {
  const details = await fc.check(fc.asyncProperty(arbitrary, predicate), { seed: SEED, numRuns });
  if (!details.failed) return;
  const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  failures.push(
    [
      `✗ ${name}`,
      `    ${String(details.counterexample?.[0])}`,
      `    ${error.split('\n').join('\n    ')}`,
      `    (seed ${details.seed}, path "${details.counterexamplePath}", ${details.numShrinks} shrinks)`,
    ].join('\n'),
  );
}

// ---------------------------------------------------------------------------------------------
// GraphQL: the mutations REST is built on, called directly with hostile variables.

const GRAPHQL_CODES = ['BAD_USER_INPUT', 'NOT_FOUND', 'CONFLICT', 'FORBIDDEN', 'UNAUTHENTICATED'];

const MUTATIONS = {
  createUser: 'mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }',
  updateUser: 'mutation ($id: ID!, $input: UpdateUserInput!) { updateUser(id: $id, input: $input) { id } }',
  createOrder: 'mutation ($input: CreateOrderInput!) { createOrder(input: $input) { id } }',
};

interface GraphQLMutation {
  name: keyof typeof MUTATIONS;
  /** Valid input fields, before one of them (or the id) is made hostile. */
  fields: Record<string, fc.Arbitrary<unknown>>;
  /** Where the user id goes, if the mutation takes one. */
  id?: 'id' | 'input.userId';
}

const GRAPHQL_MUTATIONS: GraphQLMutation[] = [
  { name: 'createUser', fields: { name: personName, email } },
  { name: 'updateUser', fields: { name: personName, email }, id: 'id' },
  {
    name: 'createOrder',
    fields: { total: fc.integer({ min: 0, max: 2 ** 31 - 1 }), status: fc.constantFrom('pending', 'paid') },
    id: 'input.userId',
  },
];

const GRAPHQL_ASPECTS = ['valid', 'field value', 'field type', 'extra field', 'id'] as const;
type GraphQLAspect = (typeof GRAPHQL_ASPECTS)[number];

class GraphQLCase {
  readonly mutation: GraphQLMutation;
  readonly input: Record<string, unknown>;
  readonly id: Segment;

  constructor(mutation: GraphQLMutation, input: Record<string, unknown>, id: Segment) {
    this.mutation = mutation;
    this.input = input;
    this.id = id;
  }

  /** Read when the case runs, so that real ids are the current ones (the fuzz deletes users). */
  variables(): Record<string, unknown> {
    if (this.mutation.id === 'id') return { id: resolve(this.id), input: this.input };
    if (this.mutation.id === 'input.userId') return { input: { ...this.input, userId: resolve(this.id) } };
    return { input: this.input };
  }

  toString(): string {
    return `${this.mutation.name} ${truncate(JSON.stringify(this.variables()), 200)}`;
  }

  [fc.toStringMethod](): string {
    return this.toString();
  }
}

/** A value of the field's own type that its rules refuse, as a JS value for the variables. */
function hostileVariable(name: string, valid: unknown): fc.Arbitrary<unknown> {
  if (typeof valid === 'number') return fc.constantFrom(3e9, -1, 1.5, 1e300, -1e300, 2 ** 53 + 2, 2 ** 31, -0);
  return name === 'email'
    ? fc.oneof(
        hostileString,
        hostileString.map((s) => `${s}@example.com`),
      )
    : hostileString;
}

const wrongTypeVariable = fc.constantFrom<unknown>(null, true, 0, '1', [], {}, ['x'], { $gt: '' });

/** Sets a field as JSON.parse would: an own property, even for `__proto__`. */
function withField(input: Record<string, unknown>, name: string, value: unknown): Record<string, unknown> {
  const copy = { ...input };
  Object.defineProperty(copy, name, { value, enumerable: true, configurable: true, writable: true });
  return copy;
}

function graphQLCaseFor(mutation: GraphQLMutation, aspect: GraphQLAspect): fc.Arbitrary<GraphQLCase> {
  const input = fc.record(mutation.fields);
  const validId = idSegment('usr', false);
  const hostileId = fc.oneof(
    hostileString.map((raw) => ({ raw })),
    realId('ord'),
  );
  const names = Object.keys(mutation.fields);
  const cases = {
    valid: fc.tuple(input, validId).map(([fields, id]) => new GraphQLCase(mutation, fields, id)),
    'field value': fc
      .tuple(input, fc.constantFrom(...names), validId)
      .chain(([fields, name, id]) =>
        hostileVariable(name, fields[name]).map((value) => new GraphQLCase(mutation, withField(fields, name, value), id)),
      ),
    'field type': fc
      .tuple(input, fc.constantFrom(...names), wrongTypeVariable, validId)
      .map(([fields, name, value, id]) => new GraphQLCase(mutation, withField(fields, name, value), id)),
    'extra field': fc
      .tuple(input, fc.constantFrom(...PROTOTYPE_KEYS), fc.constantFrom<unknown>({}, 1, 'x', null), validId)
      .map(([fields, name, value, id]) => new GraphQLCase(mutation, withField(fields, name, value), id)),
    id: fc.tuple(input, hostileId).map(([fields, id]) => new GraphQLCase(mutation, fields, id)),
  };
  return cases[aspect];
}

async function graphQLHolds(graphQL: GraphQLCase): Promise<void> {
  const response = await server.gql(MUTATIONS[graphQL.mutation.name], graphQL.variables());
  const text = JSON.stringify(response.body);
  const violations: string[] = [];
  if (response.status >= 500) violations.push(`status ${response.status}`);
  if (LEAK.test(text)) violations.push('internals (a stack frame or a source path) in the body');
  for (const error of response.body.errors ?? []) {
    if (!GRAPHQL_CODES.includes(error.extensions?.code)) violations.push(`code ${error.extensions?.code}`);
    if (error.extensions?.errors !== undefined) violations.push(...fieldErrorViolations(error.extensions.errors));
  }
  if (violations.length > 0) throw new Error(`${violations.join('; ')}\n    → ${response.status}: ${JSON.stringify(truncate(text, 400))}`);
}

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  server = await startTestServer();
  world = new World();
  await world.seed(3);
});
afterAll(() => server.close());

describe('fuzzing', () => {
  const timeout = timeLimit(60_000);

  it(
    'REST: every operation in /openapi.json answers hostile requests with Problem Details, never 5xx or internals',
    async () => {
      const response = await fetch(`${server.url}/openapi.json`);
      expect(response.status).toBe(200);
      const operations = operationsOf((await response.json()) as OpenApiDocument);
      expect(operations.length).toBeGreaterThan(0);

      const failures: string[] = [];
      for (const operation of operations) {
        for (const aspect of aspectsOf(operation)) {
          const name = `${operation.method} ${operation.path} (${operation.operationId}), hostile ${aspect}`;
          await check(name, requestFor(operation, aspect), holds, aspect === 'mixed' ? runs(40, 2000) : runs(15, 750), failures);
        }
      }
      for (const aspect of SERVER_ASPECTS) {
        const candidates = aspect === 'chunked body' ? operations.filter((operation) => operation.body) : operations;
        const anyOperation = fc.constantFrom(...candidates).chain((operation) => requestFor(operation, aspect));
        await check(`any operation, ${aspect}`, anyOperation, holds, runs(15, 750), failures);
      }
      if (failures.length > 0) throw new Error(`${failures.length} properties failed:\n${failures.join('\n')}`);
    },
    timeout,
  );

  it(
    'GraphQL: createUser, updateUser and createOrder answer hostile variables with client errors only',
    async () => {
      const failures: string[] = [];
      for (const mutation of GRAPHQL_MUTATIONS) {
        for (const aspect of GRAPHQL_ASPECTS.filter((a) => a !== 'id' || mutation.id)) {
          await check(`${mutation.name}, hostile ${aspect}`, graphQLCaseFor(mutation, aspect), graphQLHolds, runs(25, 1250), failures);
        }
      }
      if (failures.length > 0) throw new Error(`${failures.length} properties failed:\n${failures.join('\n')}`);
    },
    timeout,
  );

  it('logged nothing at error level while being fuzzed', () => {
    const requests = new Map(server.logs.filter((line) => line.msg === 'request').map((line) => [line.requestId, line]));
    const errors = new Map<string, string>();
    for (const line of server.logs.filter((l) => (l.level as number) >= 50)) {
      const cause = `${String(line.msg)}: ${String((line.err as { message?: string } | undefined)?.message)}`;
      const request = requests.get(line.requestId);
      if (!errors.has(cause))
        errors.set(cause, request ? `${String(request.method)} ${truncate(String(request.url), 120)} → ${String(request.status)}` : '');
    }
    expect([...errors].map(([cause, request]) => `${cause} (first: ${request})`)).toEqual([]);
  });
});
