// The benchmark's scenarios, each as every server asks for it: Portico (GraphQL and, where it has
// one, its REST route), PostGraphile 5 and 4 on the same tables, and raw SQL. Queries select the same
// fields, page sizes and orders on every server, so the work they ask of PostgreSQL is the same.
import { randomUUID } from 'node:crypto';
import { newId } from '../src/db/ids.ts';
import type { HttpRequest } from './load.ts';

export type ServerName =
  | 'Portico'
  | 'Portico baseline'
  | 'Portico twin'
  | 'Portico traced'
  | 'Portico unmetered'
  | 'PostGraphile 5'
  | 'PostGraphile 4'
  | 'raw pg'
  | 'Stack floor'
  | 'yoga + jit';

/**
 * What observability costs, in two scenarios: the same request to three more Porticos that serve only
 * these, so that they wait between their runs alike. The twin is Portico as everywhere else here
 * (metrics counted, no tracing); the traced one also samples 10% of traces and sends them to a
 * collector; the unmetered one serves no metrics, so it counts nothing. Tracing's cost is the traced
 * one against the twin, the metrics' the twin against the unmetered one. They take turns going first
 * from round to round (inRoundOrder).
 */
const observabilityPeers = (request: (i: number) => HttpRequest): Variant[] => [
  { label: 'Portico twin, untraced', server: 'Portico twin', request },
  { label: 'Portico, tracing 10%', server: 'Portico traced', request },
  { label: 'Portico, no metrics', server: 'Portico unmetered', request },
];

/** The servers observabilityPeers sends to. */
const PEERS: readonly ServerName[] = ['Portico twin', 'Portico traced', 'Portico unmetered'];

export interface Inputs {
  apiKey: string;
  userIds: readonly string[];
  /** With a baseline (BENCH_BASELINE), every Portico request is also sent to it, right before. */
  baseline?: boolean;
}

/**
 * The variants in the order they run in `round`: the observability peers rotate through their places
 * from round to round, so that none always meets the machine as another left it.
 */
export function inRoundOrder(variants: readonly Variant[], round: number): readonly Variant[] {
  const places = variants.flatMap((variant, index) => (PEERS.includes(variant.server) ? [index] : []));
  const order = [...variants];
  places.forEach((place, k) => {
    order[place] = variants[places[(k + round) % places.length]!]!;
  });
  return order;
}

/** The label of a write sent with an Idempotency-Key, beside the same write without one (`label`). */
export const keyedLabel = (label: string) => `${label} with \`Idempotency-Key\``;

/** The label of a Portico variant's request sent to the baseline. */
export const baselineLabel = (label: string) => `${label}, baseline`;

export interface Variant {
  /** Column label in the report. */
  label: string;
  server: ServerName;
  request: (i: number) => HttpRequest;
}

export interface Scenario {
  name: string;
  variants: Variant[];
}

const pick = <T>(list: readonly T[], i: number): T => list[(i * 7919) % list.length]!;

function graphql(query: string, variables: (i: number) => Record<string, unknown> = () => ({}), headers: Record<string, string> = {}) {
  return (i: number): HttpRequest => ({
    method: 'POST',
    path: '/graphql',
    headers,
    body: JSON.stringify({ query, variables: variables(i) }),
  });
}

export function scenarios(inputs: Inputs): Scenario[] {
  const all = allScenarios(inputs);
  if (!inputs.baseline) return all;
  return all.map((scenario) => ({
    ...scenario,
    variants: scenario.variants.flatMap((variant) =>
      variant.server === 'Portico'
        ? [{ ...variant, label: baselineLabel(variant.label), server: 'Portico baseline' as const }, variant]
        : [variant],
    ),
  }));
}

