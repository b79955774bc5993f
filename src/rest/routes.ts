// The REST facade, route by route: which GraphQL root field does the work and how the HTTP request
// maps onto its arguments. Everything else about REST (SOFA's configuration, the adapter, the
// OpenAPI document) is derived from this table.
import { RESEND_BATCH } from '../services/webhook-deliveries.ts';
import { OperationTypeNode, type GraphQLArgument, type GraphQLField, type GraphQLSchema } from 'graphql';
import { decodeComponent } from '../net/uri.ts';
import type { IdKind } from '../db/ids.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** The groups routes are documented in, with what each holds. */
export const TAGS = {
  Users: 'People who place orders.',
  Orders: "Orders, created and listed under their user's path.",
  Events: 'Every change to a resource, in the order of its commit: the feed webhooks deliver from.',
  'Webhook endpoints': 'URLs that receive events as signed webhooks, each managed by the API key that registered it.',
} as const;

export interface RestRoute {
  method: HttpMethod;
  /** As documented, with `{name}` path parameters. */
  path: string;
  /** The root field that does the work, e.g. `Query.user`. */
  field: `Query.${string}` | `Mutation.${string}`;
  /** REST parameter names that differ from the field's argument names (REST name → argument). */
  rename?: Record<string, string>;
  /**
   * Routes with a body: the JSON object is the mutation's `input`; `fromPath` copies path parameters
   * into it; `optional`: no body at all stands for `{}`.
   */
  body?: { mediaTypes: readonly string[]; fromPath?: Record<string, string>; optional?: boolean };
  status: 200 | 201 | 204;
  /** For 201: the path of the resource the response body describes. */
  location?: (created: { id: string }) => string;
  operationId: string;
  summary: string;
  /** Overrides the field's description where the GraphQL wording does not fit REST. */
  description?: string;
  /**
   * Acts on one user's own data, so it needs that user's token (`Authorization: Bearer <jwt>`) unless
   * the API key is an admin key: the routes whose fields check `actsFor` (graphql/acts-for.ts).
   */
  userToken?: true;
  tag: keyof typeof TAGS;
}

const JSON_BODY = ['application/json'] as const;
const PATCH_BODY = ['application/merge-patch+json', 'application/json'] as const;

