// The OpenAPI 3.1 document of the REST facade, derived from the route table and the REST view of the
// GraphQL schema: resource schemas come from the GraphQL types (through SOFA's converter), and the
// HTTP contract the adapter adds (statuses, Location, Problem Details, media types) is described here.
import { networkMatcher } from '../net/cidr.ts';
import { forwardedOrigin } from '../net/forwarded-origin.ts';
import { MAX_CURSOR_LENGTH } from '../pagination/cursor.ts';
import { servesRead } from '../refusals.ts';
import { buildSchemaObjectFromType } from 'sofa-api';
import { assertSchema, getNamedType, isInputObjectType, isNonNullType, isObjectType, type GraphQLSchema } from 'graphql';
import { DELIVERY_STATES, ORDER_STATUSES } from '../db/entities/index.ts';
import { ID_PREFIXES, type IdKind } from '../db/ids.ts';
import { DESCRIPTION_MAX_LENGTH, ROTATION_OVERLAP_S } from '../services/webhook-endpoints.ts';
import { EVENT_TYPE_NAMES, PING, enumNameOf } from '../webhooks/event-types.ts';
import { WEBHOOK_URL_MAX_LENGTH } from '../webhooks/url-policy.ts';
import { PROBLEM_KINDS, PROBLEM_TYPE_BASE, isProblemKind, type ProblemKind } from '../errors.ts';
import { EMAIL_MAX_LENGTH, PAGE_SIZE, NAME_MAX_LENGTH, PAGE_NUMBER_MAX, TOTAL_MAX } from '../services/limits.ts';
import { USER_SORTS } from '../services/user-list.ts';
import { isSafeMethod } from '../http/methods.ts';
import { isOneOf } from '../guards.ts';
import { OPENAPI_PATH } from '../paths.ts';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  IDEMPOTENT_REPLAYED_HEADER,
  KEY_REFUSALS,
  isKept,
} from '../services/idempotency.ts';
import { MAX_BODY_BYTES } from '../request-limits.ts';
import { restSchema } from './rest-schema.ts';
import { ROUTES, TAGS, pathParameters, queryParameters, routeField, type RestRoute } from './routes.ts';
import type { ServerPlugin } from '../plugins/server-context.ts';

/** A cursor in the current format (a page by creation time), for the examples. */
const EXAMPLE_CURSOR = 'AgEBi8_laAADdXNyAZNH0a0betOQ2JoljXFM9NZw1M2OxCjxtMLJcg';

type Json = Record<string, unknown>;

const idPattern = (kind: IdKind) => `^${ID_PREFIXES[kind]}_[0-7][0-9a-hjkmnp-tv-z]{25}$`;
const EXAMPLE_USER_ID = 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m';
const EXAMPLE_ORDER_ID = 'ord_01jd3x5kq2f6r0w8c4n1y7s9ta';
const EXAMPLE_EVENT_ID = 'evt_01jd3x5kq3a0b4c8d2e6f0g4h8';
const EXAMPLE_ENDPOINT_ID = 'wep_01jd3x2w6n8p0r2t4v6x8z0b2d';
/** The example id of each resource a route can create, for its Location. */
const EXAMPLE_ID_OF: Record<string, string> = { User: EXAMPLE_USER_ID, Order: EXAMPLE_ORDER_ID, WebhookEndpoint: EXAMPLE_ENDPOINT_ID };
const CUSTOM_SCALARS = {
  DateTime: { type: 'string', format: 'date-time' },
  // The one JSON field is an event's `data`.
  JSON: { type: 'object', properties: { object: { type: 'object' } }, required: ['object'] },
};