function allScenarios({ apiKey, userIds }: Inputs): Scenario[] {
  const key = { 'x-api-key': apiKey };
  const portico = (query: string, variables?: (i: number) => Record<string, unknown>) => graphql(query, variables, key);
  const get =
    (path: (i: number) => string, headers: Record<string, string> = {}) =>
    (i: number): HttpRequest => ({
      method: 'GET',
      path: path(i),
      headers,
    });
  const user = (i: number) => ({ id: pick(userIds, i) });
  const order = (i: number) => ({ userId: pick(userIds, i), total: 1000 + i });
  // PostGraphile inserts what it is given: the id and creation time Portico makes itself come with the input.
  const postgraphileOrder = (idField: string) => (i: number) => ({
    input: { order: { [idField]: newId('order'), ...order(i), status: 'pending', createdAt: new Date().toISOString() } },
  });

  const rawOrder = (i: number): HttpRequest => ({ method: 'POST', path: '/orders', body: JSON.stringify(order(i)) });
  // A new key per request, as a client sends for each new write.
  const withNewKey =
    (request: (i: number) => HttpRequest) =>
    (i: number): HttpRequest => {
      const sent = request(i);
      return { ...sent, headers: { ...sent.headers, 'idempotency-key': randomUUID() } };
    };

  const usersPage = portico('{ users(first: 20) { edges { cursor node { id name email } } pageInfo { hasNextPage endCursor } } }');
  const createOrder = portico('mutation ($input: CreateOrderInput!) { createOrder(input: $input) { id total } }', (i) => ({
    input: order(i),
  }));

  return [
    {
      name: '`users(first: 20)` with cursors',
      variants: [
        {
          label: 'Portico',
          server: 'Portico',
          request: usersPage,
        },
        ...observabilityPeers(usersPage),
        ...(['PostGraphile 5', 'PostGraphile 4'] as const).map((server) => ({
          label: server,
          server,
          request: graphql(
            `{ allUsers(first: 20, orderBy: [CREATED_AT_ASC, ${server === 'PostGraphile 5' ? 'ROW_ID_ASC' : 'ID_ASC'}]) { edges { cursor node { ${server === 'PostGraphile 5' ? 'rowId' : 'id'} name email } } pageInfo { hasNextPage endCursor } } }`,
          ),
        })),
        { label: 'raw pg', server: 'raw pg', request: get(() => '/users') },
      ],
    },
    {
      name: '`users(first: 20)`, each with `orders(limit: 5)`',
      variants: [
        {
          label: 'Portico',
          server: 'Portico',
          request: portico('{ users(first: 20) { edges { node { id name orders(limit: 5) { id total } } } } }'),
        },
        ...(['PostGraphile 5', 'PostGraphile 4'] as const).map((server) => {
          const id = server === 'PostGraphile 5' ? 'rowId' : 'id';
          const idOrder = server === 'PostGraphile 5' ? 'ROW_ID' : 'ID';
          return {
            label: server,
            server,
            request: graphql(
              `{ allUsers(first: 20, orderBy: [CREATED_AT_ASC, ${idOrder}_ASC]) { edges { node { ${id} name ordersByUserId(first: 5, orderBy: [CREATED_AT_DESC, ${idOrder}_DESC]) { nodes { ${id} total } } } } } }`,
            ),
          };
        }),
        { label: 'raw pg', server: 'raw pg', request: get(() => '/nested') },
      ],
    },
    {
      name: '`user(id)`',
      variants: [
        { label: 'Portico', server: 'Portico', request: portico('query ($id: ID!) { user(id: $id) { id name email } }', user) },
        { label: 'Portico REST `GET /users/{user_id}`', server: 'Portico', request: get((i) => `/users/${pick(userIds, i)}`, key) },
        {
          label: 'PostGraphile 5',
          server: 'PostGraphile 5',
          request: graphql('query ($id: String!) { userByRowId(rowId: $id) { rowId name email } }', user),
        },
        {
          label: 'PostGraphile 4',
          server: 'PostGraphile 4',
          request: graphql('query ($id: String!) { userById(id: $id) { id name email } }', user),
        },
        { label: 'raw pg', server: 'raw pg', request: get((i) => `/user?id=${pick(userIds, i)}`) },
        // The stack Portico is built on, without Portico (bench/stack-floor-server.ts): its prescribed
        // plugins as they come, and yoga with Pothos and graphql-jit alone, the fastest its GraphQL layer gets.
        ...(['Stack floor', 'yoga + jit'] as const).map((server) => ({
          label: server,
          server,
          request: graphql('query ($id: ID!) { user(id: $id) { id name email } }', user),
        })),
      ],
    },
    {
      name: '`createOrder`',
      variants: [
        { label: 'Portico', server: 'Portico', request: createOrder },
        ...observabilityPeers(createOrder),
        { label: keyedLabel('Portico'), server: 'Portico', request: withNewKey(createOrder) },
        {
          label: 'Portico REST `POST /users/{user_id}/orders`',
          server: 'Portico',
          request: (i) => ({
            method: 'POST',
            path: `/users/${pick(userIds, i)}/orders`,
            headers: key,
            body: JSON.stringify({ total: 1000 + i }),
          }),
        },
        {
          label: 'PostGraphile 5',
          server: 'PostGraphile 5',
          request: graphql(
            'mutation ($input: CreateOrderInput!) { createOrder(input: $input) { order { rowId total } } }',
            postgraphileOrder('rowId'),
          ),
        },
        {
          label: 'PostGraphile 4',
          server: 'PostGraphile 4',
          request: graphql(
            'mutation ($input: CreateOrderInput!) { createOrder(input: $input) { order { id total } } }',
            postgraphileOrder('id'),
          ),
        },
        { label: 'raw pg', server: 'raw pg', request: rawOrder },
        // The same SQL a keyed write sends, from node-postgres alone: the floor of what a key costs.
        { label: keyedLabel('raw pg'), server: 'raw pg', request: withNewKey(rawOrder) },
      ],
    },
    {
      name: 'a page of users, REST and GraphQL',
      variants: [
        { label: 'Portico REST `GET /users?limit=20`', server: 'Portico', request: get(() => '/users?limit=20', key) },
        {
          label: 'Portico GraphQL `userList(limit: 20)`',
          server: 'Portico',
          request: portico(
            '{ userList(limit: 20) { data { id name email createdAt updatedAt } pagination { ... on CursorPagination { nextCursor hasMore } } } }',
          ),
        },
        { label: 'raw pg', server: 'raw pg', request: get(() => '/users') },
      ],
    },
  ];
}