export const ROUTES: readonly RestRoute[] = [
  {
    method: 'GET',
    path: '/users',
    field: 'Query.userList',
    rename: { after_id: 'afterId' },
    status: 200,
    operationId: 'listUsers',
    summary: 'List users',
    description: [
      'Users, a page at a time. The parameters choose the paging style; combining styles is an error.',
      '`page`: numbered pages, with `pagination.total` and `totalPages`; a page past the end is empty.',
      '`after_id`: the users after that id, ordered by id; `pagination.nextCursor` is the next `after_id`.',
      'Otherwise cursors (the default): pass `pagination.nextCursor` as `cursor` with the same `sort`; `hasMore` tells whether a next page exists.',
    ].join(' '),
    tag: 'Users',
  },
  {
    method: 'POST',
    path: '/users',
    field: 'Mutation.createUser',
    body: { mediaTypes: JSON_BODY },
    status: 201,
    location: (user) => `/users/${user.id}`,
    description:
      'Creates a user from `name` and `email`; answers 201 with the user and its `Location`. 409 when the email is taken (compared case-insensitively).',
    operationId: 'createUser',
    summary: 'Create a user',
    tag: 'Users',
  },
  {
    method: 'GET',
    path: '/users/{user_id}',
    field: 'Query.user',
    rename: { user_id: 'id' },
    status: 200,
    description: 'The user with this id; 404 when there is none.',
    operationId: 'getUser',
    summary: 'Get a user',
    tag: 'Users',
  },
  {
    method: 'PUT',
    path: '/users/{user_id}',
    field: 'Mutation.replaceUser',
    rename: { user_id: 'id' },
    body: { mediaTypes: JSON_BODY },
    status: 200,
    userToken: true,
    description:
      'Replaces every writable field (`name` and `email`, both required). 404 when there is no such user; 409 when the email is taken.',
    operationId: 'replaceUser',
    summary: 'Replace a user',
    tag: 'Users',
  },
  {
    method: 'PATCH',
    path: '/users/{user_id}',
    field: 'Mutation.updateUser',
    rename: { user_id: 'id' },
    body: { mediaTypes: PATCH_BODY },
    status: 200,
    userToken: true,
    description:
      'Changes the fields sent (JSON Merge Patch); the others keep their values, and null is refused. 404 when there is no such user; 409 when the email is taken.',
    operationId: 'updateUser',
    summary: 'Update some fields of a user',
    tag: 'Users',
  },
  {
    method: 'DELETE',
    path: '/users/{user_id}',
    field: 'Mutation.deleteUser',
    rename: { user_id: 'id' },
    status: 204,
    userToken: true,
    description: 'Deletes the user and all of their orders; answers 204 with no body. 404 when there is no such user.',
    operationId: 'deleteUser',
    summary: 'Delete a user and their orders',
    tag: 'Users',
  },
  {
    method: 'GET',
    path: '/users/{user_id}/orders',
    field: 'Query.orderList',
    rename: { user_id: 'userId' },
    status: 200,
    userToken: true,
    description:
      "A user's orders, newest first, a page at a time: pass `nextCursor` as `cursor` for the next page. 404 when the user does not exist.",
    operationId: 'listUserOrders',
    summary: "List a user's orders",
    tag: 'Orders',
  },
  {
    method: 'POST',
    path: '/users/{user_id}/orders',
    field: 'Mutation.createOrder',
    body: { mediaTypes: JSON_BODY, fromPath: { user_id: 'userId' } },
    status: 201,
    location: (order) => `/orders/${order.id}`,
    userToken: true,
    description:
      'Places an order for the user in the path; answers 201 with the order and its `Location` (`/orders/{order_id}`). 404 when the user does not exist.',
    operationId: 'createOrder',
    summary: 'Place an order for a user',
    tag: 'Orders',
  },
  {
    method: 'GET',
    path: '/orders/{order_id}',
    field: 'Query.order',
    rename: { order_id: 'id' },
    status: 200,
    userToken: true,
    description: "The order with this id; 404 when there is none, or when it is another user's (with that user's token).",
    operationId: 'getOrder',
    summary: 'Get an order',
    tag: 'Orders',
  },
  {
    method: 'GET',
    path: '/events',
    field: 'Query.eventList',
    status: 200,
    operationId: 'listEvents',
    summary: 'List events, oldest first',
    tag: 'Events',
  },
  {
    method: 'GET',
    path: '/events/{event_id}',
    field: 'Query.event',
    rename: { event_id: 'id' },
    status: 200,
    operationId: 'getEvent',
    summary: 'Get an event',
    description: 'The event with this id, exactly as webhooks deliver it. 404 when there is none, or it is past its retention.',
    tag: 'Events',
  },
  {
    method: 'GET',
    path: '/webhook-endpoints',
    field: 'Query.webhookEndpoints',
    status: 200,
    operationId: 'listWebhookEndpoints',
    summary: 'List webhook endpoints',
    tag: 'Webhook endpoints',
  },
  {
    method: 'POST',
    path: '/webhook-endpoints',
    field: 'Mutation.createWebhookEndpoint',
    body: { mediaTypes: JSON_BODY },
    status: 201,
    location: (endpoint) => `/webhook-endpoints/${endpoint.id}`,
    operationId: 'createWebhookEndpoint',
    summary: 'Register a webhook endpoint',
    tag: 'Webhook endpoints',
  },
  {
    method: 'GET',
    path: '/webhook-endpoints/{endpoint_id}',
    field: 'Query.webhookEndpoint',
    rename: { endpoint_id: 'id' },
    status: 200,
    operationId: 'getWebhookEndpoint',
    summary: 'Get a webhook endpoint',
    description: "The webhook endpoint with this id. 404 when there is none, or it is another API key's.",
    tag: 'Webhook endpoints',
  },
  {
    method: 'PATCH',
    path: '/webhook-endpoints/{endpoint_id}',
    field: 'Mutation.updateWebhookEndpoint',
    rename: { endpoint_id: 'id' },
    body: { mediaTypes: PATCH_BODY },
    status: 200,
    description:
      "Changes the fields sent (JSON Merge Patch): `url` (checked again), `events` (null: every type), `description` (null clears it), `enabled`. 404 when there is none, or it is another API key's.",
    operationId: 'updateWebhookEndpoint',
    summary: 'Update some fields of a webhook endpoint',
    tag: 'Webhook endpoints',
  },
  {
    method: 'DELETE',
    path: '/webhook-endpoints/{endpoint_id}',
    field: 'Mutation.deleteWebhookEndpoint',
    rename: { endpoint_id: 'id' },
    status: 204,
    operationId: 'deleteWebhookEndpoint',
    summary: 'Delete a webhook endpoint',
    description: "Deletes the endpoint; its deliveries not yet made go with it. 404 when there is none, or it is another API key's.",
    tag: 'Webhook endpoints',
  },
  {
    method: 'POST',
    path: '/webhook-endpoints/{endpoint_id}/secrets',
    field: 'Mutation.rotateWebhookEndpointSecret',
    rename: { endpoint_id: 'id' },
    body: { mediaTypes: JSON_BODY, optional: true },
    status: 200,
    operationId: 'rotateWebhookEndpointSecret',
    summary: "Rotate a webhook endpoint's signing secret",
    description:
      'Issues a new signing secret, returned in this answer only (`secret`). The old secret keeps signing beside it for `overlapSeconds` (default 24 hours), so receivers can switch without missing a delivery. The body may be left out.',
    tag: 'Webhook endpoints',
  },
  {
    method: 'GET',
    path: '/webhook-endpoints/{endpoint_id}/deliveries',
    field: 'Query.webhookDeliveries',
    rename: { endpoint_id: 'endpointId' },
    status: 200,
    operationId: 'listWebhookDeliveries',
    summary: "List a webhook endpoint's deliveries",
    tag: 'Webhook endpoints',
  },
  {
    method: 'POST',
    path: '/webhook-endpoints/{endpoint_id}/deliveries/{event_id}/attempts',
    field: 'Mutation.resendWebhookDelivery',
    rename: { endpoint_id: 'endpointId', event_id: 'eventId' },
    status: 200,
    operationId: 'resendWebhookDelivery',
    summary: 'Re-send a delivery',
    description:
      'Sends the event to the endpoint again: a new series of attempts, with the same event id (the receiver deduplicates by it). 409 while an attempt is under way.',
    tag: 'Webhook endpoints',
  },
  {
    method: 'POST',
    path: '/webhook-endpoints/{endpoint_id}/redeliveries',
    field: 'Mutation.resendDeadWebhookDeliveries',
    rename: { endpoint_id: 'endpointId' },
    body: { mediaTypes: JSON_BODY, optional: true },
    status: 200,
    operationId: 'resendDeadWebhookDeliveries',
    summary: 'Re-send the dead-letter queue',
    description: `Sends the endpoint's dead deliveries again (only those that went dead within \`from\`–\`to\`, when given), ${RESEND_BATCH} at most, the oldest events first, and answers at once with how many were queued and how many remain (send it again for those). The body may be left out.`,
    tag: 'Webhook endpoints',
  },
];

