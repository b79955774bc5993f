// Backward paging on the `users` connection over real HTTP: `last`/`before` with the same cursors as
// forward paging, exact `hasPreviousPage`/`hasNextPage`, and (as a property, with users inserted
// anywhere in the order and deleted while pages are read) walking backwards meets every user that
// forward walking meets, in exactly the reverse order.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idAt } from '../../src/db/ids.ts';
import { runs, timeLimit } from '../support/long-mode.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

type Node = { id: string; createdAt: string };
interface Connection {
  edges: { cursor: string; node: Node }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}
interface PageArgs {
  first?: number;
  after?: string | null;
  last?: number;
  before?: string | null;
}

const PAGE = `query ($first: Int, $after: String, $last: Int, $before: String) {
  users(first: $first, after: $after, last: $last, before: $before) {
    edges { cursor node { id createdAt } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`;

async function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return server.orm.em.fork().execute<T[]>(query, params);
}

async function page(args: PageArgs): Promise<Connection> {
  const response = await server.gql<{ users: Connection }>(PAGE, { ...args });
  expect(response.body.errors, JSON.stringify(args)).toBeUndefined();
  return response.body.data!.users;
}

const BASE = Date.parse('2026-01-01T00:00:00Z');
let sequence = 0;
/** Users at these offsets (ms) from a base time; several share a time, so ids break the ties. */
async function insertUsersAt(offsets: number[]): Promise<void> {
  const rows = offsets.map((offset) => {
    const at = new Date(BASE + offset);
    sequence += 1;
    return { id: idAt('user', at, sequence % 4096), name: `User ${sequence}`, email: `user-${sequence}@example.com`, at: at.toISOString() };
  });
  await sql(
    `insert into users (id, name, email, created_at, updated_at)
     select id, name, email, at::timestamptz, at::timestamptz from jsonb_to_recordset(?::jsonb) as t(id text, name text, email text, at text)`,
    [JSON.stringify(rows)],
  );
}

const allIds = async () => (await sql<{ id: string }>('select id from users order by created_at, id')).map((row) => row.id);

function assertStrictlyOrdered(nodes: Node[]): void {
  for (let i = 1; i < nodes.length; i++) {
    const [a, b] = [nodes[i - 1]!, nodes[i]!];
    expect(a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id), `${a.id} before ${b.id}`).toBe(true);
  }
}

/**
 * Walks the whole list one way, checking each page's flags against the database right after it
 * (changes happen only between pages, in `between`). Returns the nodes in the order met.
 */
async function walk(direction: 'forward' | 'backward', size: number, between: () => Promise<void>): Promise<Node[]> {
  const met: Node[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 10_000; pages++) {
    const current: Connection =
      direction === 'forward' ? await page({ first: size, after: cursor }) : await page({ last: size, before: cursor });
    const nodes = current.edges.map((edge) => edge.node);
    assertStrictlyOrdered(nodes);
    expect(nodes.length).toBeLessThanOrEqual(size);
    const [first, last] = [nodes[0], nodes.at(-1)];
    if (first && last) {
      expect(current.pageInfo.hasPreviousPage, 'users lie before the page').toBe((await count('<', first)) > 0);
      expect(current.pageInfo.hasNextPage, 'users lie after the page').toBe((await count('>', last)) > 0);
    }
    met.push(...(direction === 'forward' ? nodes : nodes.reverse()));
    const more = direction === 'forward' ? current.pageInfo.hasNextPage : current.pageInfo.hasPreviousPage;
    if (!more) return met;
    cursor = direction === 'forward' ? current.pageInfo.endCursor : current.pageInfo.startCursor;
    await between();
  }
  throw new Error('the walk did not end');
}

/** How many users lie before (`<`) or after (`>`) a node: the truth pageInfo must tell. */
async function count(side: '<' | '>', node: Node): Promise<number> {
  const [row] = await sql<{ n: number }>(`select count(*)::int as n from users where (created_at, id) ${side} (?, ?)`, [
    node.createdAt,
    node.id,
  ]);
  return row!.n;
}