/** Constraints the services enforce, stated for clients; keyed by resource and field. */
const FIELD_RULES: Record<string, Json> = {
  'User.id': { pattern: idPattern('user'), example: EXAMPLE_USER_ID },
  'User.name': { minLength: 1, maxLength: NAME_MAX_LENGTH, example: 'Ada Lovelace' },
  // Addresses may hold any letters (RFC 6531), as the service takes them.
  'User.email': { format: 'idn-email', maxLength: EMAIL_MAX_LENGTH, example: 'ada@example.com' },
  'Order.id': { pattern: idPattern('order'), example: EXAMPLE_ORDER_ID },
  'Order.userId': { pattern: idPattern('user'), example: EXAMPLE_USER_ID },
  'Order.total': { minimum: 0, maximum: TOTAL_MAX, example: 1999 },
  'Order.status': { enum: [...ORDER_STATUSES], example: 'pending' },
  'Event.id': { pattern: idPattern('event'), example: EXAMPLE_EVENT_ID },
  'Event.type': { enum: [...EVENT_TYPE_NAMES, PING], example: 'order.created' },
  'WebhookEndpoint.id': { pattern: idPattern('webhookEndpoint'), example: EXAMPLE_ENDPOINT_ID },
  'WebhookEndpoint.url': { format: 'uri', maxLength: WEBHOOK_URL_MAX_LENGTH, example: 'https://example.com/webhooks/portico' },
  // Every type is `null`, never an empty list (which would receive nothing).
  'WebhookEndpoint.events': { minItems: 1 },
  'WebhookEndpoint.description': { maxLength: DESCRIPTION_MAX_LENGTH, example: 'Order fulfilment' },
  'WebhookEndpoint.secret': { pattern: '^whsec_[A-Za-z0-9+/]{43}=$' },
  'WebhookDelivery.eventId': { pattern: idPattern('event'), example: EXAMPLE_EVENT_ID },
  'WebhookDelivery.eventType': { enum: [...EVENT_TYPE_NAMES, PING], example: 'order.created' },
  'WebhookDelivery.status': { enum: [...DELIVERY_STATES], example: 'succeeded' },
  'RotateWebhookEndpointSecretInput.overlapSeconds': { minimum: 0, maximum: ROTATION_OVERLAP_S.max, example: 3600 },
};

/** The range an integer input field or query parameter takes, as documented (and as errors state it). */
export function integerRange(inputType: string | undefined, name: string): { minimum?: number; maximum?: number } {
  const rules = inputType === undefined ? PARAMETER_RULES[name] : FIELD_RULES[`${RESOURCE_OF_INPUT[inputType] ?? inputType}.${name}`];
  const { minimum, maximum } = rules ?? {};
  return { ...(typeof minimum === 'number' ? { minimum } : {}), ...(typeof maximum === 'number' ? { maximum } : {}) };
}

/** The words a query parameter takes, as documented (and as errors state them), if it takes a fixed set. */
export function parameterWords(name: string): readonly string[] | undefined {
  const words = PARAMETER_RULES[name]?.enum;
  return Array.isArray(words) && words.every((word) => typeof word === 'string') ? words : undefined;
}

/** The resource each input type writes, so inputs carry the resource's field rules. */
const RESOURCE_OF_INPUT: Record<string, string> = {
  CreateUserInput: 'User',
  ReplaceUserInput: 'User',
  UpdateUserInput: 'User',
  CreateOrderInput: 'Order',
  CreateWebhookEndpointInput: 'WebhookEndpoint',
  UpdateWebhookEndpointInput: 'WebhookEndpoint',
};

/** Query and path parameters, by their REST names. */
const PARAMETER_RULES: Record<string, Json> = {
  user_id: { type: 'string', pattern: idPattern('user'), example: EXAMPLE_USER_ID },
  order_id: { type: 'string', pattern: idPattern('order'), example: EXAMPLE_ORDER_ID },
  event_id: { type: 'string', pattern: idPattern('event'), example: EXAMPLE_EVENT_ID },
  endpoint_id: { type: 'string', pattern: idPattern('webhookEndpoint'), example: EXAMPLE_ENDPOINT_ID },
  type: { type: 'string', enum: EVENT_TYPE_NAMES.map(enumNameOf), example: 'ORDER_CREATED' },
  status: { type: 'string', enum: [...DELIVERY_STATES], example: 'dead' },
  limit: { type: 'integer', minimum: 1, maximum: PAGE_SIZE.max, default: PAGE_SIZE.default, example: PAGE_SIZE.default },
  // No examples for the alternative paging styles: documentation tools would send them together.
  page: { type: 'integer', minimum: 1, maximum: PAGE_NUMBER_MAX },
  after_id: { type: 'string', pattern: idPattern('user') },
  cursor: { type: 'string', maxLength: MAX_CURSOR_LENGTH },
  // No `default`: a client that sends declared defaults would send it with after_id, which takes no sort.
  sort: { type: 'string', enum: [...USER_SORTS], example: '-createdAt' },
};

const PARAMETER_DESCRIPTIONS: Record<string, string> = {
  user_id: 'The id of a user.',
  order_id: 'The id of an order.',
  event_id: 'The id of an event.',
  endpoint_id: 'The id of a webhook endpoint.',
  type: 'Only events of this type (`ORDER_CREATED` for `order.created`, and so on).',
  status: 'Only deliveries in this state; `dead` lists the dead-letter queue.',
  limit: 'How many items a page holds.',
  page: 'Numbered paging (1-based): the response carries totals. Cannot be combined with `after_id` or `cursor`.',
  after_id:
    'Keyset paging: the users created after this one, ordered by id. `pagination.nextCursor` is the `after_id` of the next page. A walk from the start begins at the lowest id, `usr_00000000000000000000000000`.',
  cursor:
    'Cursor paging (the default style): `pagination.nextCursor` (or `nextCursor`) of the previous page, with the same `sort` where the list takes one.',
  sort: 'Order of the list, `createdAt` when not given; the id breaks ties. A leading `-` sorts descending. Not with `after_id`, which always orders by id.',
};

