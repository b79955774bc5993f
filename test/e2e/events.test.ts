// Events: every change commits with its event (the transactional outbox) and never without, on both
// faces; the feed pages through them without gaps while they are being written.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idAt } from '../../src/db/ids.ts';
import { lockUser } from '../../src/db/user-locks.ts';
import { purgeOldEvents } from '../../src/services/events.ts';
import { recordEvent } from '../../src/webhooks/outbox.ts';
import { withFailpoint } from '../support/failpoints.ts';
import { match } from '../support/match.ts';
import { expectProblem, rest, type Order, type User } from '../support/rest.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { startServiceProcess } from '../support/service-process.ts';
import { eventually } from '../support/steady-load.ts';

interface Event {
  id: string;
  type: string;
  createdAt: string;
  data: { object: Record<string, unknown> };
}

interface EventList {
  items: Event[];
  nextCursor: string | null;
  hasMore: boolean;
}

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

let emails = 0;
const newEmail = () => `events-${process.pid}-${++emails}@example.com`;

async function createUser(name = 'Ada Lovelace'): Promise<User> {
  const response = await rest<User>(server, 'POST', '/users', { json: { name, email: newEmail() } });
  expect(response.status).toBe(201);
  return response.body;
}

/** The events recorded about one resource, oldest first, straight from the table. */
async function eventsAbout(id: string): Promise<Event[]> {
  return server.orm.em.fork().execute<Event[]>(
    `select id, type, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as "createdAt", data
       from events where data->'object'->>'id' = ? order by id`,
    [id],
  );
}

async function count(sql: string, values: unknown[] = []): Promise<number> {
  const [row] = await server.orm.em.fork().execute<{ n: number }[]>(`select count(*)::int as n from (${sql}) counted`, values);
  return row!.n;
}