/**
 * The kind of id each path or query parameter holds, checked before the operation runs: a malformed
 * one is refused like any other invalid parameter, costing nothing of the rate limit budget. The
 * resolver checks it again, for GraphQL.
 */
export const PARAMETER_IDS: Readonly<Record<string, IdKind>> = {
  user_id: 'user',
  after_id: 'user',
  order_id: 'order',
  event_id: 'event',
  endpoint_id: 'webhookEndpoint',
};

/** The `{name}` parameters of a documented path. */
export function pathParameters(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
}

/** A route's root operation type and root field name, from its `Type.field`. */
export function routeRoot(route: RestRoute): { operation: OperationTypeNode; fieldName: string } {
  const [typeName, fieldName = ''] = route.field.split('.');
  return { operation: typeName === 'Query' ? OperationTypeNode.QUERY : OperationTypeNode.MUTATION, fieldName };
}

/** The root field behind a route, in the given schema. */
export function routeField(schema: GraphQLSchema, route: RestRoute): GraphQLField<unknown, unknown> {
  const { operation, fieldName } = routeRoot(route);
  const type = operation === OperationTypeNode.QUERY ? schema.getQueryType() : schema.getMutationType();
  return type!.getFields()[fieldName]!;
}

/** REST names for the argument names a route feeds (argument → REST name), where they differ. */
export function restNames(route: RestRoute): ReadonlyMap<string, string> {
  return new Map(Object.entries({ ...route.rename, ...route.body?.fromPath }).map(([rest, argument]) => [argument, rest]));
}