const EXAMPLE_USER = {
  id: EXAMPLE_USER_ID,
  name: 'Ada Lovelace',
  email: 'ada@example.com',
  createdAt: '2026-11-22T09:30:00.000Z',
  updatedAt: '2026-11-22T09:30:00.000Z',
};
const EXAMPLE_ORDER = {
  id: EXAMPLE_ORDER_ID,
  total: 1999,
  status: 'pending',
  createdAt: '2026-11-22T09:31:00.000Z',
  userId: EXAMPLE_USER_ID,
};
const EXAMPLE_BODIES: Record<string, Json> = {
  createUser: { name: 'Ada Lovelace', email: 'ada@example.com' },
  replaceUser: { name: 'Ada King', email: 'ada.king@example.com' },
  updateUser: { name: 'Ada King' },
  createOrder: { total: 1999, status: 'pending' },
  createWebhookEndpoint: { url: 'https://example.com/webhooks/portico', events: ['ORDER_CREATED'], description: 'Order fulfilment' },
  updateWebhookEndpoint: { enabled: false },
  rotateWebhookEndpointSecret: { overlapSeconds: 3600 },
  resendDeadWebhookDeliveries: { from: '2026-11-22T00:00:00.000Z' },
};
const EXAMPLE_EVENT = {
  id: EXAMPLE_EVENT_ID,
  type: 'order.created',
  createdAt: '2026-11-22T09:31:00.000Z',
  data: { object: EXAMPLE_ORDER },
};
const EXAMPLE_DELIVERY = {
  eventId: EXAMPLE_EVENT_ID,
  eventType: 'order.created',
  status: 'succeeded',
  nextAttemptAt: null,
  createdAt: '2026-11-22T09:31:00.000Z',
  finishedAt: '2026-11-22T09:31:00.042Z',
  attempts: [
    {
      number: 1,
      startedAt: '2026-11-22T09:31:00.004Z',
      durationMs: 38,
      statusCode: 200,
      error: null,
      responseBody: null,
      signature: 'sha256=9f2c7e5b1d4a8c0e6f3b2a1d9c8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e',
    },
  ],
};
const EXAMPLE_ENDPOINT = {
  id: EXAMPLE_ENDPOINT_ID,
  url: 'https://example.com/webhooks/portico',
  events: ['ORDER_CREATED'],
  description: 'Order fulfilment',
  enabled: true,
  createdAt: '2026-11-22T09:00:00.000Z',
  updatedAt: '2026-11-22T09:00:00.000Z',
  previousSecretExpiresAt: null,
  disabledReason: null,
  secret: null,
};

const RESPONSE_OF_KIND: Partial<Record<ProblemKind, string>> = {
  'invalid-input': 'BadRequest',
  unauthenticated: 'Unauthenticated',
  forbidden: 'Forbidden',
  'not-found': 'NotFound',
  conflict: 'Conflict',
  'idempotency-key-in-flight': 'IdempotencyKeyInFlight',
  'idempotency-key-reused': 'IdempotencyKeyReused',
  'precondition-failed': 'PreconditionFailed',
  'payload-too-large': 'PayloadTooLarge',
  'unsupported-media-type': 'UnsupportedMediaType',
  'uri-too-long': 'UriTooLong',
  'request-timeout': 'RequestTimeout',
  'request-header-fields-too-large': 'RequestHeaderFieldsTooLarge',
  'quota-exceeded': 'TooManyRequests',
  internal: 'InternalError',
  // Both 503s share one response; its description says which is which.
  timeout: 'ServiceUnavailable',
  unavailable: 'ServiceUnavailable',
};

/** Sent with every answer to a request with a valid key (see the README's Limits). */
const RATE_LIMIT_HEADERS = {
  'RateLimit-Policy': {
    description: "The key's budget (draft-ietf-httpapi-ratelimit-headers): `q` operations per `w` seconds.",
    schema: { type: 'string', example: '"per-key";q=600;w=60' },
  },
  RateLimit: {
    description: 'What is left of the budget: `r` operations, renewed in `t` seconds.',
    schema: { type: 'string', example: '"per-key";r=599;t=60' },
  },
};

