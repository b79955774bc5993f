// Relay global object identification over real HTTP: `node` and `nodes` find users and orders by the
// ids clients already hold, under the same authorization as `user` and `order`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/db/ids.ts';
import { NODES_MAX } from '../../src/services/limits.ts';
import { startTestServer, testUserToken, type TestServer } from '../support/server.ts';
import { match } from '../support/match.ts';

let server: TestServer;
let alice: string;
let bob: string;
let bobsOrder: string;

const NODE = `query ($id: ID!) {
  node(id: $id) { __typename id ... on User { name email } ... on Order { total userId } }
}`;
const NODES = 'query ($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }';

interface NodeResult {
  node: { __typename: string; id: string; name?: string; total?: number; userId?: string } | null;
}

async function created<T>(query: string, variables: Record<string, unknown>): Promise<T> {
  const response = await server.gql<Record<string, T>>(query, variables);
  expect(response.body.errors).toBeUndefined();
  return Object.values(response.body.data!)[0]!;
}

beforeAll(async () => {
  server = await startTestServer();
  const createUser = 'mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }';
  alice = (await created<{ id: string }>(createUser, { input: { name: 'Alice', email: 'alice@example.com' } })).id;
  bob = (await created<{ id: string }>(createUser, { input: { name: 'Bob', email: 'bob@example.com' } })).id;
  const createOrder = 'mutation ($input: CreateOrderInput!) { createOrder(input: $input) { id } }';
  bobsOrder = (await created<{ id: string }>(createOrder, { input: { userId: bob, total: 4200 } })).id;
});
afterAll(() => server.close());

describe('node and nodes', () => {
  it('find a user and an order by the ids they already have, which stay unchanged', async () => {
    const user = await server.gql<NodeResult>(NODE, { id: alice });
    expect(user.body).toEqual({ data: { node: { __typename: 'User', id: alice, name: 'Alice', email: 'alice@example.com' } } });
    const order = await server.gql<NodeResult>(NODE, { id: bobsOrder });
    expect(order.body).toEqual({ data: { node: { __typename: 'Order', id: bobsOrder, total: 4200, userId: bob } } });
    // The id a `user` query returns is the one `node` takes: no second id scheme to translate.
    const byUser = await server.gql<{ user: { id: string } }>('query ($id: ID!) { user(id: $id) { id } }', { id: alice });
    expect(byUser.body.data!.user.id).toBe(alice);
  });

  it('answer every field that asks for the same node in one document, as clients that refetch by fragment do', async () => {
    const user = { __typename: 'User', id: alice };
    const order = { __typename: 'Order', id: bobsOrder };
    const twice = await server.gql(
      `query ($user: ID!, $order: ID!) {
        a: node(id: $user) { __typename id } b: node(id: $user) { __typename id }
        c: nodes(ids: [$order]) { __typename id } d: node(id: $order) { __typename id } e: nodes(ids: [$order, $user]) { __typename id }
      }`,
      { user: alice, order: bobsOrder },
    );
    expect(twice.body).toEqual({ data: { a: user, b: user, c: [order], d: order, e: [order, user] } });
  });

  it('answer null for a well-formed id of nothing', async () => {
    expect((await server.gql<NodeResult>(NODE, { id: newId('user') })).body).toEqual({ data: { node: null } });
    expect((await server.gql<NodeResult>(NODE, { id: newId('order') })).body).toEqual({ data: { node: null } });
  });

  it('nodes answers in the order asked, null where there is nothing, repeats included', async () => {
    const missing = newId('user');
    const response = await server.gql<{ nodes: ({ __typename: string; id: string } | null)[] }>(NODES, {
      ids: [bobsOrder, missing, alice, bob, alice],
    });
    expect(response.body).toEqual({
      data: {
        nodes: [
          { __typename: 'Order', id: bobsOrder },
          null,
          { __typename: 'User', id: alice },
          { __typename: 'User', id: bob },
          { __typename: 'User', id: alice },
        ],
      },
    });
  });

  it('loads many nodes in one statement per type, not one per id', async () => {
    server.statements.length = 0;
    const response = await server.gql(NODES, { ids: [alice, bob, bobsOrder, newId('user'), newId('order')] });
    expect(response.body.errors).toBeUndefined();
    const reads = server.statements.filter((s) => /^\s*select/i.test(s) && !s.includes('api_keys'));
    expect(reads).toHaveLength(2);
  });

  it.each([
    ['an event id', newId('event')],
    ['an API key id', newId('apiKey')],
    ['no id at all', 'hello'],
    ['an empty string', ''],
  ])('refuses %s with BAD_USER_INPUT naming the kinds of node', async (_what, id) => {
    const response = await server.gql(NODE, { id });
    expect(response.body.data).toEqual({ node: null });
    expect(response.body.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(response.body.errors![0]!.message).toContain('usr_');
    expect(response.body.errors![0]!.message).toContain('ord_');
  });

  it(`takes 1 to ${NODES_MAX} ids`, async () => {
    for (const ids of [[], Array.from({ length: NODES_MAX + 1 }, () => alice)]) {
      const response = await server.gql(NODES, { ids });
      expect(response.body.data).toBeNull();
      expect(response.body.errors![0]!.extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        errors: [{ field: 'ids', message: `must hold 1 to ${NODES_MAX} ids (got ${ids.length})` }],
      });
    }
    const full = await server.gql<{ nodes: unknown[] }>(NODES, { ids: Array.from({ length: NODES_MAX }, () => alice) });
    expect(full.body.data!.nodes).toHaveLength(NODES_MAX);
  });

  it('names each id that is no node id by its place in ids, all at once; `node` names its id', async () => {
    const many = await server.gql(NODES, { ids: [alice, 'bad', bobsOrder, 'wep_01jd3x3b8vfb9s1p4t4p6q2k7m'] });
    expect(many.body.data).toBeNull();
    expect(many.body.errors!.map((error) => error.extensions)).toEqual([
      match.objectContaining({
        code: 'BAD_USER_INPUT',
        errors: [
          { field: 'ids[1]', message: match.stringMatching(/^"bad" is not the id of a node/) },
          { field: 'ids[3]', message: match.stringMatching(/^"wep_01jd3x3b8vfb9s1p4t4p6q2k7m" is not the id of a node/) },
        ],
      }),
    ]);
    const one = await server.gql(NODE, { id: 'bad' });
    expect(one.body.errors![0]!.extensions).toMatchObject({ errors: [{ field: 'id', message: match.stringMatching(/^"bad" is not/) }] });
  });
});