describe('every change commits with its event', () => {
  it('REST: each write records one event whose object is the resource exactly as GET shows it', async () => {
    const created = await createUser();
    const afterCreate = (await rest<User>(server, 'GET', `/users/${created.id}`)).body;
    const replaced = await rest<User>(server, 'PUT', `/users/${created.id}`, { json: { name: 'Ada King', email: newEmail() } });
    const afterPut = (await rest<User>(server, 'GET', `/users/${created.id}`)).body;
    await rest(server, 'PATCH', `/users/${created.id}`, { json: { name: 'Ada, Countess' }, contentType: 'application/merge-patch+json' });
    const afterPatch = (await rest<User>(server, 'GET', `/users/${created.id}`)).body;
    const order = await rest<Order>(server, 'POST', `/users/${created.id}/orders`, { json: { total: 1250 } });
    const orderAsShown = (await rest<Order>(server, 'GET', `/orders/${order.body.id}`)).body;
    expect((await rest(server, 'DELETE', `/users/${created.id}`)).status).toBe(204);

    expect(replaced.status).toBe(200);
    expect((await eventsAbout(created.id)).map((event) => [event.type, event.data.object])).toEqual([
      ['user.created', afterCreate],
      ['user.updated', afterPut],
      ['user.updated', afterPatch],
      ['user.deleted', afterPatch],
    ]);
    expect((await eventsAbout(order.body.id)).map((event) => [event.type, event.data.object])).toEqual([['order.created', orderAsShown]]);
  });

  it('GraphQL: the same events, in the same representation', async () => {
    const created = await server.gql<{ createUser: { id: string } }>(
      'mutation($input: CreateUserInput!) { createUser(input: $input) { id } }',
      { input: { name: 'Grace Hopper', email: newEmail() } },
    );
    const id = created.body.data!.createUser.id;
    await server.gql('mutation($id: ID!) { updateUser(id: $id, input: { name: "Grace B. Hopper" }) { id } }', { id });
    await server.gql('mutation($id: ID!) { replaceUser(id: $id, input: { name: "Grace", email: "grace-events@example.com" }) { id } }', {
      id,
    });
    const order = await server.gql<{ createOrder: { id: string } }>(
      'mutation($id: ID!) { createOrder(input: { userId: $id, total: 5, status: "paid" }) { id } }',
      { id },
    );
    const shown = (await rest<User>(server, 'GET', `/users/${id}`)).body;
    const orderShown = (await rest<Order>(server, 'GET', `/orders/${order.body.data!.createOrder.id}`)).body;
    await server.gql('mutation($id: ID!) { deleteUser(id: $id) }', { id });

    const events = await eventsAbout(id);
    expect(events.map((event) => event.type)).toEqual(['user.created', 'user.updated', 'user.updated', 'user.deleted']);
    expect(events.at(-1)!.data.object).toEqual(shown);
    expect((await eventsAbout(orderShown.id))[0]!.data.object).toEqual(orderShown);
  });

  it('a refused write records nothing: invalid input, a taken email, a missing user, an unknown id', async () => {
    const before = await count('select 1 from events');
    const existing = await createUser();
    const taken = (await rest<User>(server, 'GET', `/users/${existing.id}`)).body.email;
    const missing = 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m';
    expectProblem(await rest(server, 'POST', '/users', { json: { name: '', email: 'nope' } }), 400, 'invalid-input', '/users');
    expectProblem(await rest(server, 'POST', '/users', { json: { name: 'Twin', email: taken } }), 409, 'conflict', '/users');
    expectProblem(
      await rest(server, 'POST', `/users/${missing}/orders`, { json: { total: 1 } }),
      404,
      'not-found',
      `/users/${missing}/orders`,
    );
    expectProblem(await rest(server, 'DELETE', `/users/${missing}`), 404, 'not-found', `/users/${missing}`);
    const other = await createUser();
    expectProblem(
      await rest(server, 'PATCH', `/users/${other.id}`, {
        json: { email: taken.toUpperCase() },
        contentType: 'application/merge-patch+json',
      }),
      409,
      'conflict',
      `/users/${other.id}`,
    );
    // The two users created here, and nothing for the refusals.
    expect(await count('select 1 from events')).toBe(before + 2);
    expect((await eventsAbout(other.id)).map((event) => event.type)).toEqual(['user.created']);
  });

  it('a change that changes nothing records no event and keeps updatedAt, on both faces', async () => {
    const user = (await rest<User>(server, 'GET', `/users/${(await createUser('Same')).id}`)).body;
    const patched = await rest<User>(server, 'PATCH', `/users/${user.id}`, {
      json: { name: user.name },
      contentType: 'application/merge-patch+json',
    });
    const emptyPatch = await rest<User>(server, 'PATCH', `/users/${user.id}`, { json: {}, contentType: 'application/merge-patch+json' });
    const put = await rest<User>(server, 'PUT', `/users/${user.id}`, { json: { name: user.name, email: user.email } });
    const graphql = await server.gql<{ updateUser: User }>(
      'mutation ($id: ID!, $input: UpdateUserInput!) { updateUser(id: $id, input: $input) { id name email createdAt updatedAt } }',
      { id: user.id, input: { email: user.email } },
    );
    for (const response of [patched, emptyPatch, put]) expect(response.body).toEqual(user);
    expect(graphql.body.data!.updateUser).toEqual(user);
    expect((await eventsAbout(user.id)).map((event) => event.type)).toEqual(['user.created']);

    // A change of letter case is a change: the address is stored as given.
    const recased = await rest<User>(server, 'PATCH', `/users/${user.id}`, {
      json: { email: user.email.toUpperCase() },
      contentType: 'application/merge-patch+json',
    });
    expect(recased.body.email).toBe(user.email.toUpperCase());
    expect((await eventsAbout(user.id)).map((event) => event.type)).toEqual(['user.created', 'user.updated']);
  });

  it('a write that fails after its event is inserted keeps neither (the transaction rolls back)', async () => {
    const user = await createUser('Before');
    const failed = await withFailpoint('fail-after-event', () =>
      rest(server, 'PATCH', `/users/${user.id}`, { json: { name: 'After' }, contentType: 'application/merge-patch+json' }),
    );
    expectProblem(failed, 500, 'internal', `/users/${user.id}`);
    expect((await rest<User>(server, 'GET', `/users/${user.id}`)).body.name).toBe('Before');
    expect((await eventsAbout(user.id)).map((event) => event.type)).toEqual(['user.created']);
  });

  it('a write sent with an Idempotency-Key commits with its event; its replay records no second one', async () => {
    const user = await createUser();
    const send = () =>
      rest<Order>(server, 'POST', `/users/${user.id}/orders`, { json: { total: 77 }, headers: { 'idempotency-key': `events-${user.id}` } });
    const first = await send();
    const replay = await send();
    expect([first.status, replay.status, replay.headers.get('idempotent-replayed')]).toEqual([201, 201, 'true']);
    expect((await eventsAbout(first.body.id)).map((event) => event.type)).toEqual(['order.created']);
  });

  it('event ids are TypeIDs, unique, and an event reads the same every time', async () => {
    const user = await createUser();
    const [event] = await eventsAbout(user.id);
    expect(event!.id).toMatch(/^evt_[0-7][0-9a-hjkmnp-tv-z]{25}$/);
    const read = () => rest<Event>(server, 'GET', `/events/${event!.id}`);
    const [once, twice] = [await read(), await read()];
    expect(once.status).toBe(200);
    expect(once.text).toBe(twice.text);
    expect(once.body).toEqual({ ...event, data: { object: (await rest<User>(server, 'GET', `/users/${user.id}`)).body } });
    expect(await count('select id from events group by id having count(*) > 1')).toBe(0);
  });
});