const pascal = (name: string) => name[0]!.toUpperCase() + name.slice(1);
const ref = (kind: 'schemas' | 'responses' | 'headers', name: string) => ({ $ref: `#/components/${kind}/${name}` });
const RATE_LIMIT_FIELDS = { 'RateLimit-Policy': ref('headers', 'RateLimit-Policy'), RateLimit: ref('headers', 'RateLimit') };
/** Refused before the API key is looked at (by Node's HTTP parser), so without the key's RateLimit fields. */
const BEFORE_THE_KEY: ReadonlySet<ProblemKind> = new Set(['uri-too-long', 'request-timeout', 'request-header-fields-too-large']);

/** The headers a problem of `kind` comes with: its own, and the RateLimit fields once the key is known. */
function documentedHeaders(kind: ProblemKind): Json {
  return { ...(BEFORE_THE_KEY.has(kind) ? {} : RATE_LIMIT_FIELDS), ...RESPONSE_HEADERS[RESPONSE_OF_KIND[kind]!] };
}

/**
 * Whether an input field may be sent as null: when its resource holds null there too (a webhook
 * endpoint's `events`: every type; its `description`: none), null sets that. Other nullable input
 * fields are null only in GraphQL's sense of "not given"; sent as null, they are refused or mean
 * their default, so the document asks for a value.
 */
function nullInResource(schema: GraphQLSchema, inputName: string, field: string): boolean {
  const resource = schema.getType(RESOURCE_OF_INPUT[inputName] ?? '');
  const same = isObjectType(resource) ? resource.getFields()[field] : undefined;
  return same !== undefined && !isNonNullType(same.type);
}

/** A GraphQL object or input type as a JSON Schema, with nullability and the services' constraints. */
function objectSchema(schema: GraphQLSchema, typeName: string, options: { omit?: string[]; closed?: boolean } = {}): Json {
  const type = schema.getType(typeName);
  if (!isObjectType(type) && !isInputObjectType(type)) throw new Error(`${typeName} is not an object or input type`);
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- SOFA types its JSON Schema `any`; an object type's has these
  const built = buildSchemaObjectFromType(type, { customScalars: CUSTOM_SCALARS }) as {
    properties: Record<string, Json>;
    required?: string[];
  };
  const fields = type.getFields();
  const properties: Record<string, Json> = {};
  // A response always holds every field of its type (null where it has no value); an input needs its non-null fields.
  const required = isObjectType(type)
    ? Object.keys(built.properties).filter((name) => !options.omit?.includes(name))
    : (built.required ?? []).filter((name) => !options.omit?.includes(name));
  for (const [name, property] of Object.entries(built.properties)) {
    if (options.omit?.includes(name)) continue;
    const rules = FIELD_RULES[`${RESOURCE_OF_INPUT[typeName] ?? typeName}.${name}`] ?? {};
    const nullable = !isNonNullType(fields[name]!.type) && (isObjectType(type) || nullInResource(schema, typeName, name));
    const scalar = typeof property.type === 'string' && property.type !== 'object' && property.type !== 'array';
    // An array or a scalar may be null; an object property is a $ref, which no field here is nullable as.
    const nullableType = nullable && typeof property.type === 'string' && property.type !== 'object';
    const example = scalar && !('example' in rules) ? exampleOf(typeName, name) : undefined;
    // A string every answer or input must hold is never empty (an id, a name, a URL…).
    const nonEmpty = property.type === 'string' && !nullable && required.includes(name) && !EMPTY_ALLOWED.has(`${typeName}.${name}`);
    properties[name] = {
      ...property,
      ...(nonEmpty ? { minLength: 1 } : {}),
      ...rules,
      ...(example === undefined ? {} : { example }),
      ...(nullableType ? { type: [property.type, 'null'] } : {}),
    };
  }
  return {
    type: 'object',
    ...(type.description ? { description: type.description } : {}),
    properties,
    ...(required.length > 0 ? { required } : {}),
    ...(options.closed ? { additionalProperties: false } : {}),
  };
}

function parameters(schema: GraphQLSchema, route: RestRoute): Json[] {
  const inPath = pathParameters(route.path);
  const query = queryParameters(schema, route).map(({ name }) => name);
  return [
    ...inPath.map((name) => ({
      name,
      in: 'path',
      required: true,
      description: PARAMETER_DESCRIPTIONS[name],
      schema: PARAMETER_RULES[name],
    })),
    ...query.map((name) => ({
      name,
      in: 'query',
      required: false,
      description: PARAMETER_DESCRIPTIONS[name],
      schema: PARAMETER_RULES[name],
    })),
  ];
}