describe('node and nodes apply the rules of user and order', () => {
  const withKey = (key: string, token?: string) => ({ 'x-api-key': key, ...(token ? { authorization: `Bearer ${token}` } : {}) });

  it('need the scope the type needs', async () => {
    const usersOnly = await server.createKey({ scopes: ['users:read'] });
    const order = await server.gql(NODE, { id: bobsOrder }, withKey(usersOnly));
    // Denied everything it asked for: 403, with no data.
    expect([order.status, order.body.data]).toEqual([403, undefined]);
    expect(order.body.errors![0]).toMatchObject({
      message: 'This API key may not read Order nodes (it needs the scope orders:read).',
      extensions: { code: 'FORBIDDEN' },
    });
    expect((await server.gql<NodeResult>(NODE, { id: alice }, withKey(usersOnly))).body.data!.node).toMatchObject({ id: alice });

    const ordersOnly = await server.createKey({ scopes: ['orders:read'] });
    const user = await server.gql(NODES, { ids: [alice] }, withKey(ordersOnly));
    expect(user.body.errors![0]).toMatchObject({ extensions: { code: 'FORBIDDEN' } });
    expect(user.body.errors![0]!.message).toContain('users:read');
  });

  it("show an order only to its user's token or an admin key, as `order` does", async () => {
    const appKey = await server.createKey({ scopes: ['users:read', 'orders:read'] });
    const noToken = await server.gql(NODE, { id: bobsOrder }, withKey(appKey));
    expect(noToken.body.errors![0]!.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });

    const asAlice = await server.gql(NODE, { id: bobsOrder }, withKey(appKey, await testUserToken(alice)));
    expect(asAlice.body).toEqual({ data: { node: null } });

    const asBob = await server.gql<NodeResult>(NODE, { id: bobsOrder }, withKey(appKey, await testUserToken(bob)));
    expect(asBob.body.data!.node).toMatchObject({ __typename: 'Order', id: bobsOrder });

    // The same answers as `order` gives for the same credentials.
    const order = await server.gql(
      'query ($id: ID!) { order(id: $id) { id } }',
      { id: bobsOrder },
      withKey(appKey, await testUserToken(alice)),
    );
    expect(order.body).toEqual({ data: { order: null } });
  });
});
