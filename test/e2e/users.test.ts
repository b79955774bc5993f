import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { match } from '../support/match.ts';
import { startTestServer, testUserToken, type TestServer } from '../support/server.ts';
import { eventually } from '../support/steady-load.ts';
import { lockUser } from '../../src/db/user-locks.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const USER_FIELDS = 'id name email createdAt updatedAt';
const CREATE = `mutation ($input: CreateUserInput!) { createUser(input: $input) { ${USER_FIELDS} } }`;

interface UserData {
  id: string;
  name: string;
  email: string;
  createdAt: string;
  updatedAt: string;
}

let counter = 0;
async function createUser(overrides: Partial<{ name: string; email: string }> = {}): Promise<UserData> {
  counter += 1;
  const input = { name: `User ${counter}`, email: `user${counter}-${Date.now()}@example.com`, ...overrides };
  const response = await server.gql<{ createUser: UserData }>(CREATE, { input });
  expect(response.body.errors).toBeUndefined();
  return response.body.data!.createUser;
}

function firstError(response: { body: { errors?: { extensions: { code: string; errors?: { field: string }[] } }[] } }) {
  expect(response.body.errors, 'expected an error').toBeDefined();
  return response.body.errors![0]!;
}

describe('createUser', () => {
  it('creates a user with a prefixed id and timestamps, and reads it back', async () => {
    const user = await createUser({ name: '  Ada Lovelace ', email: 'ada.lovelace@example.com' });
    expect(user.id).toMatch(/^usr_[0-7][0-9a-hjkmnp-tv-z]{25}$/);
    expect(user.name).toBe('Ada Lovelace');
    expect(user.email).toBe('ada.lovelace@example.com');
    expect(Date.parse(user.createdAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(user.updatedAt).toBe(user.createdAt);

    const read = await server.gql<{ user: UserData }>(`query ($id: ID!) { user(id: $id) { ${USER_FIELDS} } }`, { id: user.id });
    expect(read.body.data!.user).toEqual(user);
  });

  it.each([
    [{ name: '', email: 'a@example.com' }, ['name']],
    [{ name: '   ', email: 'a@example.com' }, ['name']],
    // Invisible characters alone show nothing: a zero-width space, a Hangul filler.
    [{ name: '\u200b', email: 'a@example.com' }, ['name']],
    [{ name: '\u3164 \u200b', email: 'a@example.com' }, ['name']],
    [{ name: 'x'.repeat(201), email: 'a@example.com' }, ['name']],
    [{ name: 'Ok', email: 'not-an-email' }, ['email']],
    [{ name: 'Ok', email: 'two@@example.com' }, ['email']],
    // Dots and hyphens where no mail system takes them (RFC 5321 dot-atoms and host names).
    [{ name: 'Ok', email: 'x..y@example.com' }, ['email']],
    [{ name: 'Ok', email: '.x@example.com' }, ['email']],
    [{ name: 'Ok', email: 'x.@example.com' }, ['email']],
    [{ name: 'Ok', email: 'x@-example.com' }, ['email']],
    [{ name: 'Ok', email: 'x@example-.com' }, ['email']],
    [{ name: 'Ok', email: 'x@example.-com' }, ['email']],
    [{ name: 'Ok', email: `${'a'.repeat(250)}@example.com` }, ['email']],
    [{ name: '', email: 'nope' }, ['name', 'email']],
  ])('refuses %j with BAD_USER_INPUT naming %j', async (input, fields) => {
    const response = await server.gql(CREATE, { input });
    const error = firstError(response);
    expect(error.extensions.code).toBe('BAD_USER_INPUT');
    expect(error.extensions.errors!.map((e) => e.field)).toEqual(fields);
    expect(response.body.data).toBeNull();
  });

  it('gives every new user the same createdAt and updatedAt', async () => {
    const users = await Promise.all(Array.from({ length: 40 }, () => createUser()));
    for (const user of users) expect(user.updatedAt, user.id).toBe(user.createdAt);
  });

  it('accepts a name of exactly 200 characters, counted as characters not bytes', async () => {
    const user = await createUser({ name: 'é'.repeat(200) });
    expect([...user.name]).toHaveLength(200);
  });

  it('accepts the plain addresses people have: dots, plus tags, hyphens inside names, any letters', async () => {
    for (const email of ['ada.king+news@example.com', 'a-b@mail-server.example.co.uk', 'zoë@bücher.example', 'x@a.b']) {
      expect((await createUser({ email })).email).toBe(email);
    }
  });

  it('refuses a missing field as a GraphQL input error', async () => {
    const response = await server.gql(CREATE, { input: { name: 'No Email' } });
    expect(response.status).toBe(400);
    expect(firstError(response).extensions.code).toBe('BAD_USER_INPUT');
  });

  it('refuses a second user with the same email in any letter case with CONFLICT', async () => {
    await createUser({ email: 'grace@example.com' });
    const response = await server.gql(CREATE, { input: { name: 'Grace Again', email: 'GRACE@Example.com' } });
    const error = firstError(response);
    expect(error.extensions.code).toBe('CONFLICT');
    expect(error.extensions).toMatchObject({
      type: 'https://portico.dev/problems/conflict',
      errors: [{ field: 'email', message: 'is taken by another user' }],
    });
  });

  it.each([
    ['åsa@example.com', 'ÅSA@example.com'],
    ['σοφία@example.com', 'ΣΟΦΊΑ@example.com'],
    ['δημήτρης@example.com', 'Δημήτρης@EXAMPLE.com'],
  ])('compares letter case beyond ASCII too, whatever the database locale: %s and %s are one account', async (first, second) => {
    await createUser({ email: first });
    expect(firstError(await server.gql(CREATE, { input: { name: 'Again', email: second } })).extensions.code).toBe('CONFLICT');
  });

  it('treats an email typed in NFC and in NFD as one account, stored in NFC', async () => {
    const nfc = 'caf\u00e9@example.com';
    const nfd = 'cafe\u0301@example.com';
    const first = await createUser({ email: nfd, name: 'Zoe\u0308' });
    expect(first.email).toBe(nfc);
    expect(first.name).toBe('Zo\u00eb');
    const response = await server.gql(CREATE, { input: { name: 'Again', email: nfc } });
    expect(firstError(response).extensions.code).toBe('CONFLICT');
  });

  it.each(['\u200b', '\u200d', '\u2060', '\ufeff', '\u202e', '\u034f', '\u3164', '\u115f', '\u180e'])(
    'refuses an email holding the invisible character %j',
    async (invisible) => {
      const response = await server.gql(CREATE, { input: { name: 'Hidden', email: `ada${invisible}@example.com` } });
      const error = firstError(response);
      expect(error.extensions.code).toBe('BAD_USER_INPUT');
      expect(error.extensions.errors).toEqual([
        { field: 'email', message: 'must not contain invisible characters such as zero-width spaces' },
      ]);
    },
  );

  it('lets exactly one of many concurrent creates with one email win', async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => server.gql(CREATE, { input: { name: `Racer ${i}`, email: 'race@example.com' } })),
    );
    const codes = results.map((r) => r.body.errors?.[0]?.extensions.code ?? 'OK');
    expect(codes.filter((c) => c === 'OK')).toHaveLength(1);
    expect(codes.filter((c) => c === 'CONFLICT')).toHaveLength(9);
  });
});