/** Sent on every write (see the README's Idempotent writes). */
const IDEMPOTENCY_KEY_PARAMETER = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: 'header',
  required: false,
  description:
    'A unique value per write, the same when retrying it: the write runs once, and a retry gets its recorded response ' +
    `(with \`${IDEMPOTENT_REPLAYED_HEADER}: true\`) for the retention period. Scoped to the API key; the same value for a ` +
    'different request is refused with 422, and while the first request runs, with 409. A service may require it on POST.',
  schema: {
    type: 'string',
    minLength: 1,
    maxLength: IDEMPOTENCY_KEY_MAX_LENGTH,
    pattern: '^[\\x20-\\x7E]+$',
    example: '2f1c6a8e-order-42',
  },
};

const IDEMPOTENT_REPLAYED = {
  description: 'Present, and `true`, on a response replayed from an earlier request with the same Idempotency-Key.',
  schema: { type: 'string', enum: ['true'] },
};

const RETRY_AFTER_IN_FLIGHT = {
  description: 'Seconds to wait before retrying, while a request with the same Idempotency-Key runs.',
  schema: { type: 'integer', minimum: 1, example: 1 },
};

/** Headers that come with some problem responses, by response name. */
const RESPONSE_HEADERS: Partial<Record<string, Json>> = {
  Unauthenticated: {
    'WWW-Authenticate': {
      description:
        'The credentials to send: `ApiKey realm="portico", header="x-api-key"` without a valid key; `Bearer realm="portico"` when the operation needs the user\'s token.',
      schema: { type: 'string', example: 'Bearer realm="portico"' },
    },
  },
  ServiceUnavailable: {
    'Retry-After': {
      description: 'Seconds to wait before trying again, when the database cannot be reached.',
      schema: { type: 'integer', minimum: 1, example: 2 },
    },
  },
  IdempotencyKeyInFlight: { 'Retry-After': RETRY_AFTER_IN_FLIGHT },
  UnsupportedMediaType: {
    'Accept-Encoding': {
      description: 'When the body was refused for its `Content-Encoding`: `identity`, the only coding taken (send the body uncompressed).',
      schema: { type: 'string', example: 'identity' },
    },
    'Accept-Patch': {
      description: 'On a PATCH: the media types its body may have.',
      schema: { type: 'string', example: 'application/merge-patch+json, application/json' },
    },
  },
  TooManyRequests: {
    'Retry-After': {
      description: 'Seconds until the budget renews and the request would be admitted.',
      schema: { type: 'integer', minimum: 1, example: 42 },
    },
  },
};

/**
 * One response per status: a kind's own, or one that names every kind the operation may answer with
 * it. On a write, a status whose answer is kept for the write's Idempotency-Key may come replayed,
 * so it names Idempotent-Replayed too.
 */
function errorResponses(kinds: readonly ProblemKind[], writes: boolean): Json {
  const byStatus = Map.groupBy(kinds, (kind) => PROBLEM_KINDS[kind].status);
  return Object.fromEntries(
    [...byStatus].map(([status, shared]): [number, Json] => {
      const replayable = writes && shared.some(isReplayable);
      if (shared.length === 1) return [status, ref('responses', responseName(shared[0]!, replayable))];
      return [status, problemResponse(shared, replayable ? REPLAYED_HEADERS : {})];
    }),
  );
}

/** Refused before the operation runs, where a write's key is claimed: never a write's outcome. */
const BEFORE_THE_OPERATION: ReadonlySet<ProblemKind> = new Set([
  ...BEFORE_THE_KEY,
  'precondition-failed',
  'payload-too-large',
  'unsupported-media-type',
]);
/** A write's answer of this kind may be a replay: it is kept for the write's Idempotency-Key. */
const isReplayable = (kind: ProblemKind) => isKept(kind) && !isOneOf(KEY_REFUSALS, kind) && !BEFORE_THE_OPERATION.has(kind);
const REPLAYED_HEADERS = { [IDEMPOTENT_REPLAYED_HEADER]: IDEMPOTENT_REPLAYED };
/** The shared response of a kind, as a write answers it (naming Idempotent-Replayed) or as any other operation does. */
const responseName = (kind: ProblemKind, onWrite: boolean) => `${RESPONSE_OF_KIND[kind]!}${onWrite ? 'OnWrite' : ''}`;

/** A problem response for one or more kinds that share a status, with any headers beyond theirs. */
function problemResponse(kinds: readonly ProblemKind[], moreHeaders: Json): Json {
  const headers: Json = {};
  for (const kind of kinds) Object.assign(headers, documentedHeaders(kind));
  Object.assign(headers, moreHeaders);
  const [only] = kinds.length === 1 ? kinds : [];
  return {
    description: only
      ? describeProblem(only)
      : kinds.map((kind) => `${PROBLEM_KINDS[kind].title} (\`${PROBLEM_TYPE_BASE}${kind}\`)`).join('; or '),
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    content: { 'application/problem+json': { schema: ref('schemas', 'Problem'), ...(only ? { example: problemExample(only) } : {}) } },
  };
}