describe('users connection backwards', () => {
  beforeAll(() => insertUsersAt(Array.from({ length: 60 }, (_, i) => (i % 12) * 1000)));

  it('last: n is the end of the list, in order, with hasPreviousPage true and hasNextPage false', async () => {
    const ids = await allIds();
    const end = await page({ last: 7 });
    expect(end.edges.map((edge) => edge.node.id)).toEqual(ids.slice(-7));
    expect(end.pageInfo).toEqual({
      hasPreviousPage: true,
      hasNextPage: false,
      startCursor: end.edges[0]!.cursor,
      endCursor: end.edges[6]!.cursor,
    });
  });

  it('before a startCursor gives the page before it; at the start, hasPreviousPage is false', async () => {
    const ids = await allIds();
    const end = await page({ last: 50 });
    const start = await page({ last: 50, before: end.pageInfo.startCursor });
    expect(start.edges.map((edge) => edge.node.id)).toEqual(ids.slice(0, 10));
    expect(start.pageInfo).toMatchObject({ hasPreviousPage: false, hasNextPage: true });
  });

  it('the cursors are the forward ones: after and before together bound a window', async () => {
    const ids = await allIds();
    const forward = await page({ first: 30 });
    const tenth = forward.edges[9]!.cursor;
    const twentieth = forward.edges[19]!.cursor;
    const window = await page({ first: 100, after: tenth, before: twentieth });
    expect(window.edges.map((edge) => edge.node.id)).toEqual(ids.slice(10, 19));
    expect(window.pageInfo).toMatchObject({ hasPreviousPage: true, hasNextPage: true });
    const tail = await page({ last: 3, after: tenth, before: twentieth });
    expect(tail.edges.map((edge) => edge.node.id)).toEqual(ids.slice(16, 19));
    // A forward page's previous rows and a backward page's next rows are found past its cursor.
    expect((await page({ first: 5, after: tenth })).pageInfo.hasPreviousPage).toBe(true);
    expect((await page({ last: 5, before: twentieth })).pageInfo.hasNextPage).toBe(true);
  });

  it('counts the cursor row itself as lying before a page after it, and after a page before it', async () => {
    const first = await page({ first: 1 });
    expect((await page({ first: 1, after: first.pageInfo.endCursor })).pageInfo.hasPreviousPage).toBe(true);
    const last = await page({ last: 1 });
    expect((await page({ last: 1, before: last.pageInfo.startCursor })).pageInfo.hasNextPage).toBe(true);
  });

  it('asks the database about rows past the cursor only when the query selects that flag', async () => {
    const { endCursor } = (await page({ first: 5 })).pageInfo;
    const reads = async (selection: string) => {
      server.statements.length = 0;
      const response = await server.gql(
        `query ($after: String) { users(first: 5, after: $after) { edges { node { id } } ${selection} } }`,
        {
          after: endCursor,
        },
      );
      expect(response.body.errors).toBeUndefined();
      return server.statements.filter((s) => /^\s*select/i.test(s) && !s.includes('api_keys')).length;
    };
    expect(await reads('pageInfo { hasNextPage endCursor }')).toBe(1);
    expect(await reads('pageInfo { hasPreviousPage }')).toBe(2);
  });

  it.each([
    [{ first: 5, last: 5 }, 'last', 'cannot be combined with first'],
    [{ last: 0 }, 'last', '1 to 100'],
    [{ last: 101 }, 'last', '1 to 100'],
    [{ last: 5, before: 'forged' }, 'before', 'not a valid cursor'],
  ])('refuses %j with BAD_USER_INPUT on %s', async (args, field, words) => {
    const response = await server.gql(PAGE, args);
    expect(response.body.data).toBeNull();
    expect(response.body.errors![0]!.extensions).toMatchObject({ code: 'BAD_USER_INPUT', errors: [{ field }] });
    expect(response.body.errors![0]!.message).toContain(words);
  });
});

describe('walking backwards is walking forwards reversed', () => {
  /** What happens between two pages: users inserted at these offsets, and the users at these positions deleted. */
  const change = fc.record({
    inserts: fc.array(fc.integer({ min: 0, max: 12_000 }), { maxLength: 3 }),
    deletes: fc.array(fc.nat(), { maxLength: 2 }),
  });

  it(
    'meets every user present throughout, once each, in exactly the reverse order, while others come and go',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 2, max: 25 }),
          fc.integer({ min: 2, max: 25 }),
          fc.array(change, { maxLength: 40 }),
          async (forwardSize, backwardSize, changes) => {
            const before = new Set(await allIds());
            const deleted = new Set<string>();
            let step = 0;
            let changed = false;
            const between = async () => {
              const next = changes[step++];
              if (!next) return;
              changed ||= next.inserts.length > 0 || next.deletes.length > 0;
              if (next.inserts.length > 0) await insertUsersAt(next.inserts);
              const ids = await allIds();
              for (const position of next.deletes) {
                const victim = ids[position % ids.length];
                if (victim && !deleted.has(victim)) {
                  deleted.add(victim);
                  await sql('delete from users where id = ?', [victim]);
                }
              }
            };
            const forward = await walk('forward', forwardSize, between);
            const backward = (await walk('backward', backwardSize, between)).reverse();
            assertStrictlyOrdered(forward);
            assertStrictlyOrdered(backward);
            const present = (nodes: Node[]) => nodes.map((node) => node.id).filter((id) => before.has(id) && !deleted.has(id));
            const throughout = [...before].filter((id) => !deleted.has(id));
            // Each walk meets every user present throughout, and both meet them in the same order.
            expect(present(forward)).toHaveLength(throughout.length);
            expect(present(backward)).toEqual(present(forward));
            // With nothing changing, the two walks are exactly each other reversed: the whole list.
            if (!changed) expect(backward).toEqual(forward);
          },
        ),
        { numRuns: runs(12, 200) },
      );
    },
    timeLimit(30_000),
  );
});
