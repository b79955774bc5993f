// The REST collections page by page over real HTTP: GET /users in its three paging styles (numbered
// pages, keyset after an id, opaque cursors over a sort) and GET /users/{user_id}/orders, walked end
// to end against what SQL says the order is, refused with Problem Details when asked wrongly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idAt } from '../../src/db/ids.ts';
import { CursorCodec } from '../../src/pagination/cursor.ts';
import { match } from '../support/match.ts';
import { rest, type User, type Order } from '../support/rest.ts';
import { startTestServer, TEST_CURSOR_SECRET, type TestServer } from '../support/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

interface CursorPage {
  data: User[];
  pagination: { nextCursor: string | null; hasMore: boolean };
}
interface OffsetPage {
  data: User[];
  pagination: { page: number; limit: number; total: number; totalPages: number };
}
interface OrderPage {
  items: Order[];
  nextCursor: string | null;
}
interface Reply<T> {
  status: number;
  contentType: string | null;
  location: string | null;
  body: T;
}

const SORTS = ['createdAt', '-createdAt', 'name', '-name'] as const;
type Sort = (typeof SORTS)[number];
const ORDER_BY: Record<Sort, string> = {
  createdAt: 'created_at asc, id collate "C" asc',
  '-createdAt': 'created_at desc, id collate "C" desc',
  // The name column's own collation, as the server sorts it.
  name: 'name asc, id collate "C" asc',
  '-name': 'name desc, id collate "C" desc',
};
/** Few distinct names (differing in case and beyond ASCII), so the id decides most of the order. */
const NAMES = ['Ada', 'ada', 'Zoë', 'Émile', 'bob', 'Bob Jr', "O'Brien"];
const SEEDED = 300;
/** The smallest well-formed user id: `after_id` of it starts the keyset walk at the beginning. */
const FIRST_AFTER_ID = `usr_${'0'.repeat(26)}`;
const UNKNOWN_USER_ID = 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m';