function errorKinds(route: RestRoute): ProblemKind[] {
  // Every route needs an API key (401 without a valid one) whose scope and allowlist permit it (403).
  const kinds: ProblemKind[] = ['invalid-input', 'unauthenticated', 'forbidden'];
  // A resource named in the path may not exist. A collection's field is nullable only so that an
  // error in it leaves the rest of a GraphQL document's data: on REST it is that error's answer.
  if (pathParameters(route.path).length > 0) kinds.push('not-found');
  if (['createUser', 'replaceUser', 'updateUser', 'createWebhookEndpoint', 'resendWebhookDelivery'].includes(route.operationId)) {
    kinds.push('conflict');
  }
  if (!isSafeMethod(route.method)) kinds.push('idempotency-key-in-flight', 'idempotency-key-reused');
  // A write without a body of its own is refused one over the limit all the same, before it is read;
  // and one on a precondition the service cannot evaluate (plugins/preconditions.ts).
  if (!isSafeMethod(route.method)) kinds.push('payload-too-large', 'precondition-failed');
  if (route.body) kinds.push('unsupported-media-type');
  kinds.push('request-timeout', 'uri-too-long', 'quota-exceeded', 'request-header-fields-too-large', 'internal', 'unavailable');
  return kinds;
}

function operation(schema: GraphQLSchema, route: RestRoute): Json {
  const field = routeField(schema, route);
  const resultType = getNamedType(field.type).name;
  const writes = !isSafeMethod(route.method);
  const successHeaders = {
    ...RATE_LIMIT_FIELDS,
    ...(writes ? { [IDEMPOTENT_REPLAYED_HEADER]: IDEMPOTENT_REPLAYED } : {}),
  };
  const success =
    route.status === 204
      ? { description: 'Done; no content.', headers: successHeaders }
      : {
          description: route.status === 201 ? 'Created.' : 'OK.',
          headers: {
            ...successHeaders,
            ...(route.location
              ? {
                  Location: {
                    description: 'Path of the created resource.',
                    schema: { type: 'string', example: route.location({ id: EXAMPLE_ID_OF[resultType]! }) },
                  },
                }
              : {}),
          },
          content: { 'application/json': { schema: ref('schemas', resultType), ...exampleFor(resultType) } },
        };
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...((route.description ?? field.description) ? { description: route.description ?? field.description } : {}),
    tags: [route.tag],
    // The user's token with the key, or an admin key alone (which acts for every user).
    ...(route.userToken ? { security: [{ ApiKey: [], UserToken: [] }, { ApiKey: [] }] } : {}),
    parameters: [...parameters(schema, route), ...(writes ? [IDEMPOTENCY_KEY_PARAMETER] : [])],
    ...(route.body
      ? {
          requestBody: {
            required: !route.body.optional,
            content: Object.fromEntries(
              route.body.mediaTypes.map((type) => [
                type,
                { schema: ref('schemas', `${pascal(route.operationId)}Body`), example: EXAMPLE_BODIES[route.operationId] },
              ]),
            ),
          },
        }
      : {}),
    responses: { [route.status]: success, ...errorResponses(errorKinds(route), writes) },
  };
}

/** Strings that may be empty: an attempt that could not be prepared was signed with nothing. */
const EMPTY_ALLOWED = new Set(['WebhookAttempt.signature']);

/** Examples of fields whose type's example holds null or nothing, by `Type.field` or field name. */
const PROPERTY_EXAMPLES: Record<string, unknown> = {
  nextCursor: EXAMPLE_CURSOR,
  hasMore: true,
  page: 3,
  limit: 20,
  total: 1234,
  totalPages: 62,
  enabled: true,
  disabledReason: 'The receiver answered 410 Gone at 2026-11-22T10:00:00.000Z; enable the endpoint again to resume.',
  previousSecretExpiresAt: '2026-11-23T09:00:00.000Z',
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw0FB5Lw4Yi6A=',
  nextAttemptAt: '2026-11-22T09:32:00.000Z',
  error: 'HTTP 503',
  responseBody: 'Service Unavailable',
  from: '2026-11-22T00:00:00.000Z',
  to: '2026-11-23T00:00:00.000Z',
};

