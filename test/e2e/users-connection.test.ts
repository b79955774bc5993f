import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idAt } from '../../src/db/ids.ts';
import { CursorCodec } from '../../src/pagination/cursor.ts';
import { match } from '../support/match.ts';
import { startTestServer, TEST_CURSOR_SECRET, type TestServer } from '../support/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

interface Page {
  users: {
    edges: { cursor: string; node: { id: string; createdAt: string } }[];
    pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  };
}

const PAGE = `query ($first: Int, $after: String) {
  users(first: $first, after: $after) {
    edges { cursor node { id createdAt } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;

async function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return server.orm.em.fork().execute<T[]>(query, params);
}

/** Inserts users sharing a handful of creation times, so the id tie-breaker decides most of the order. */
async function insertUsers(count: number, tag: string): Promise<void> {
  const base = Date.parse('2026-01-01T00:00:00Z');
  const rows = Array.from({ length: count }, (_, i) => {
    const at = new Date(base + (i % 10) * 1000);
    return [idAt('user', at, i % 4096), `${tag} ${i}`, `${tag}-${i}@example.com`, at.toISOString()];
  });
  await sql(
    `insert into users (id, name, email, created_at, updated_at)
     select id, name, email, at::timestamptz, at::timestamptz from jsonb_to_recordset(?::jsonb) as t(id text, name text, email text, at text)`,
    [JSON.stringify(rows.map(([id, name, email, at]) => ({ id, name, email, at })))],
  );
}

async function page(first: number | null, after?: string | null): Promise<Page['users']> {
  const response = await server.gql<Page>(PAGE, { first, after });
  expect(response.body.errors).toBeUndefined();
  return response.body.data!.users;
}

async function walk(first: number, between?: () => Promise<void>): Promise<Page['users']['edges']> {
  const edges: Page['users']['edges'] = [];
  let after: string | null = null;
  for (let pages = 0; pages < 1000; pages++) {
    const current: Page['users'] = await page(first, after);
    edges.push(...current.edges);
    if (!current.pageInfo.hasNextPage) return edges;
    after = current.pageInfo.endCursor;
    await between?.();
  }
  throw new Error('the walk did not end');
}

function assertStrictlyOrdered(edges: Page['users']['edges']): void {
  for (let i = 1; i < edges.length; i++) {
    const [a, b] = [edges[i - 1]!.node, edges[i]!.node];
    const before = a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id);
    expect(before, `${a.id} before ${b.id}`).toBe(true);
  }
}

describe('users connection', () => {
  beforeAll(() => insertUsers(250, 'walker'));

  it('walked 7 at a time returns every user exactly once, in (createdAt, id) order', async () => {
    const expected = (await sql<{ id: string }>('select id from users order by created_at, id collate "C"')).map((r) => r.id);
    expect(expected).toHaveLength(250);
    const edges = await walk(7);
    expect(edges.map((e) => e.node.id)).toEqual(expected);
    assertStrictlyOrdered(edges);
  });

  it('gives 20 by default and describes the page', async () => {
    const first = await page(null);
    expect(first.edges).toHaveLength(20);
    expect(first.pageInfo).toEqual({
      hasNextPage: true,
      hasPreviousPage: false,
      startCursor: first.edges[0]!.cursor,
      endCursor: first.edges[19]!.cursor,
    });
  });

  it('ends with hasNextPage false, and after the last cursor is an empty page', async () => {
    const all = await page(100);
    const rest = await page(100, all.pageInfo.endCursor);
    const last = await page(100, rest.pageInfo.endCursor);
    expect(all.edges.length + rest.edges.length + last.edges.length).toBe(250);
    expect(last.pageInfo.hasNextPage).toBe(false);
    const beyond = await page(10, last.pageInfo.endCursor);
    expect(beyond.edges).toEqual([]);
    expect(beyond.pageInfo).toMatchObject({ hasNextPage: false, endCursor: null });
  });

  it.each([0, -1, 101, 1000])('refuses first: %i with BAD_USER_INPUT rather than clamping', async (first) => {
    const response = await server.gql(PAGE, { first });
    expect(response.body.data).toBeNull();
    expect(response.body.errors![0]!.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      errors: [{ field: 'first', message: match.stringContaining('1 to 100') }],
    });
  });

  it('refuses forged, truncated and foreign cursors with BAD_USER_INPUT', async () => {
    const { endCursor } = (await page(5)).pageInfo;
    const flipped = endCursor!.slice(0, 20) + (endCursor![20] === 'A' ? 'B' : 'A') + endCursor!.slice(21);
    const otherList = new CursorCodec(TEST_CURSOR_SECRET).encode('orders/created', [Date.now(), 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m']);
    const otherSecret = new CursorCodec('some-other-deployment-secret-0123456789').encode('users/created', [
      0,
      'usr_01jd3x3b8vfb9s1p4t4p6q2k7m',
    ]);
    const plainJson = Buffer.from(JSON.stringify({ createdAt: 0, id: 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m' })).toString('base64url');
    for (const after of [flipped, endCursor!.slice(0, -3), otherList, otherSecret, plainJson, 'x'.repeat(5000), '']) {
      const response = await server.gql(PAGE, { first: 5, after });
      expect(response.body.errors?.[0]?.extensions, after.slice(0, 30)).toMatchObject({
        code: 'BAD_USER_INPUT',
        errors: [{ field: 'after' }],
      });
    }
  });
});

describe('users connection under concurrent writes', () => {
  it('returns every user that existed throughout exactly once while others are inserted and deleted', async () => {
    const before = new Set((await sql<{ id: string }>('select id from users')).map((r) => r.id));
    const deleted = new Set<string>();
    let round = 0;
    const edges = await walk(9, async () => {
      round += 1;
      // New users land at the end of the order; deletions hit users on both sides of the cursor.
      const creates = Array.from({ length: 3 }, (_, i) =>
        server.gql('mutation ($input: CreateUserInput!) { createUser(input: $input) { id } }', {
          input: { name: `Late ${round}.${i}`, email: `late-${round}-${i}@example.com` },
        }),
      );
      const victims = [...before]
        .filter((id) => !deleted.has(id))
        .filter((_, i) => i % 37 === round % 37)
        .slice(0, 2);
      victims.forEach((id) => deleted.add(id));
      const deletes = victims.map((id) => server.gql('mutation ($id: ID!) { deleteUser(id: $id) }', { id }));
      await Promise.all([...creates, ...deletes]);
    });
    const seen = edges.map((e) => e.node.id);
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of before) if (!deleted.has(id)) expect(seen, id).toContain(id);
    expect(deleted.size).toBeGreaterThan(0);
    assertStrictlyOrdered(edges);
  });
});

describe('nested orders without N+1', () => {
  const NESTED = 'query ($first: Int) { users(first: $first) { edges { node { id orders(limit: 5) { id total } } } } }';

  it('runs the same small number of statements whatever the page size, with the right orders per user', async () => {
    const ids = (await sql<{ id: string }>('select id from users order by created_at, id collate "C" limit 20')).map((r) => r.id);
    for (const [index, id] of ids.entries()) {
      for (let n = 0; n < 7; n++) {
        await sql(`insert into orders (id, user_id, total, status, created_at) values (?, ?, ?, 'paid', ?)`, [
          idAt('order', new Date(Date.UTC(2026, 0, 2, 0, 0, n)), index * 10 + n),
          id,
          index * 100 + n,
          new Date(Date.UTC(2026, 0, 2, 0, 0, n)),
        ]);
      }
    }

    const counts: number[] = [];
    for (const first of [5, 20]) {
      server.statements.length = 0;
      const response = await server.gql<{ users: { edges: { node: { id: string; orders: { total: number }[] } }[] } }>(NESTED, { first });
      // The API key check is a statement of its own in tests (no key cache); the rest is the page.
      const selects = server.statements.filter((s) => /^\s*select/i.test(s) && !s.includes('api_keys'));
      counts.push(selects.length);
      const edges = response.body.data!.users.edges;
      expect(edges).toHaveLength(first);
      for (const [index, edge] of edges.entries()) {
        expect(edge.node.orders.map((o) => o.total)).toEqual([6, 5, 4, 3, 2].map((n) => index * 100 + n));
      }
    }
    // With a key that sees every user's orders, the page and its orders are one statement.
    expect(counts).toEqual([1, 1]);
  });

  it('gives each selection of orders its own page size, through fragments, aliases and variables', async () => {
    const response = await server.gql<{ users: { edges: { node: { orders: { total: number }[]; two: { total: number }[] } }[] } }>(
      `query ($m: Int = 3) { users(first: 2) { edges { node { ...Latest two: orders(limit: 2) { total } } } } }
       fragment Latest on User { orders(limit: $m) { total } }`,
    );
    const edges = response.body.data!.users.edges;
    for (const [index, edge] of edges.entries()) {
      expect(edge.node.orders.map((o) => o.total)).toEqual([6, 5, 4].map((n) => index * 100 + n));
      expect(edge.node.two.map((o) => o.total)).toEqual([6, 5].map((n) => index * 100 + n));
    }
  });

  it("reads every field of the page's orders as a user's own orders read them, ids PostgreSQL must quote included", async () => {
    // Written by other means than the API: ids holding what PostgreSQL quotes in an array literal.
    const at = new Date(Date.UTC(2000, 0, 1));
    const userId = idAt('user', at, 1);
    await sql(`insert into users (id, name, email, created_at, updated_at) values (?, 'Quoted', 'quoted@example.com', ?, ?)`, [
      userId,
      at,
      at,
    ]);
    const odd = ['ord_"quoted"', 'ord_{braced},comma', 'ord_back\\slash and space', 'NULL', ''];
    for (const [n, id] of [...odd, idAt('order', at, 7)].entries()) {
      await sql(`insert into orders (id, user_id, total, status, created_at) values (?, ?, ?, 'shipped', ?)`, [
        id,
        userId,
        n * 1001,
        new Date(at.getTime() + n * 1234),
      ]);
    }
    const fields = '{ id total status createdAt }';
    const nested = await server.gql<{ users: { edges: { node: { id: string; orders: unknown[] } }[] } }>(
      `{ users(first: 1) { edges { node { id orders(limit: 10) ${fields} } } } }`,
    );
    const own = await server.gql<{ user: { orders: unknown[] } }>(`query ($id: ID!) { user(id: $id) { orders(limit: 10) ${fields} } }`, {
      id: userId,
    });
    const [edge] = nested.body.data!.users.edges;
    expect(edge!.node.id).toBe(userId);
    expect(own.body.data!.user.orders).toHaveLength(odd.length + 1);
    expect(edge!.node.orders).toEqual(own.body.data!.user.orders);
    expect(edge!.node.orders).toContainEqual({ id: 'ord_"quoted"', total: 0, status: 'shipped', createdAt: at.toISOString() });
  });
});