async function request<T>(method: string, path: string, json?: unknown): Promise<Reply<T>> {
  const response = await server.fetch(path, {
    method,
    headers: {
      accept: 'application/json, application/problem+json',
      ...(json === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await response.text();
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    location: response.headers.get('location'),
    body: (text ? JSON.parse(text) : undefined) as T,
  };
}

/** A successful GET's body; anything but 200 fails with what the server said. */
async function get<T>(path: string): Promise<T> {
  const reply = await request<T>('GET', path);
  expect(reply.status, `GET ${path}: ${JSON.stringify(reply.body)}`).toBe(200);
  expect(reply.contentType).toMatch(/^application\/json/);
  return reply.body;
}

const query = (params: Record<string, string | number | null | undefined>) => {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value != null) search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
};

/** Asserts a 400 invalid-input problem for `path` naming exactly `fields` (REST parameter names). */
async function expectInvalid(path: string, fields: string[]): Promise<void> {
  const reply = await request<Record<string, unknown>>('GET', path);
  expect(reply.status, `GET ${path}: ${JSON.stringify(reply.body)}`).toBe(400);
  expect(reply.contentType).toBe('application/problem+json');
  expect(reply.body).toEqual({
    type: 'https://portico.dev/problems/invalid-input',
    title: match.stringMatching(/\S/),
    status: 400,
    detail: match.stringMatching(/\S/),
    instance: new URL(path, 'http://x').pathname,
    errors: fields.map((field) => ({ field, message: match.stringMatching(/\S/) })),
  });
}

async function sql<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
  return server.orm.em.fork().execute<T[]>(text, params);
}

async function idsInOrder(sort: Sort): Promise<string[]> {
  return (await sql<{ id: string }>(`select id from users order by ${ORDER_BY[sort]}`)).map((row) => row.id);
}

/**
 * Inserts users whose names and creation times repeat; their ids are minted at unrelated times, so
 * neither the id order nor the creation order gives away the other and only a correct tie-break passes.
 */
async function insertUsers(count: number): Promise<void> {
  const createdBase = Date.parse('2026-01-01T00:00:00Z');
  const idBase = Date.parse('2025-06-01T00:00:00Z');
  const rows = Array.from({ length: count }, (_, i) => ({
    id: idAt('user', new Date(idBase + ((i * 7919) % count) * 1000), i),
    name: NAMES[i % NAMES.length]!,
    email: `seed-${i}@example.com`,
    at: new Date(createdBase + (i % 5) * 60_000).toISOString(),
  }));
  await sql(
    `insert into users (id, name, email, created_at, updated_at)
     select id, name, email, at::timestamptz, at::timestamptz from jsonb_to_recordset(?::jsonb) as t(id text, name text, email text, at text)`,
    [JSON.stringify(rows)],
  );
}

/** Follows `nextCursor` as `cursor` (same sort) until it is null, checking each page's pagination on the way. */
async function walkCursor(sort: Sort | undefined, limit: number, between?: () => Promise<void>): Promise<User[]> {
  const users: User[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 1000; pages++) {
    const page: CursorPage = await get<CursorPage>(`/users${query({ limit, sort, cursor })}`);
    expect(Object.keys(page).sort()).toEqual(['data', 'pagination']);
    expect(Object.keys(page.pagination).sort()).toEqual(['hasMore', 'nextCursor']);
    expect(page.data.length).toBeLessThanOrEqual(limit);
    users.push(...page.data);
    if (page.pagination.nextCursor === null) {
      expect(page.pagination.hasMore).toBe(false);
      return users;
    }
    expect(page.pagination.hasMore).toBe(true);
    expect(page.data).toHaveLength(limit);
    cursor = page.pagination.nextCursor;
    await between?.();
  }
  throw new Error('the cursor walk did not end');
}

const ids = (items: { id: string }[]) => items.map((item) => item.id);

async function createUser(name: string, email: string): Promise<User> {
  const reply = await request<User>('POST', '/users', { name, email });
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
  return reply.body;
}

async function createOrder(userId: string, total: number): Promise<Order> {
  const reply = await request<Order>('POST', `/users/${userId}/orders`, { total });
  expect(reply.status, JSON.stringify(reply.body)).toBe(201);
  expect(reply.location).toBe(`/orders/${reply.body.id}`);
  return reply.body;
}

/** A copy of `cursor` with one character in the middle changed. */
function forged(cursor: string): string {
  const at = Math.floor(cursor.length / 2);
  return cursor.slice(0, at) + (cursor[at] === 'A' ? 'B' : 'A') + cursor.slice(at + 1);
}

beforeAll(() => insertUsers(SEEDED));

describe('GET /users in cursor style (the default)', () => {
  it.each(SORTS)('walked 13 at a time by %s returns every user exactly once, in order', async (sort) => {
    const expected = await idsInOrder(sort);
    expect(expected).toHaveLength(SEEDED);
    const walked = ids(await walkCursor(sort, 13));
    expect(new Set(walked).size).toBe(walked.length);
    expect(walked).toEqual(expected);
  });

  it('sorts names as people read them, on any server: letter case and accents after the letters', async () => {
    const seen = (await walkCursor('name', 50)).map((user) => user.name).filter((name) => NAMES.includes(name));
    expect([...new Set(seen)]).toEqual(['ada', 'Ada', 'bob', 'Bob Jr', 'Émile', "O'Brien", 'Zoë']);
  });

  it('sorts by createdAt when no sort is given', async () => {
    expect(ids(await walkCursor(undefined, 13))).toEqual(await idsInOrder('createdAt'));
  });

  it('returns whole users in the wire format of the API', async () => {
    const page = await get<CursorPage>('/users?limit=3&sort=name');
    const [first] = await sql<{ id: string; name: string; email: string; created_at: Date; updated_at: Date }>(
      `select * from users order by ${ORDER_BY.name} limit 1`,
    );
    expect(page.data[0]).toEqual({
      id: first!.id,
      name: first!.name,
      email: first!.email,
      createdAt: new Date(first!.created_at).toISOString(),
      updatedAt: new Date(first!.updated_at).toISOString(),
    });
  });

  it('gives 20 users by default and at most 100', async () => {
    expect((await get<CursorPage>('/users')).data).toHaveLength(20);
    const full = await get<CursorPage>('/users?limit=100');
    expect(full.data).toHaveLength(100);
    expect(full.pagination.hasMore).toBe(true);
  });

  it('ends on an exactly full last page with nextCursor null rather than an empty extra page', async () => {
    expect(await idsInOrder('createdAt')).toHaveLength(SEEDED);
    const walked = await walkCursor('createdAt', 100);
    expect(walked).toHaveLength(SEEDED);
  });

  it('refuses a cursor minted for another sort', async () => {
    for (const [from, to] of [
      ['createdAt', '-createdAt'],
      ['createdAt', 'name'],
      ['name', '-name'],
      ['-name', 'createdAt'],
    ] as const) {
      const { nextCursor } = (await get<CursorPage>(`/users${query({ limit: 5, sort: from })}`)).pagination;
      await expectInvalid(`/users${query({ limit: 5, sort: to, cursor: nextCursor })}`, ['cursor']);
    }
    // A cursor of the default sort is a createdAt cursor, not a cursor for any sort.
    const { nextCursor } = (await get<CursorPage>('/users?limit=5')).pagination;
    await expectInvalid(`/users${query({ sort: '-name', cursor: nextCursor })}`, ['cursor']);
  });

  it('refuses forged, truncated, foreign and made-up cursors', async () => {
    const { nextCursor } = (await get<CursorPage>('/users?limit=5')).pagination;
    const codec = new CursorCodec(TEST_CURSOR_SECRET);
    const otherSecret = new CursorCodec('some-other-deployment-secret-0123456789').encode('users/sort:createdAt', [0, UNKNOWN_USER_ID]);
    const orderList = codec.encode(`orders/user:${UNKNOWN_USER_ID}`, [Date.now(), 'ord_01jd3x5kq2f6r0w8c4n1y7s9ta']);
    const plain = Buffer.from(JSON.stringify(['users/sort:createdAt', 0, UNKNOWN_USER_ID])).toString('base64url');
    for (const cursor of [forged(nextCursor!), nextCursor!.slice(0, -3), otherSecret, orderList, plain, UNKNOWN_USER_ID, 'x'.repeat(600)]) {
      await expectInvalid(`/users${query({ limit: 5, cursor })}`, ['cursor']);
    }
  });

  it('refuses a cursor of a sort by name minted before names were compared by ICU, which would skip users', async () => {
    // Such a cursor holds a place in the order by bytes; in the order by ICU's collation it would jump past users.
    const codec = new CursorCodec(TEST_CURSOR_SECRET);
    for (const sort of ['name', '-name']) {
      const before = codec.encode(`users/sort:${sort}`, ['Bob', UNKNOWN_USER_ID]);
      await expectInvalid(`/users${query({ limit: 5, sort, cursor: before })}`, ['cursor']);
      const { nextCursor } = (await get<CursorPage>(`/users${query({ limit: 5, sort })}`)).pagination;
      expect((await get<CursorPage>(`/users${query({ limit: 5, sort, cursor: nextCursor })}`)).data.length).toBeGreaterThan(0);
    }
  });

  it('refuses a sort it does not offer', async () => {
    for (const sort of ['email', 'created_at', '+name', 'NAME', 'name,id']) await expectInvalid(`/users${query({ sort })}`, ['sort']);
  });
});

describe('GET /users in offset style (page)', () => {
  it.each(SORTS)('walked 13 a page by %s returns every user exactly once, in order, with totals', async (sort) => {
    const expected = await idsInOrder(sort);
    const totalPages = Math.ceil(expected.length / 13);
    const walked: string[] = [];
    for (let page = 1; page <= totalPages; page++) {
      const body = await get<OffsetPage>(`/users${query({ page, limit: 13, sort })}`);
      expect(Object.keys(body).sort()).toEqual(['data', 'pagination']);
      expect(body.pagination).toStrictEqual({ page, limit: 13, total: expected.length, totalPages });
      walked.push(...ids(body.data));
    }
    expect(walked).toEqual(expected);
  });

  it('answers a page past the end with no users and the right totals', async () => {
    const total = (await idsInOrder('createdAt')).length;
    for (const page of [Math.ceil(total / 7) + 1, 10_000]) {
      expect(await get<OffsetPage>(`/users${query({ page, limit: 7 })}`)).toStrictEqual({
        data: [],
        pagination: { page, limit: 7, total, totalPages: Math.ceil(total / 7) },
      });
    }
  });

  it('counts the users once for requests that ask at the same time, however many pages they ask for; a later request counts afresh', async () => {
    const total = (await idsInOrder('createdAt')).length;
    const counts = () => server.statements.filter((text) => text.includes('count(*)') && text.includes('from users')).length;
    const before = counts();
    const pages = Array.from(
      { length: 6 },
      (_, i) => `p${i}: userList(page: ${i + 1}, limit: 3) { pagination { ... on OffsetPagination { total } } }`,
    );
    const [one, other] = await Promise.all([server.gql(`{ ${pages.join(' ')} }`), server.gql(`{ ${pages.join(' ')} }`)]);
    for (const response of [one, other]) {
      expect(response.body.errors).toBeUndefined();
      expect(new Set(Object.values(response.body.data!).map((list) => JSON.stringify(list)))).toEqual(
        new Set([JSON.stringify({ pagination: { total } })]),
      );
    }
    expect(counts() - before).toBeLessThanOrEqual(2);
    // A user created since is in the next request's total.
    await rest(server, 'POST', '/users', { json: { name: 'Counted', email: `counted-${Date.now()}@example.com` } });
    expect((await get<OffsetPage>('/users?page=1&limit=1')).pagination.total).toBe(total + 1);
  });

  it('uses a page of 20 when no limit is given', async () => {
    const body = await get<OffsetPage>('/users?page=2');
    expect(body.data).toHaveLength(20);
    expect(body.pagination).toMatchObject({ page: 2, limit: 20 });
    expect(ids(body.data)).toEqual((await idsInOrder('createdAt')).slice(20, 40));
  });

  it('refuses page numbers that are not whole numbers from 1 to 10000', async () => {
    for (const page of ['0', '-1', '10001', '1.5', 'one', '', '99999999999']) await expectInvalid(`/users${query({ page })}`, ['page']);
  });
});

describe('GET /users in keyset style (after_id)', () => {
  it('walked 13 at a time returns every user after the id exactly once, by id, with nextCursor as the next after_id', async () => {
    const expected = (await sql<{ id: string }>('select id from users order by id collate "C"')).map((row) => row.id);
    const walked: string[] = [];
    let afterId: string | null = FIRST_AFTER_ID;
    for (let pages = 0; afterId !== null; pages++) {
      expect(pages).toBeLessThan(1000);
      const body: CursorPage = await get<CursorPage>(`/users${query({ after_id: afterId, limit: 13 })}`);
      expect(Object.keys(body.pagination).sort()).toEqual(['hasMore', 'nextCursor']);
      walked.push(...ids(body.data));
      expect(body.pagination.hasMore).toBe(body.pagination.nextCursor !== null);
      if (body.pagination.nextCursor !== null) expect(body.pagination.nextCursor).toBe(body.data.at(-1)!.id);
      afterId = body.pagination.nextCursor;
    }
    expect(walked).toEqual(expected);
  });

  it('starts strictly after the given id, which need not exist', async () => {
    const all = (await sql<{ id: string }>('select id from users order by id collate "C"')).map((row) => row.id);
    expect(ids((await get<CursorPage>(`/users${query({ after_id: all[41], limit: 5 })}`)).data)).toEqual(all.slice(42, 47));
    const gone = all[41]!.slice(0, -1) + (all[41]!.endsWith('z') ? 'y' : 'z');
    const after = ids((await get<CursorPage>(`/users${query({ after_id: gone, limit: 100 })}`)).data);
    expect(after).toEqual(all.filter((id) => id > gone).slice(0, 100));
    expect(await get<CursorPage>(`/users${query({ after_id: all.at(-1) })}`)).toStrictEqual({
      data: [],
      pagination: { nextCursor: null, hasMore: false },
    });
  });

  it('refuses sort, which after_id does not take', async () => {
    for (const sort of SORTS) await expectInvalid(`/users${query({ after_id: FIRST_AFTER_ID, sort })}`, ['sort']);
  });

  it('refuses an after_id that is not a user id', async () => {
    for (const afterId of [
      'bad',
      '1',
      'ord_01jd3x5kq2f6r0w8c4n1y7s9ta',
      UNKNOWN_USER_ID.toUpperCase(),
      `${UNKNOWN_USER_ID}0`,
      'usr_81jd3x3b8vfb9s1p4t4p6q2k7m',
    ]) {
      await expectInvalid(`/users${query({ after_id: afterId })}`, ['after_id']);
    }
  });
});

describe('GET /users parameters', () => {
  it.each(['0', '101', '-1', '1.5', 'abc', '18446744073709551616', '', '1e2', '0x10'])('refuses limit=%s', async (limit) => {
    for (const style of [{}, { page: 1 }, { after_id: FIRST_AFTER_ID }])
      await expectInvalid(`/users${query({ ...style, limit })}`, ['limit']);
  });

  it('refuses mixing paging styles, naming a parameter of the mix', async () => {
    const { nextCursor } = (await get<CursorPage>('/users?limit=5')).pagination;
    for (const mix of [
      { page: 1, cursor: nextCursor },
      { page: 1, after_id: FIRST_AFTER_ID },
      { cursor: nextCursor, after_id: FIRST_AFTER_ID },
    ]) {
      const reply = await request<{ errors: { field: string }[] }>('GET', `/users${query(mix)}`);
      expect(reply.status).toBe(400);
      expect(reply.body.errors.length).toBeGreaterThan(0);
      for (const { field } of reply.body.errors) expect(Object.keys(mix)).toContain(field);
      await expectInvalid(
        `/users${query(mix)}`,
        reply.body.errors.map((e) => e.field),
      );
    }
  });

  it('refuses parameters it does not know, including GraphQL argument names', async () => {
    for (const name of ['offset', 'afterId', 'first', 'after', 'LIMIT', 'query']) await expectInvalid(`/users?${name}=1`, [name]);
  });

  it('refuses empty values rather than reading them as absent', async () => {
    for (const name of ['after_id', 'sort', 'cursor', 'page', 'limit']) await expectInvalid(`/users?${name}=`, [name]);
  });

  it('names parameters in messages as REST spells them', async () => {
    const reply = await request<{ detail: string }>('GET', `/users?after_id=${FIRST_AFTER_ID}&sort=name`);
    expect(reply.status).toBe(400);
    expect(reply.body.detail).toContain('after_id');
    expect(reply.body.detail).not.toContain('afterId');
  });

  it('refuses a parameter given twice', async () => {
    await expectInvalid('/users?limit=5&limit=5', ['limit']);
    await expectInvalid('/users?page=1&page=2', ['page']);
    await expectInvalid('/users?sort=name&sort=-name', ['sort']);
    await expectInvalid(`/users?after_id=${FIRST_AFTER_ID}&after_id=${FIRST_AFTER_ID}`, ['after_id']);
  });
});

describe('REST and GraphQL agree on the users collection', () => {
  const USER_LIST = `query ($limit: Int, $cursor: String) {
    userList(limit: $limit, cursor: $cursor) {
      data { id name email createdAt updatedAt }
      pagination { ... on CursorPagination { nextCursor hasMore } }
    }
  }`;

  async function graphqlPage(limit: number, cursor?: string): Promise<CursorPage> {
    const response = await server.gql<{ userList: CursorPage }>(USER_LIST, { limit, cursor });
    expect(response.body.errors).toBeUndefined();
    return response.body.data!.userList;
  }

  it('gives the same page, and cursors from either lead to the same next page', async () => {
    const viaRest = await get<CursorPage>('/users?limit=5');
    const viaGraphql = await graphqlPage(5);
    expect(viaRest.data).toEqual(viaGraphql.data);
    expect(viaRest.pagination.hasMore).toBe(true);
    expect(viaGraphql.pagination.hasMore).toBe(true);

    const expectedNext = (await idsInOrder('createdAt')).slice(5, 10);
    const nextPages = [
      await get<CursorPage>(`/users${query({ limit: 5, cursor: viaRest.pagination.nextCursor })}`),
      await get<CursorPage>(`/users${query({ limit: 5, cursor: viaGraphql.pagination.nextCursor })}`),
      await graphqlPage(5, viaRest.pagination.nextCursor!),
      await graphqlPage(5, viaGraphql.pagination.nextCursor!),
    ];
    for (const next of nextPages) {
      expect(ids(next.data)).toEqual(expectedNext);
      expect(next.data).toEqual(nextPages[0]!.data);
    }
  });
});

describe('GET /users/{user_id}/orders', () => {
  let buyer: User;
  let created: Order[];
  let other: User;
  beforeAll(async () => {
    buyer = await createUser('Olive Orders', 'olive@example.com');
    other = await createUser('Otto Other', 'otto@example.com');
    created = [];
    for (let i = 0; i < 45; i++) created.push(await createOrder(buyer.id, 100 + i));
    for (let i = 0; i < 3; i++) await createOrder(other.id, i);
  });

  async function walkOrders(userId: string, limit: number): Promise<Order[]> {
    const orders: Order[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 1000; pages++) {
      const page: OrderPage = await get<OrderPage>(`/users/${userId}/orders${query({ limit, cursor })}`);
      expect(Object.keys(page).sort()).toEqual(['items', 'nextCursor']);
      orders.push(...page.items);
      if (page.nextCursor === null) return orders;
      expect(page.items).toHaveLength(limit);
      cursor = page.nextCursor;
    }
    throw new Error('the orders walk did not end');
  }

  it('walked 10 at a time returns all 45 orders exactly once, newest first', async () => {
    const expected = (
      await sql<{ id: string }>('select id from orders where user_id = ? order by created_at desc, id desc', [buyer.id])
    ).map((row) => row.id);
    expect(expected).toEqual(ids(created).reverse());
    const walked = await walkOrders(buyer.id, 10);
    expect(ids(walked)).toEqual(expected);
    expect(walked).toEqual([...created].reverse());
  });

  it('ends on an exactly full last page with nextCursor null', async () => {
    expect(await walkOrders(buyer.id, 15)).toHaveLength(45);
    expect(await walkOrders(buyer.id, 45)).toHaveLength(45);
  });

  it('gives 20 orders by default and at most 100', async () => {
    const first = await get<OrderPage>(`/users/${buyer.id}/orders`);
    expect(ids(first.items)).toEqual(ids(created).reverse().slice(0, 20));
    expect(first.nextCursor).toEqual(match.any(String));
    const all = await get<OrderPage>(`/users/${buyer.id}/orders?limit=100`);
    expect(all.items).toHaveLength(45);
    expect(all.nextCursor).toBeNull();
  });

  it('lists no orders, with nextCursor null, for a user who has none', async () => {
    const user = await createUser('Nora None', 'nora@example.com');
    expect(await get<OrderPage>(`/users/${user.id}/orders`)).toStrictEqual({ items: [], nextCursor: null });
  });

  it('refuses a cursor from another user’s list, a users cursor, and a forged one', async () => {
    const othersCursor = (await get<OrderPage>(`/users/${other.id}/orders?limit=2`)).nextCursor;
    expect(othersCursor).toEqual(match.any(String));
    const usersCursor = (await get<CursorPage>('/users?limit=2')).pagination.nextCursor;
    const ownCursor = (await get<OrderPage>(`/users/${buyer.id}/orders?limit=2`)).nextCursor!;
    for (const cursor of [othersCursor, usersCursor, forged(ownCursor), ownCursor.slice(0, -2)]) {
      await expectInvalid(`/users/${buyer.id}/orders${query({ limit: 2, cursor })}`, ['cursor']);
    }
  });

  it('refuses limits outside 1 to 100, unknown and repeated parameters', async () => {
    for (const limit of ['0', '101', '-1', '1.5', 'abc', '18446744073709551616']) {
      await expectInvalid(`/users/${buyer.id}/orders${query({ limit })}`, ['limit']);
    }
    await expectInvalid(`/users/${buyer.id}/orders?page=1`, ['page']);
    await expectInvalid(`/users/${buyer.id}/orders?user_id=${buyer.id}`, ['user_id']);
    await expectInvalid(`/users/${buyer.id}/orders?limit=2&limit=2`, ['limit']);
  });

  it('answers 404 for a well-formed id of no user, and 400 naming user_id for a malformed one', async () => {
    const reply = await request<Record<string, unknown>>('GET', `/users/${UNKNOWN_USER_ID}/orders`);
    expect(reply.status).toBe(404);
    expect(reply.contentType).toBe('application/problem+json');
    expect(reply.body).toMatchObject({
      type: 'https://portico.dev/problems/not-found',
      status: 404,
      instance: `/users/${UNKNOWN_USER_ID}/orders`,
      detail: match.stringContaining(UNKNOWN_USER_ID),
    });
    await expectInvalid('/users/not-an-id/orders', ['user_id']);
  });
});

describe('GET /users under concurrent writes', () => {
  it.each(SORTS)(
    'walked by %s returns every user that existed throughout exactly once while others are created and deleted',
    async (sort) => {
      const before = await idsInOrder(sort);
      const deleted = new Set<string>();
      let round = 0;
      const walked = ids(
        await walkCursor(sort, 13, async () => {
          round += 1;
          // New users land on both sides of the cursor (by name) or after it (by creation time); deletions hit both sides.
          const creates = [0, 1, 2].map((i) =>
            createUser(`${NAMES[(round + i) % NAMES.length]} ${sort}`, `late-${sort}-${round}-${i}@example.com`),
          );
          const victims = before
            .filter((id) => !deleted.has(id))
            .filter((_, i) => i % 29 === round % 29)
            .slice(0, 2);
          victims.forEach((id) => deleted.add(id));
          const deletes = victims.map(async (id) => expect((await request('DELETE', `/users/${id}`)).status).toBe(204));
          await Promise.all([...creates, ...deletes]);
        }),
      );
      expect(deleted.size).toBeGreaterThan(0);
      expect(new Set(walked).size).toBe(walked.length);
      const survivors = before.filter((id) => !deleted.has(id));
      // Survivors appear in the same relative order as before the walk.
      expect(walked.filter((id) => survivors.includes(id))).toEqual(survivors);
      const now = new Set(await idsInOrder(sort));
      for (const id of walked) if (!before.includes(id)) expect(now.has(id), `${id} was never a user`).toBe(true);
    },
  );
});