/** Each input type's example, from the example bodies of the routes that take it. */
const INPUT_EXAMPLES: Record<string, string> = {
  CreateUserInput: 'createUser',
  ReplaceUserInput: 'replaceUser',
  UpdateUserInput: 'updateUser',
  CreateOrderInput: 'createOrder',
  CreateWebhookEndpointInput: 'createWebhookEndpoint',
  UpdateWebhookEndpointInput: 'updateWebhookEndpoint',
  RotateWebhookEndpointSecretInput: 'rotateWebhookEndpointSecret',
  ResendDeadWebhookDeliveriesInput: 'resendDeadWebhookDeliveries',
};

/** An example of one scalar field of a type: from the type's example, or the table above. */
function exampleOf(typeName: string, name: string): unknown {
  const whole: unknown = exampleFor(typeName).example ?? EXAMPLE_BODIES[INPUT_EXAMPLES[typeName] ?? ''];
  const own: unknown = typeof whole === 'object' && whole !== null ? Reflect.get(whole, name) : undefined;
  if (own !== undefined && own !== null && typeof own !== 'object') return own;
  return PROPERTY_EXAMPLES[`${typeName}.${name}`] ?? PROPERTY_EXAMPLES[name];
}

function exampleFor(typeName: string): Json {
  const examples: Record<string, unknown> = {
    WebhookAttempt: EXAMPLE_DELIVERY.attempts[0],
    CursorPagination: { nextCursor: EXAMPLE_CURSOR, hasMore: true },
    OffsetPagination: { page: 3, limit: 20, total: 1234, totalPages: 62 },
    User: EXAMPLE_USER,
    Order: EXAMPLE_ORDER,
    UserList: { data: [EXAMPLE_USER], pagination: { nextCursor: EXAMPLE_CURSOR, hasMore: true } },
    OrderList: { items: [EXAMPLE_ORDER], nextCursor: null },
    Event: EXAMPLE_EVENT,
    EventList: { items: [EXAMPLE_EVENT], nextCursor: 'AgAAAAAB6wNldnQBk0h6pr0FQFhCUa2iEQ6cb1A2Z3eWfYzJ', hasMore: false },
    WebhookEndpoint: EXAMPLE_ENDPOINT,
    WebhookEndpointList: { items: [EXAMPLE_ENDPOINT], nextCursor: null },
    WebhookDelivery: EXAMPLE_DELIVERY,
    WebhookDeliveryList: { items: [EXAMPLE_DELIVERY], nextCursor: null },
    WebhookRedelivery: { queued: 12, remaining: 0 },
  };
  return typeName in examples ? { example: examples[typeName] } : {};
}

const PROBLEM_SCHEMA = {
  type: 'object',
  description: 'RFC 9457 Problem Details.',
  required: ['type', 'title', 'status', 'detail'],
  properties: {
    type: {
      type: 'string',
      format: 'uri',
      description: 'Identifies the kind of problem; stable.',
      example: `${PROBLEM_TYPE_BASE}invalid-input`,
      minLength: 1,
    },
    title: { type: 'string', description: 'Short summary of the kind of problem.', example: 'Invalid input', minLength: 1 },
    status: { type: 'integer', description: 'The HTTP status code.', example: 400 },
    detail: {
      type: 'string',
      description: 'What went wrong this time.',
      example: 'email: must be an email address like ada@example.com',
      minLength: 1,
    },
    instance: { type: 'string', description: 'The path of the request that failed.', example: '/users' },
    errors: {
      type: 'array',
      description: 'For invalid input: every offending field or parameter.',
      items: {
        type: 'object',
        required: ['field', 'message'],
        properties: {
          field: {
            type: 'string',
            description: 'The field or parameter as the request named it (empty when it was sent with an empty name).',
            example: 'email',
          },
          message: { type: 'string', example: 'must be an email address like ada@example.com', minLength: 1 },
        },
      },
    },
  },
};

/** What a response of one kind is, as its description says it. */
function describeProblem(kind: ProblemKind): string {
  return RESPONSE_OF_KIND[kind] === 'ServiceUnavailable'
    ? `The database cannot be reached (\`${PROBLEM_TYPE_BASE}unavailable\`, with Retry-After), or the request or one of its statements ran past its time limit (\`${PROBLEM_TYPE_BASE}timeout\`).`
    : PROBLEM_KINDS[kind].title;
}

function problemExample(kind: ProblemKind): Json {
  const { status, title } = PROBLEM_KINDS[kind];
  return {
    type: PROBLEM_TYPE_BASE + kind,
    title,
    status,
    detail: kind === 'invalid-input' ? 'email: must be an email address like ada@example.com' : `${title}.`,
    instance: '/users',
    ...(kind === 'invalid-input' ? { errors: [{ field: 'email', message: 'must be an email address like ada@example.com' }] } : {}),
  };
}