describe('changes to one user made at the same time', () => {
  /** The events about one resource in the feed's order. */
  async function feedAbout(id: string): Promise<Event[]> {
    return server.orm.em
      .fork()
      .execute<Event[]>(`select id, type, data from events where data->'object'->>'id' = ? order by xact, id`, [id]);
  }

  /** Runs `request` while another transaction holds the user's row through `hold`, and commits that once the request waits for it. */
  async function whileHeld<T>(hold: string, id: string, request: () => Promise<T>): Promise<T> {
    const holder = server.orm.em.fork();
    await holder.begin();
    try {
      await holder.execute(hold, [id]);
      const sent = request();
      await eventually(
        async () => (await count(`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)) > 0,
        'the request waits for the row',
        10_000,
      );
      await holder.commit();
      return await sent;
    } catch (error) {
      await holder.rollback();
      throw error;
    }
  }

  const patch = (id: string, json: unknown) =>
    rest<User>(server, 'PATCH', `/users/${id}`, { json, contentType: 'application/merge-patch+json' });

  it('an update that waited for a deletion finds the user gone: 404, and no event', async () => {
    const user = await createUser();
    const updated = await whileHeld('delete from users where id = ?', user.id, () => patch(user.id, { name: 'Too late' }));
    expectProblem(updated, 404, 'not-found', `/users/${user.id}`);
    expect((await eventsAbout(user.id)).map((event) => event.type)).toEqual(['user.created']);
  });

  it('an update that waited for another answers, and records, the user with both changes', async () => {
    const user = await createUser();
    const email = newEmail();
    const updated = await whileHeld(`update users set email = '${email}' where id = ?`, user.id, () => patch(user.id, { name: 'Both' }));
    expect(updated.status).toBe(200);
    const stored = (await rest<User>(server, 'GET', `/users/${user.id}`)).body;
    expect(stored).toMatchObject({ name: 'Both', email });
    expect(updated.body).toEqual(stored);
    expect((await feedAbout(user.id)).at(-1)!.data.object).toEqual(stored);
  });

  it('records updates in the feed in the order they took effect, with updatedAt rising', async () => {
    const users = await Promise.all(Array.from({ length: 5 }, () => createUser()));
    await Promise.all(users.flatMap((user) => Array.from({ length: 12 }, (_, i) => patch(user.id, { name: `Name ${i}` }))));
    for (const user of users) {
      const stored = (await rest<User>(server, 'GET', `/users/${user.id}`)).body;
      const updates = (await feedAbout(user.id)).filter((event) => event.type === 'user.updated').map((event) => event.data.object);
      expect(updates.at(-1), user.id).toEqual(stored);
      const times = updates.map((object) => Date.parse(String(object.updatedAt)));
      expect(times, user.id).toEqual([...times].sort((a, b) => a - b));
    }
  });

  describe('in a document of several mutations, one of which waits for its user', () => {
    /**
     * Runs `document` while another transaction holds the lock every change to `held` takes, and
     * `during` once the document waits for it; then lets the document go on.
     */
    async function whileDocumentWaits(
      held: string,
      document: string,
      during: () => Promise<unknown>,
      headers: Record<string, string> = {},
    ) {
      const holder = server.orm.em.fork();
      await holder.begin();
      try {
        await holder.execute(`select ${lockUser('?')}`, [held]);
        const waiting = () => count(`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
        const sent = server.gql(document, {}, headers);
        await eventually(async () => (await waiting()) > 0, 'the document waits for the user', 10_000);
        let done = false;
        const meanwhile = during().finally(() => (done = true));
        // The change sent meanwhile either went through, or waits too (for a user the document holds).
        await eventually(async () => done || (await waiting()) > 1, 'the change sent meanwhile is done or waits', 10_000);
        await holder.commit();
        const [answered] = await Promise.all([sent, meanwhile]);
        expect(answered.status).toBe(200);
      } catch (error) {
        await holder.rollback();
        throw error;
      }
    }

    it.each([
      ['', {}],
      [' (sent with an Idempotency-Key)', { 'idempotency-key': 'document' }],
    ])('never shows an order created after its user was deleted%s', async (_with, headers) => {
      for (let round = 0; round < 4; round++) {
        const [x, y, z] = await Promise.all([createUser(), createUser(), createUser()]);
        await whileDocumentWaits(
          z.id,
          `mutation { a: updateUser(id: "${x.id}", input: { name: "A" }) { id } b: updateUser(id: "${z.id}", input: { name: "B" }) { id } c: deleteUser(id: "${y.id}") }`,
          () => rest(server, 'POST', `/users/${y.id}/orders`, { json: { total: 100 } }),
          'idempotency-key' in headers ? { 'idempotency-key': `${headers['idempotency-key']}-${y.id}` } : {},
        );
        const feed = await server.orm.em
          .fork()
          .execute<{ type: string }[]>(
            `select type from events where data->'object'->>'id' = ? or data->'object'->>'userId' = ? order by xact, id`,
            [y.id, y.id],
          );
        const types = feed.map((event) => event.type);
        expect(types.indexOf('user.deleted'), types.join()).toBe(types.length - 1);
      }
    });

    it('records the user as stored last in the feed, with updatedAt rising', async () => {
      for (let round = 0; round < 4; round++) {
        const [x, y, z] = await Promise.all([createUser(), createUser(), createUser()]);
        await whileDocumentWaits(
          z.id,
          `mutation { a: updateUser(id: "${x.id}", input: { name: "A" }) { id } b: updateUser(id: "${z.id}", input: { name: "B" }) { id } c: updateUser(id: "${y.id}", input: { name: "From the document" }) { id } }`,
          () => patch(y.id, { name: 'From a patch' }),
        );
        const stored = (await rest<User>(server, 'GET', `/users/${y.id}`)).body;
        const updates = (await feedAbout(y.id)).filter((event) => event.type === 'user.updated').map((event) => event.data.object);
        expect(updates.at(-1)).toEqual(stored);
        const times = updates.map((object) => Date.parse(String(object.updatedAt)));
        expect(times).toEqual([...times].sort((a, b) => a - b));
      }
    });
  });

  it('never shows an order created after its user was deleted', async () => {
    for (let round = 0; round < 10; round++) {
      const user = await createUser();
      const orders = Array.from({ length: 40 }, () => rest(server, 'POST', `/users/${user.id}/orders`, { json: { total: 100 } }));
      const deleted = rest(server, 'DELETE', `/users/${user.id}`);
      await Promise.all([...orders, deleted]);
      const feed = await server.orm.em
        .fork()
        .execute<{ type: string }[]>(
          `select type from events where data->'object'->>'id' = ? or data->'object'->>'userId' = ? order by xact, id`,
          [user.id, user.id],
        );
      const types = feed.map((event) => event.type);
      expect(types.indexOf('user.deleted'), types.join()).toBe(types.length - 1);
    }
  });
});

describe('a crash around the commit', () => {
  /** Renames a user through a service that dies at `failpoint`; returns what the database holds after. */
  async function crashAt(failpoint: string) {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'portico-events-'));
    try {
      const user = await createUser('Before');
      const crashing = await startServiceProcess(server.databaseUrl, dataDir, failpoint);
      const sent = fetch(`${crashing.url}/users/${user.id}`, {
        method: 'PATCH',
        headers: { 'x-api-key': server.apiKey, 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify({ name: 'After' }),
      });
      await expect(sent).rejects.toThrow();
      expect(await crashing.exited).toBe('SIGKILL');
      const events = await eventsAbout(user.id);
      return {
        name: (await rest<User>(server, 'GET', `/users/${user.id}`)).body.name,
        events: events.map((event) => [event.type, event.data.object.name]),
      };
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  }

  it('before commit: neither the change nor its event exists', async () => {
    expect(await crashAt('crash-after-event')).toEqual({ name: 'Before', events: [['user.created', 'Before']] });
  });

  it('after commit (the response never sent): the change and its event both exist', async () => {
    expect(await crashAt('crash-after-event-commit')).toEqual({
      name: 'After',
      events: [
        ['user.created', 'Before'],
        ['user.updated', 'After'],
      ],
    });
  });
});

describe('the event feed', () => {
  async function page(query: string): Promise<EventList> {
    const response = await rest<EventList>(server, 'GET', `/events${query}`);
    expect(response.status, response.text).toBe(200);
    return response.body;
  }

  /** Every event after `cursor` the feed shows now, page by page. */
  async function drain(cursor: string | null, query = ''): Promise<{ events: Event[]; cursor: string | null }> {
    const events: Event[] = [];
    for (;;) {
      const body = await page(`?limit=7${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      events.push(...body.items);
      cursor = body.nextCursor;
      if (!body.hasMore) return { events, cursor };
    }
  }

  it('pages without gaps or repeats while events are being written concurrently', async () => {
    const start = await drain(null);
    const written = new Set<string>();
    const seen: Event[] = [];
    let cursor = start.cursor;
    let writing = true;
    const writers = Array.from({ length: 4 }, async () => {
      for (let i = 0; i < 15; i++) {
        const user = await createUser(`Writer ${i}`);
        written.add(user.id);
      }
    });
    const reader = (async () => {
      while (writing) {
        const next = await drain(cursor);
        seen.push(...next.events);
        cursor = next.cursor;
      }
    })();
    await Promise.all(writers);
    writing = false;
    await reader;
    // Once the writers are done, the feed catches up with every one of them.
    const deadline = Date.now() + 10_000;
    while ([...written].some((id) => !seen.some((event) => event.data.object.id === id)) && Date.now() < deadline) {
      const next = await drain(cursor);
      seen.push(...next.events);
      cursor = next.cursor;
    }
    const ids = seen.map((event) => event.id);
    expect(new Set(ids).size).toBe(ids.length);
    const createdHere = seen.filter((event) => written.has(String(event.data.object.id)));
    expect(createdHere.map((event) => event.type)).toEqual([...written].map(() => 'user.created'));
    expect(new Set(createdHere.map((event) => event.data.object.id))).toEqual(written);
  });

  it('never skips an event whose transaction began before a later one but committed after it', async () => {
    const { cursor } = await drain(null);
    const early = server.orm.em.fork();
    await early.begin();
    const earlyId = await recordEvent(early, 'user.created', { id: 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m', note: 'slow writer' });
    const later = await createUser();
    // The later event is committed, but the feed holds it back while the earlier transaction runs…
    const meanwhile = await drain(cursor);
    await early.commit();
    // …so that once that one commits, paging on from where the reader stood sees both, in order.
    const seen = [...meanwhile.events];
    const ours = () => seen.filter((event) => event.id === earlyId || event.data.object.id === later.id);
    let at = meanwhile.cursor ?? cursor;
    const deadline = Date.now() + 10_000;
    while (ours().length < 2) {
      if (Date.now() > deadline) throw new Error(`the feed did not show both events: ${JSON.stringify(seen)}`);
      const next = await drain(at);
      seen.push(...next.events);
      at = next.cursor ?? at;
    }
    expect(ours().map((event) => event.id)).toEqual([earlyId, match.stringMatching(/^evt_/)]);
  });

  it('lists events in the order of their transactions as numbers, not as text', async () => {
    // Transactions 9 and 10, written by hand: as text, "10" would come before "9" (and before every
    // later transaction's events, such as those of the tests above).
    const at = new Date();
    const [nine, ten] = [idAt('event', at, 1), idAt('event', at, 2)];
    for (const [id, xact] of [
      [ten, '10'],
      [nine, '9'],
    ] as const) {
      await server.orm.em
        .fork()
        .execute(`insert into events (id, type, xact, created_at, data) values (?, 'user.created', ?::xid8, ?, '{"object": {}}')`, [
          id,
          xact,
          at,
        ]);
    }
    for (const query of ['', '&type=USER_CREATED']) {
      const ids = (await drain(null, query)).events.map((event) => event.id);
      expect(ids.slice(0, 2), query).toEqual([nine, ten]);
    }
  });

  it('keeps its place at the end, filters by type, and answers the same on GraphQL', async () => {
    const { cursor } = await drain(null);
    expect(cursor).toEqual(match.any(String));
    const user = await createUser();
    const order = await rest<Order>(server, 'POST', `/users/${user.id}/orders`, { json: { total: 3 } });
    let after: Event[] = [];
    const deadline = Date.now() + 10_000;
    while (after.length < 2 && Date.now() < deadline) after = (await drain(cursor)).events;
    expect(after.map((event) => [event.type, event.data.object.id])).toEqual([
      ['user.created', user.id],
      ['order.created', order.body.id],
    ]);
    expect((await drain(cursor, '&type=ORDER_CREATED')).events.map((event) => event.data.object.id)).toEqual([order.body.id]);

    const graphql = await server.gql<{ events: { edges: { node: Event }[]; pageInfo: { hasNextPage: boolean } } }>(
      'query($after: String) { events(first: 5, after: $after) { edges { node { id type createdAt data } } pageInfo { hasNextPage } } }',
      { after: cursor },
    );
    expect(graphql.body.data!.events.edges.map((edge) => edge.node)).toEqual(after);
    const one = await server.gql<{ event: Event }>('query($id: ID!) { event(id: $id) { id type createdAt data } }', { id: after[1]!.id });
    expect(one.body.data!.event).toEqual(after[1]);
  });

  it('refuses a forged cursor and an unknown type, and needs the webhooks:manage scope', async () => {
    // Each error names the parameter as sent, as on every other list.
    expect(expectProblem(await rest(server, 'GET', '/events?cursor=AAAA'), 400, 'invalid-input', '/events').errors).toEqual([
      { field: 'cursor', message: match.stringContaining('not a valid cursor') },
    ]);
    expect(
      expectProblem(await rest(server, 'GET', '/events?limit=0'), 400, 'invalid-input', '/events').errors?.map((e) => e.field),
    ).toEqual(['limit']);
    expectProblem(await rest(server, 'GET', '/events?type=user.created'), 400, 'invalid-input', '/events');
    expectProblem(await rest(server, 'GET', '/events/evt_nope'), 400, 'invalid-input', '/events/evt_nope');
    expectProblem(
      await rest(server, 'GET', '/events/evt_01jd3x5kq3a0b4c8d2e6f0g4h8'),
      404,
      'not-found',
      '/events/evt_01jd3x5kq3a0b4c8d2e6f0g4h8',
    );
    const reader = await server.createKey({ name: 'Reader', scopes: ['users:read', 'orders:read'] });
    expectProblem(await rest(server, 'GET', '/events', { headers: { 'x-api-key': reader } }), 403, 'forbidden', '/events');
  });
});

describe('retention', () => {
  it('deletes events (and their deliveries) older than EVENT_RETENTION, in batches, and keeps the rest', async () => {
    const em = server.orm.em.fork();
    const old = idAt('event', new Date(Date.now() - 40 * 86_400_000), 0);
    await em.execute(
      `insert into events (id, type, created_at, data) values (?, 'user.created', now() - interval '40 days', '{"object":{}}')`,
      [old],
    );
    const recent = (await eventsAbout((await createUser()).id))[0]!.id;
    expect(await purgeOldEvents(server.orm.em.fork(), 30 * 86_400_000)).toBeGreaterThanOrEqual(1);
    expect(await count(`select 1 from events where id = ?`, [old])).toBe(0);
    expect(await count(`select 1 from events where id = ?`, [recent])).toBe(1);
  });
});