/** The query parameters a route takes, by REST name; routes with a body take none. */
export function queryParameters(schema: GraphQLSchema, route: RestRoute): { name: string; argument: GraphQLArgument }[] {
  if (route.body) return [];
  const inPath = new Set(pathParameters(route.path).map((name) => route.rename?.[name] ?? name));
  const names = restNames(route);
  return routeField(schema, route)
    .args.filter((argument) => !inPath.has(argument.name))
    .map((argument) => ({ name: names.get(argument.name) ?? argument.name, argument }));
}

export interface RouteMatch {
  route: RestRoute;
  /** Path parameters by their REST names, percent-decoded once. */
  params: Record<string, string>;
  /** Path parameters whose percent-escapes do not decode (left as sent in `params`). */
  malformed: string[];
}

const compiled = ROUTES.map((route) => ({
  route,
  pattern: new RegExp(`^${route.path.replace(/\{(\w+)\}/g, '(?<$1>[^/]+)')}$`),
}));

/** The route for this method and path; or, when only the method is wrong, the methods the path allows. */
export function matchRoute(method: string, pathname: string): RouteMatch | { allow: HttpMethod[] } | undefined {
  const allow: HttpMethod[] = [];
  for (const { route, pattern } of compiled) {
    const match = pattern.exec(pathname);
    if (!match) continue;
    if (route.method === method) {
      const params: Record<string, string> = {};
      const malformed: string[] = [];
      for (const [name, raw] of Object.entries(match.groups ?? {})) {
        params[name] = decodeComponent(raw);
        if (params[name] === raw && raw.includes('%')) malformed.push(name);
      }
      return { route, params, malformed };
    }
    allow.push(route.method);
  }
  return allow.length > 0 ? { allow } : undefined;
}

/**
 * What a request's metrics and span call it when the adapter did not route it (refused before, for
 * want of a valid key or budget, or by method): its route's operation and template, or REST's with no
 * operation for a path served by other methods; nothing for a path REST does not serve.
 */
export function unroutedLabels(method: string, pathname: string): { face?: 'rest'; operation?: string; route?: string } {
  const match = matchRoute(method === 'HEAD' ? 'GET' : method, pathname);
  if (!match) return {};
  return 'allow' in match
    ? { face: 'rest', operation: 'none' }
    : { face: 'rest', operation: match.route.operationId, route: match.route.path };
}

/** The methods a REST path is served by, HEAD with GET (as the adapter answers it); undefined when none. */
export function restMethods(pathname: string): string[] | undefined {
  const match = matchRoute('', pathname);
  if (!match || !('allow' in match)) return undefined;
  return [...match.allow, ...(match.allow.includes('GET') ? ['HEAD'] : [])];
}
