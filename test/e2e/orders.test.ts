import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { match } from '../support/match.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

interface OrderData {
  id: string;
  total: number;
  status: string;
  createdAt: string;
}

const CREATE_ORDER = 'mutation ($input: CreateOrderInput!) { createOrder(input: $input) { id total status createdAt user { id } } }';
const UNKNOWN_USER = 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m';

let counter = 0;
async function createUser(): Promise<string> {
  counter += 1;
  const response = await server.gql<{ createUser: { id: string } }>(
    'mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }',
    {
      input: { name: `Buyer ${counter}`, email: `buyer${counter}@example.com` },
    },
  );
  return response.body.data!.createUser.id;
}

async function createOrder(userId: string, total: number, status?: string): Promise<OrderData> {
  const response = await server.gql<{ createOrder: OrderData }>(CREATE_ORDER, { input: { userId, total, status } });
  expect(response.body.errors).toBeUndefined();
  return response.body.data!.createOrder;
}

function errorOf(response: { body: { errors?: { extensions: { code: string; errors?: { field: string }[] } }[] } }) {
  expect(response.body.errors, 'expected an error').toBeDefined();
  return response.body.errors![0]!.extensions;
}

describe('createOrder', () => {
  it('creates a pending order by default, for its user', async () => {
    const userId = await createUser();
    const response = await server.gql(CREATE_ORDER, { input: { userId, total: 1999 } });
    expect(response.body.data).toEqual({
      createOrder: {
        id: match.stringMatching(/^ord_[0-7][0-9a-hjkmnp-tv-z]{25}$/),
        total: 1999,
        status: 'pending',
        createdAt: match.any(String),
        user: { id: userId },
      },
    });
  });

  it.each(['pending', 'paid', 'shipped', 'delivered', 'cancelled'])('accepts the status %s', async (status) => {
    expect((await createOrder(await createUser(), 0, status)).status).toBe(status);
  });

  it.each([
    [{ total: -1 }, ['total']],
    [{ status: 'lost' }, ['status']],
    [{ status: 'PAID' }, ['status']],
    [{ userId: 'usr_123' }, ['userId']],
    [{ userId: 'ord_01jd3x3b8vfb9s1p4t4p6q2k7m', total: -5, status: '' }, ['userId', 'total', 'status']],
  ])('refuses %j with BAD_USER_INPUT naming %j, storing nothing', async (overrides, fields) => {
    const userId = await createUser();
    const response = await server.gql(CREATE_ORDER, { input: { userId, total: 100, ...overrides } });
    const error = errorOf(response);
    expect(error.code).toBe('BAD_USER_INPUT');
    expect(error.errors!.map((e) => e.field)).toEqual(fields);
    const orders = await server.gql<{ orders: unknown[] }>('query ($id: ID!) { orders(userId: $id) { id } }', { id: userId });
    expect(orders.body.data!.orders).toEqual([]);
  });

  it('refuses a total beyond a 32-bit integer as a GraphQL input error', async () => {
    const response = await server.gql(CREATE_ORDER, { input: { userId: await createUser(), total: 2 ** 31 } });
    expect(response.status).toBe(400);
    expect(errorOf(response).code).toBe('BAD_USER_INPUT');
  });

  it('is NOT_FOUND for a user that does not exist', async () => {
    const response = await server.gql(CREATE_ORDER, { input: { userId: UNKNOWN_USER, total: 100 } });
    expect(errorOf(response).code).toBe('NOT_FOUND');
  });
});

describe('orders(userId)', () => {
  it('lists the user’s orders newest first, and only theirs', async () => {
    const userId = await createUser();
    const other = await createUser();
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await createOrder(userId, i * 100));
    await createOrder(other, 42);
    const response = await server.gql<{ orders: OrderData[] }>('query ($id: ID!) { orders(userId: $id) { id total status createdAt } }', {
      id: userId,
    });
    expect(response.body.data!.orders.map((o) => o.id)).toEqual(created.map((o) => o.id).reverse());
  });

  it('is an empty list for a user without orders', async () => {
    const response = await server.gql('query ($id: ID!) { orders(userId: $id) { id } }', { id: await createUser() });
    expect(response.body).toEqual({ data: { orders: [] } });
  });

  it('is NOT_FOUND for an unknown user and BAD_USER_INPUT for a malformed id', async () => {
    expect(errorOf(await server.gql('query ($id: ID!) { orders(userId: $id) { id } }', { id: UNKNOWN_USER })).code).toBe('NOT_FOUND');
    expect(errorOf(await server.gql('{ orders(userId: "nope") { id } }')).code).toBe('BAD_USER_INPUT');
  });

  it('returns at most 100 orders, the newest', async () => {
    const userId = await createUser();
    await server.orm.em.fork().execute(
      `insert into orders (id, user_id, total, status, created_at)
       select 'ord_' || lpad(to_hex(n), 26, '0'), ?, n, 'paid', now() - make_interval(secs => 1000 - n) from generate_series(1, 120) as n`,
      [userId],
    );
    const response = await server.gql<{ orders: OrderData[] }>('query ($id: ID!) { orders(userId: $id) { total } }', { id: userId });
    const totals = response.body.data!.orders.map((o) => o.total);
    expect(totals).toHaveLength(100);
    expect(totals[0]).toBe(120);
    expect(totals.at(-1)).toBe(21);
  });
});

describe('User.orders(limit)', () => {
  it('gives the newest orders first, 20 by default and `limit` when given', async () => {
    const userId = await createUser();
    const created = [];
    for (let i = 0; i < 25; i++) created.push((await createOrder(userId, i)).id);
    const newestFirst = [...created].reverse();
    const byDefault = await server.gql<{ user: { orders: OrderData[] } }>('query ($id: ID!) { user(id: $id) { orders { id } } }', {
      id: userId,
    });
    expect(byDefault.body.data!.user.orders.map((o) => o.id)).toEqual(newestFirst.slice(0, 20));
    const three = await server.gql<{ user: { orders: OrderData[] } }>('query ($id: ID!) { user(id: $id) { orders(limit: 3) { id } } }', {
      id: userId,
    });
    expect(three.body.data!.user.orders.map((o) => o.id)).toEqual(newestFirst.slice(0, 3));
  });

  it.each([0, -1, 101])('refuses limit %i with BAD_USER_INPUT', async (limit) => {
    const response = await server.gql('query ($id: ID!, $limit: Int) { user(id: $id) { orders(limit: $limit) { id } } }', {
      id: await createUser(),
      limit,
    });
    const error = errorOf(response);
    expect(error.code).toBe('BAD_USER_INPUT');
    expect(error.errors).toEqual([{ field: 'limit', message: match.stringContaining('1 to 100') }]);
  });

  it('resolves Order.user back to its owner', async () => {
    const userId = await createUser();
    await createOrder(userId, 5);
    const response = await server.gql<{ orders: { user: { id: string } }[] }>('query ($id: ID!) { orders(userId: $id) { user { id } } }', {
      id: userId,
    });
    expect(response.body.data!.orders).toEqual([{ user: { id: userId } }]);
  });
});