describe('user', () => {
  it('is null for an id nobody has', async () => {
    const response = await server.gql('{ user(id: "usr_01jd3x3b8vfb9s1p4t4p6q2k7m") { id } }');
    expect(response.body).toEqual({ data: { user: null } });
  });

  it.each(['42', 'usr_nope', 'ord_01jd3x3b8vfb9s1p4t4p6q2k7m', "usr_01jd3x3b8vfb9s1p4t4p6q2k7'; drop table users; --"])(
    'refuses the malformed id %j with BAD_USER_INPUT',
    async (id) => {
      const response = await server.gql('query ($id: ID!) { user(id: $id) { id } }', { id });
      const error = firstError(response);
      expect(error.extensions.code).toBe('BAD_USER_INPUT');
      expect(error.extensions.errors).toEqual([{ field: 'id', message: match.stringContaining('usr_') }]);
    },
  );
});

describe('errors raised while running', () => {
  it.each(['\n', '\r\n', '\r'])('say where in the document they arose (locations) as well as the path, lines broken by %j', async (br) => {
    const user = await createUser();
    const query = ['query ($id: ID!) {', '  user(id: $id) { id }', '  other: user(id: "x") { id }', '}'].join(br);
    const response = await server.gql(query, { id: user.id });
    expect(response.body.errors).toEqual([
      match.objectContaining({
        path: ['other'],
        locations: [{ line: 3, column: 3 }],
        extensions: match.objectContaining({ code: 'BAD_USER_INPUT' }),
      }),
    ]);
  });
});