function problemResponses(): Json {
  const responses: Json = {};
  for (const kind of Object.keys(RESPONSE_OF_KIND).filter(isProblemKind)) {
    responses[responseName(kind, false)] ??= problemResponse([kind], {});
    if (isReplayable(kind)) responses[responseName(kind, true)] ??= problemResponse([kind], REPLAYED_HEADERS);
  }
  return responses;
}

/** The responses some operation refers to (a status several kinds share has a combined response of its own). */
function referencedOnly(responses: Json, paths: Json): Json {
  const text = JSON.stringify(paths);
  return Object.fromEntries(Object.entries(responses).filter(([name]) => text.includes(`"#/components/responses/${name}"`)));
}

/** The document; `publicUrl` is the absolute URL clients reach the service at (its `servers`). */
export function buildOpenApiDocument(fullSchema: GraphQLSchema, version: string, publicUrl: string): Json {
  const schema = restSchema(fullSchema);
  const schemas: Record<string, Json> = {};
  for (const name of [
    'User',
    'Order',
    'UserList',
    'OffsetPagination',
    'CursorPagination',
    'OrderList',
    'Event',
    'EventList',
    'WebhookEndpoint',
    'WebhookEndpointList',
    'WebhookDelivery',
    'WebhookAttempt',
    'WebhookDeliveryList',
    'WebhookRedelivery',
  ]) {
    schemas[name] = objectSchema(schema, name);
  }
  for (const route of ROUTES.filter((r) => r.body)) {
    const input = getNamedType(routeField(schema, route).args.find((arg) => arg.name === 'input')!.type).name;
    schemas[`${pascal(route.operationId)}Body`] = objectSchema(schema, input, {
      omit: Object.values(route.body!.fromPath ?? {}),
      closed: true,
    });
  }
  schemas.Problem = PROBLEM_SCHEMA;

  const paths: Record<string, Json> = {};
  for (const route of ROUTES) (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(schema, route);

  return {
    openapi: '3.1.0',
    info: {
      title: 'Portico REST API',
      version,
      description: [
        'Users and their orders, as resources. The same data and rules as the GraphQL API at `/graphql`, from the same schema.',
        `Errors are Problem Details (RFC 9457, \`application/problem+json\`); bodies are JSON, at most ${MAX_BODY_BYTES / 1024} KiB.`,
      ].join('\n\n'),
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      contact: { name: 'Portico', url: 'https://portico.dev' },
    },
    servers: [{ url: publicUrl, description: 'This service' }],
    security: [{ ApiKey: [] }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      schemas,
      responses: referencedOnly(problemResponses(), paths),
      headers: RATE_LIMIT_HEADERS,
      securitySchemes: {
        ApiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The API key of the calling application.' },
        UserToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            "A user's token (OAuth 2.0 bearer JWT), sent with the API key on operations on that user's own data; an admin key needs none. Without it those operations answer 401 with `WWW-Authenticate: Bearer`.",
        },
      },
    },
  };
}

/** Stands for the served document's server URL until a request says which address it came to. */
const SERVER_URL_SLOT = 'https://server.invalid';

/**
 * Serves the document at GET /openapi.json, built once from the schema the server runs. Its `servers`
 * entry is PUBLIC_URL, or else the address the document was fetched from, so that tools reading it
 * by URL can call the API from the document alone.
 */
export function useOpenApiDocument(version: string, publicUrl: string | undefined, trustProxy: readonly string[]): ServerPlugin {
  const isTrustedProxy = networkMatcher(trustProxy);
  let body = '';
  return {
    onSchemaChange({ schema }) {
      body = JSON.stringify(buildOpenApiDocument(assertSchema(schema), version, publicUrl ?? SERVER_URL_SLOT));
    },
    onRequest({ request, url, serverContext, endResponse, fetchAPI }) {
      if (url.pathname !== OPENAPI_PATH || !servesRead(request, endResponse)) return;
      const origin = publicUrl ? undefined : forwardedOrigin(url, serverContext.req, isTrustedProxy);
      const served = origin === undefined ? body : body.replace(JSON.stringify(SERVER_URL_SLOT), JSON.stringify(origin));
      endResponse(
        new fetchAPI.Response(request.method === 'HEAD' ? null : served, {
          // Public and credential-free: browser-based editors may load it by URL from any origin.
          // HEAD says the length GET would send (RFC 9110 §9.3.2), which a body-less answer does not by itself.
          headers: {
            'content-type': 'application/json; charset=utf-8',
            'content-length': String(Buffer.byteLength(served)),
            'access-control-allow-origin': '*',
          },
        }),
      );
    },
  };
}
