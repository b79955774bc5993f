import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { match } from '../support/match.ts';
import { expectProblem, rest, type Order } from '../support/rest.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const UNKNOWN_USER = 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m';
const UNKNOWN_ORDER = 'ord_01jd3x5kq2f6r0w8c4n1y7s9ta';
const call = <T = unknown>(method: string, path: string, options?: Parameters<typeof rest>[3]) => rest<T>(server, method, path, options);

let counter = 0;
async function createUser(): Promise<string> {
  counter += 1;
  const response = await call<{ id: string }>('POST', '/users', {
    json: { name: `Buyer ${counter}`, email: `buyer-${counter}@example.com` },
  });
  return response.body.id;
}

describe('POST /users/{user_id}/orders', () => {
  it('places the order: 201 with Location /orders/{id}, where it can be read', async () => {
    const userId = await createUser();
    const response = await call<Order>('POST', `/users/${userId}/orders`, { json: { total: 1999 } });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      id: match.stringMatching(/^ord_/),
      total: 1999,
      status: 'pending',
      createdAt: match.any(String),
      userId,
    });
    expect(response.headers.get('location')).toBe(`/orders/${response.body.id}`);
    const read = await call<Order>('GET', response.headers.get('location')!);
    expect([read.status, read.body]).toEqual([200, response.body]);
  });

  it('takes the user from the path only: a userId in the body is refused', async () => {
    const userId = await createUser();
    const problem = expectProblem(
      await call('POST', `/users/${userId}/orders`, { json: { total: 1, userId } }),
      400,
      'invalid-input',
      `/users/${userId}/orders`,
    );
    expect(problem.errors).toEqual([{ field: 'userId', message: match.stringContaining('path') }]);
  });

  it.each([
    [{ total: -1 }, 'total'],
    [{ total: 10, status: 'lost' }, 'status'],
    [{ total: 'ten' }, 'total'],
    [{}, 'total'],
  ])('refuses %j with 400 naming %s', async (json, field) => {
    const userId = await createUser();
    const problem = expectProblem(await call('POST', `/users/${userId}/orders`, { json }), 400, 'invalid-input', `/users/${userId}/orders`);
    expect(problem.errors?.map((e) => e.field)).toEqual([field]);
  });

  it('is 404 for an unknown user and 400 for a malformed user id', async () => {
    expectProblem(
      await call('POST', `/users/${UNKNOWN_USER}/orders`, { json: { total: 1 } }),
      404,
      'not-found',
      `/users/${UNKNOWN_USER}/orders`,
    );
    const problem = expectProblem(
      await call('POST', '/users/nope/orders', { json: { total: 1 } }),
      400,
      'invalid-input',
      '/users/nope/orders',
    );
    expect(problem.errors?.[0]?.field).toBe('user_id');
  });
});

describe('GET /orders/{order_id}', () => {
  it('is 404 for an unknown order and 400 for a malformed id', async () => {
    expectProblem(await call('GET', `/orders/${UNKNOWN_ORDER}`), 404, 'not-found', `/orders/${UNKNOWN_ORDER}`);
    const problem = expectProblem(await call('GET', `/orders/${UNKNOWN_USER}`), 400, 'invalid-input', `/orders/${UNKNOWN_USER}`);
    expect(problem.errors?.[0]?.field).toBe('order_id');
  });

  it('returns the same order as GraphQL does', async () => {
    const userId = await createUser();
    const created = await call<Order>('POST', `/users/${userId}/orders`, { json: { total: 5, status: 'paid' } });
    const viaGraphQL = await server.gql<{ order: Order }>('query ($id: ID!) { order(id: $id) { id total status createdAt userId } }', {
      id: created.body.id,
    });
    expect((await call<Order>('GET', `/orders/${created.body.id}`)).body).toEqual(viaGraphQL.body.data!.order);
  });
});

describe('GET /users/{user_id}/orders', () => {
  it('pages through the orders newest first: { items, nextCursor }, nextCursor null at the end', async () => {
    const userId = await createUser();
    const created: string[] = [];
    for (let i = 0; i < 23; i++) created.push((await call<Order>('POST', `/users/${userId}/orders`, { json: { total: i } })).body.id);
    const seen: string[] = [];
    let path = `/users/${userId}/orders?limit=10`;
    for (let pages = 0; pages < 10; pages++) {
      const page = await call<{ items: Order[]; nextCursor: string | null }>('GET', path);
      expect(page.status).toBe(200);
      expect(Object.keys(page.body).sort()).toEqual(['items', 'nextCursor']);
      seen.push(...page.body.items.map((o) => o.id));
      if (page.body.nextCursor === null) break;
      path = `/users/${userId}/orders?limit=10&cursor=${encodeURIComponent(page.body.nextCursor)}`;
    }
    expect(seen).toEqual([...created].reverse());
  });

  it('is an empty page for a user without orders, 404 for an unknown user', async () => {
    const userId = await createUser();
    expect((await call('GET', `/users/${userId}/orders`)).body).toEqual({ items: [], nextCursor: null });
    expectProblem(await call('GET', `/users/${UNKNOWN_USER}/orders`), 404, 'not-found', `/users/${UNKNOWN_USER}/orders`);
  });

  it("refuses another user's cursor, and limits outside 1 to 100", async () => {
    const [a, b] = [await createUser(), await createUser()];
    for (const userId of [a, b]) for (let i = 0; i < 3; i++) await call('POST', `/users/${userId}/orders`, { json: { total: i } });
    const cursor = (await call<{ nextCursor: string }>('GET', `/users/${a}/orders?limit=1`)).body.nextCursor;
    const path = `/users/${b}/orders?cursor=${encodeURIComponent(cursor)}`;
    expect(expectProblem(await call('GET', path), 400, 'invalid-input', `/users/${b}/orders`).errors?.[0]?.field).toBe('cursor');
    for (const limit of ['0', '101', 'x']) {
      expect(
        expectProblem(await call('GET', `/users/${a}/orders?limit=${limit}`), 400, 'invalid-input', `/users/${a}/orders`).errors?.[0]
          ?.field,
      ).toBe('limit');
    }
  });
});