describe('replaceUser', () => {
  const REPLACE = `mutation ($id: ID!, $input: ReplaceUserInput!) { replaceUser(id: $id, input: $input) { ${USER_FIELDS} } }`;

  it('replaces every writable field and moves updatedAt', async () => {
    const user = await createUser();
    const response = await server.gql<{ replaceUser: UserData }>(REPLACE, {
      id: user.id,
      input: { name: 'Replaced', email: 'replaced@example.com' },
    });
    const replaced = response.body.data!.replaceUser;
    expect(replaced).toMatchObject({ id: user.id, name: 'Replaced', email: 'replaced@example.com', createdAt: user.createdAt });
    expect(Date.parse(replaced.updatedAt)).toBeGreaterThanOrEqual(Date.parse(user.updatedAt));
  });

  it('requires every field', async () => {
    const user = await createUser();
    const response = await server.gql(REPLACE, { id: user.id, input: { name: 'Only Name' } });
    expect(response.status).toBe(400);
    expect(firstError(response).extensions.code).toBe('BAD_USER_INPUT');
  });

  it('is NOT_FOUND for an unknown user and CONFLICT for a taken email', async () => {
    const missing = await server.gql(REPLACE, { id: 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m', input: { name: 'X', email: 'x@example.com' } });
    expect(firstError(missing).extensions.code).toBe('NOT_FOUND');
    const a = await createUser();
    const b = await createUser();
    const taken = await server.gql(REPLACE, { id: b.id, input: { name: 'B', email: a.email.toUpperCase() } });
    expect(firstError(taken).extensions.code).toBe('CONFLICT');
  });
});

describe('updateUser', () => {
  const UPDATE = `mutation ($id: ID!, $input: UpdateUserInput!) { updateUser(id: $id, input: $input) { ${USER_FIELDS} } }`;

  it('changes only the fields given', async () => {
    const user = await createUser();
    const response = await server.gql<{ updateUser: UserData }>(UPDATE, { id: user.id, input: { name: 'Renamed' } });
    expect(response.body.data!.updateUser).toMatchObject({ id: user.id, name: 'Renamed', email: user.email });
    const unchanged = await server.gql<{ updateUser: UserData }>(UPDATE, { id: user.id, input: {} });
    expect(unchanged.body.data!.updateUser).toMatchObject({ name: 'Renamed', email: user.email });
  });

  it('leaves a field alone when the variable it is written with was not sent (GraphQL input coercion)', async () => {
    const user = await createUser();
    const PER_FIELD = `mutation ($id: ID!, $name: String, $email: String) {
      updateUser(id: $id, input: { name: $name, email: $email }) { ${USER_FIELDS} }
    }`;
    const email = `per-field-${user.id}@example.com`;
    const response = await server.gql<{ updateUser: UserData }>(PER_FIELD, { id: user.id, email });
    expect(response.body.errors).toBeUndefined();
    expect(response.body.data!.updateUser).toMatchObject({ name: user.name, email });
    // Sent as null, the variable is null: refused, since a user's name cannot be cleared.
    const cleared = await server.gql(PER_FIELD, { id: user.id, name: null });
    expect(firstError(cleared).extensions.errors!.map((e) => e.field)).toEqual(['name']);
  });

  it('refuses null and invalid values without changing anything', async () => {
    const user = await createUser();
    const response = await server.gql(UPDATE, { id: user.id, input: { name: null, email: 'bad' } });
    expect(firstError(response).extensions.errors!.map((e) => e.field)).toEqual(['name', 'email']);
    const read = await server.gql<{ user: UserData }>(`query ($id: ID!) { user(id: $id) { ${USER_FIELDS} } }`, { id: user.id });
    expect(read.body.data!.user).toEqual(user);
  });

  it('is NOT_FOUND for an unknown user', async () => {
    const response = await server.gql(UPDATE, { id: 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m', input: { name: 'X' } });
    expect(firstError(response).extensions.code).toBe('NOT_FOUND');
  });
});

describe('deleteUser', () => {
  it('deletes the user and their orders; a second delete is NOT_FOUND', async () => {
    const user = await createUser();
    await server.gql('mutation ($id: ID!) { createOrder(input: { userId: $id, total: 500 }) { id } }', { id: user.id });
    const deleted = await server.gql('mutation ($id: ID!) { deleteUser(id: $id) }', { id: user.id });
    expect(deleted.body).toEqual({ data: { deleteUser: user.id } });

    expect((await server.gql('query ($id: ID!) { user(id: $id) { id } }', { id: user.id })).body.data).toEqual({ user: null });
    const rows = await server.orm.em.fork().execute<{ count: string }[]>('select count(*) from orders where user_id = ?', [user.id]);
    expect(Number(rows[0]!.count)).toBe(0);

    const again = await server.gql('mutation ($id: ID!) { deleteUser(id: $id) }', { id: user.id });
    expect(firstError(again).extensions.code).toBe('NOT_FOUND');
  });
});

describe('several mutations in one document', () => {
  it('run one after another, in the order written, and commit together', async () => {
    const user = await createUser();
    const renamed = await server.gql<{ first: { name: string }; second: { name: string } }>(
      `mutation ($id: ID!) {
         first: updateUser(id: $id, input: { name: "First" }) { name }
         second: updateUser(id: $id, input: { name: "Second" }) { name }
       }`,
      { id: user.id },
    );
    expect(renamed.body).toEqual({ data: { first: { name: 'First' }, second: { name: 'Second' } } });
    expect(
      (await server.gql<{ user: { name: string } }>('query ($id: ID!) { user(id: $id) { name } }', { id: user.id })).body.data,
    ).toEqual({
      user: { name: 'Second' },
    });
  });

  it('keep nothing when one is refused: the answer shows nothing done, and nothing was', async () => {
    const user = await createUser();
    const email = `together-${Date.now()}@example.com`;
    // In order, the update finds the user gone, and its refusal takes the deletion back with it.
    const late = await server.gql(
      `mutation ($id: ID!) {
         gone: deleteUser(id: $id)
         late: updateUser(id: $id, input: { name: "Late" }) { name }
       }`,
      { id: user.id },
    );
    expect(late.body.data).toBeNull();
    expect(firstError(late)).toMatchObject({ path: ['late'], extensions: { code: 'NOT_FOUND' } });
    expect((await server.gql('query ($id: ID!) { user(id: $id) { id } }', { id: user.id })).body.data).toEqual({ user: { id: user.id } });

    // A refusal by the database (a taken email) as much as by the service.
    const taken = await server.gql(
      `mutation ($email: String!, $taken: String!) {
         a: createUser(input: { name: "A", email: $email }) { id }
         b: createUser(input: { name: "B", email: $taken }) { id }
       }`,
      { email, taken: user.email },
    );
    expect(taken.body.data).toBeNull();
    expect(firstError(taken)).toMatchObject({ path: ['b'], extensions: { code: 'CONFLICT' } });
    const [row] = await server.orm.em.fork().execute<{ n: number }[]>('select count(*)::int as n from users where email = ?', [email]);
    expect(row!.n).toBe(0);
  });

  it("that create a user's order and then rename the user run many at once, one after another, none undone", async () => {
    const user = await createUser();
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        server.gql(
          `mutation ($id: ID!, $name: String!) {
             order: createOrder(input: { userId: $id, total: 1 }) { id }
             renamed: updateUser(id: $id, input: { name: $name }) { name }
           }`,
          { id: user.id, name: `Renamed ${i}` },
        ),
      ),
    );
    // Order creations share the user's lock; held shared here, each document waited for the others
    // to let go of it to rename the user, and PostgreSQL undid all but one or two as deadlocked.
    expect(answers.map((answer) => [answer.status, answer.body.errors?.[0]?.extensions.code])).toEqual(answers.map(() => [200, undefined]));
    const [row] = await server.orm.em.fork().execute<{ n: number }[]>('select count(*)::int as n from orders where user_id = ?', [user.id]);
    expect(row!.n).toBe(12);
  });

  it.each([
    ['without an Idempotency-Key', {}],
    ['with an Idempotency-Key, free again for the retry', { 'idempotency-key': `deadlock-${Date.now()}` }],
  ])('undone by a deadlock with another writer are answered 503 UNAVAILABLE, and nothing is kept (%s)', async (_, headers) => {
    const [first, second] = [await createUser(), await createUser()];
    const send = () =>
      server.gql(
        `mutation ($a: ID!, $b: ID!) {
           a: updateUser(id: $a, input: { name: "Deadlocked A" }) { name }
           b: updateUser(id: $b, input: { name: "Deadlocked B" }) { name }
         }`,
        { a: first.id, b: second.id },
        headers,
      );
    // Another writer holds the second user and will then want the first, which the document holds.
    const other = new pg.Client({ connectionString: server.databaseUrl });
    await other.connect();
    // The document, not this writer, is to be the one undone, however slowly the wait below is seen
    // (setting it takes a superuser; PostgreSQL otherwise still undoes the first to wait, the document).
    await other.query("set deadlock_timeout = '1min'").catch(() => undefined);
    try {
      await other.query('begin');
      await other.query(`select ${lockUser('$1')}`, [second.id]);
      const document = send();
      // Once the document waits for the second user, the other writer asks for the first: a cycle,
      // which PostgreSQL breaks by failing the transaction that has waited longest, the document's.
      await eventually(
        async () => {
          const waiting = await other.query(
            `select 1 from pg_locks where locktype = 'advisory' and not granted and database = (select oid from pg_database where datname = current_database())`,
          );
          return waiting.rowCount! > 0;
        },
        'the document to wait for the second user',
        10_000,
      );
      const otherLock = other.query(`select ${lockUser('$1')}`, [first.id]);
      const response = await document;
      await otherLock;
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('2');
      expect(response.body.errors?.map((error) => error.extensions.code)).toEqual(['UNAVAILABLE']);
      expect(response.body.errors![0]!.message).toMatch(/concurrent/);
    } finally {
      await other.query('rollback');
      await other.end();
    }
    const names = await server.orm.em
      .fork()
      .execute<{ name: string }[]>('select name from users where id in (?, ?)', [first.id, second.id]);
    expect(names.map((row) => row.name).sort()).toEqual([first.name, second.name].sort());
    // Sent again as it was, it runs.
    const retry = await send();
    expect([retry.status, retry.body.data]).toEqual([200, { a: { name: 'Deadlocked A' }, b: { name: 'Deadlocked B' } }]);
  });
});

describe('one mutation whose answer fails after its write', () => {
  const ordersOf = async (userId: string) =>
    (await server.orm.em.fork().execute<{ n: number }[]>('select count(*)::int as n from orders where user_id = ?', [userId]))[0]!.n;

  it('keeps nothing when a field selected below it is refused: the null answer hides no write', async () => {
    const user = await createUser();
    // `orders(limit: 0)` is refused as it runs, after the order is written; the non-null fields
    // carry that null up to `data`, so the client learns nothing was done, and a retry must not
    // meet an order it was never told of.
    const order = await server.gql(
      'mutation ($userId: ID!) { createOrder(input: { userId: $userId, total: 777 }) { id user { orders(limit: 0) { id } } } }',
      { userId: user.id },
    );
    expect(order.body.data).toBeNull();
    expect(firstError(order).extensions.code).toBe('BAD_USER_INPUT');
    expect(await ordersOf(user.id)).toBe(0);

    const email = `hidden-${Date.now()}@example.com`;
    const created = await server.gql(
      'mutation ($email: String!) { createUser(input: { name: "Hidden", email: $email }) { id orders(limit: 0) { id } } }',
      {
        email,
      },
    );
    expect(created.body.data).toBeNull();
    const [row] = await server.orm.em.fork().execute<{ n: number }[]>('select count(*)::int as n from users where email = ?', [email]);
    expect(row!.n).toBe(0);
  });

  it('reads what it wrote below it, on its own connection: many at once do not wait on the pool for a second one', async () => {
    const user = await createUser();
    // More writes at once than the pool has connections, each reading below its write.
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        server.gql<{ createOrder: { total: number; user: { orders: { total: number }[] } } }>(
          'mutation ($userId: ID!, $total: Int!) { createOrder(input: { userId: $userId, total: $total }) { total user { orders(limit: 100) { total } } } }',
          { userId: user.id, total: 1000 + i },
        ),
      ),
    );
    for (const answer of answers) {
      expect(answer.body.errors).toBeUndefined();
      // The order just written is among the user's orders its own answer lists.
      const { total, user: owner } = answer.body.data!.createOrder;
      expect(owner.orders.map((order) => order.total)).toContain(total);
    }
    expect(await ordersOf(user.id)).toBe(24);
  });

  it('keeps nothing when the key may write but not read what it selected (nothing done)', async () => {
    const user = await createUser();
    const writeOnly = await server.createKey({ scopes: ['orders:write'] });
    const token = await testUserToken(user.id);
    const order = await server.gql(
      'mutation ($userId: ID!) { createOrder(input: { userId: $userId, total: 5 }) { id user { id } } }',
      { userId: user.id },
      { 'x-api-key': writeOnly, authorization: `Bearer ${token}` },
    );
    // The mutation ran and was refused below: a 200 whose null data says nothing was done (a 403 is
    // for a request of which nothing could run).
    expect([order.status, order.body.data, order.body.errors?.[0]?.extensions.code]).toEqual([200, null, 'FORBIDDEN']);
    expect(await ordersOf(user.id)).toBe(0);

    // Selecting only what the write itself returns, the same key writes, and the order stays.
    const plain = await server.gql(
      'mutation ($userId: ID!) { createOrder(input: { userId: $userId, total: 5 }) { id total } }',
      { userId: user.id },
      { 'x-api-key': writeOnly, authorization: `Bearer ${token}` },
    );
    expect(plain.body).toMatchObject({ data: { createOrder: { total: 5 } } });
    expect(await ordersOf(user.id)).toBe(1);
  });
});

describe('response field order', () => {
  it('keeps the order of the document, fragments where they stand (spec §6.3.2, §7.2.2)', async () => {
    const user = await createUser();
    const keysOf = async (query: string) => {
      const response = await server.fetch('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables: { id: user.id } }),
      });
      const { data } = (await response.json()) as { data: { user: Record<string, unknown> } };
      return Object.keys(data.user);
    };
    expect(await keysOf('query ($id: ID!) { user(id: $id) { ...F id } } fragment F on User { name }')).toEqual(['name', 'id']);
    expect(
      await keysOf('query ($id: ID!) { user(id: $id) { ...A ...B } } fragment A on User { email } fragment B on User { name }'),
    ).toEqual(['email', 'name']);
    expect(await keysOf('query ($id: ID!) { user(id: $id) { id ... on User { name } email ... on Node { id } } }')).toEqual([
      'id',
      'name',
      'email',
    ]);
  });
});
