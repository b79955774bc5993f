import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, openOrm, type MikroORM } from '../../src/db/orm.ts';
import { createLogger } from '../../src/log.ts';
import { createEmptyDatabase } from '../support/database.ts';
import { match } from '../support/match.ts';
import { captureLogs } from '../support/captured-logs.ts';

let orm: MikroORM;
let drop: () => Promise<void>;
const logger = createLogger('silent');

beforeAll(async () => {
  const database = await createEmptyDatabase();
  drop = database.drop;
  orm = await openOrm(database.url, { poolMax: 2, logger });
  await migrate(orm, logger, database.url);
});
afterAll(async () => {
  await orm.close();
  await drop();
});

describe('migrations', () => {
  it('build exactly the schema the entities describe', async () => {
    expect((await orm.schema.getUpdateSchemaSQL({ wrap: false })).trim()).toBe('');
  });

  it('are idempotent: a second run applies nothing', async () => {
    expect(await orm.migrator.up()).toEqual([]);
  });

  it('create an index for every access path', async () => {
    const rows = await orm.em
      .fork()
      .execute<{ indexdef: string }[]>("select indexdef from pg_indexes where schemaname = 'public' and tablename in ('users', 'orders')");
    const definitions = rows.map((r) => r.indexdef.replace(/^.* USING btree /, ''));
    expect(definitions).toEqual(
      match.arrayContaining([
        '(id)',
        '(created_at, id)',
        '(NORMALIZE(lower(upper(lower((email COLLATE "und-x-icu")))), NFC))',
        '(user_id, created_at, id)',
      ]),
    );
  });

  it('enforce the data rules in the database too', async () => {
    const em = orm.em.fork();
    await expect(
      em.execute(`insert into users (id, name, email, created_at, updated_at) values ('usr_x', '', 'a@b.c', now(), now())`),
    ).rejects.toThrow(/name_length/);
    await em.execute(`insert into users (id, name, email, created_at, updated_at) values ('usr_y', 'Y', 'Case@Example.com', now(), now())`);
    await expect(
      em.execute(`insert into users (id, name, email, created_at, updated_at) values ('usr_z', 'Z', 'case@example.COM', now(), now())`),
    ).rejects.toThrow(/email_lower/);
    await expect(
      em.execute(`insert into orders (id, user_id, total, status, created_at) values ('ord_1', 'usr_y', -1, 'paid', now())`),
    ).rejects.toThrow(/total_check/);
    await expect(
      em.execute(`insert into orders (id, user_id, total, status, created_at) values ('ord_2', 'usr_y', 1, 'lost', now())`),
    ).rejects.toThrow(/status_check/);
    await em.execute(`insert into orders (id, user_id, total, created_at) values ('ord_3', 'usr_y', 1, now())`);
    expect(await em.execute(`select status from orders where id = 'ord_3'`)).toEqual([{ status: 'pending' }]);
    await em.execute(`delete from users where id = 'usr_y'`);
    expect(await em.execute(`select count(*)::int as n from orders`)).toEqual([{ n: 0 }]);
  });
});

describe('the NFC email migration', () => {
  it('normalises stored emails, leaving a spelling that would collide with another account as it was', async () => {
    const database = await createEmptyDatabase();
    const early = await openOrm(database.url, { poolMax: 2, logger });
    try {
      await early.migrator.up({ to: 'Migration20261122030000_api_key_usage' });
      const em = early.em.fork();
      const nfd = 'cafe\u0301@example.com';
      const insert = (id: string, email: string) =>
        em.execute(`insert into users (id, name, email, created_at, updated_at) values (?, 'U', ?, now(), now())`, [id, email]);
      await insert('usr_a', nfd);
      await insert('usr_b', 'Zoe\u0308@example.com');
      await insert('usr_c', 'zoë@example.com');
      await early.migrator.up();
      const rows = await em.execute<{ id: string; email: string }[]>('select id, email from users order by id');
      expect(rows).toEqual([
        { id: 'usr_a', email: 'caf\u00e9@example.com' },
        // Its NFC form equals usr_c's email ignoring case: kept, so the migration never fails on data.
        { id: 'usr_b', email: 'Zoe\u0308@example.com' },
        { id: 'usr_c', email: 'zoë@example.com' },
      ]);
    } finally {
      await early.close();
      await database.drop();
    }
  });
});

/** A new database migrated up to `to` (included), with ways to add users and read the email index. */
async function migratedTo(to: string) {
  const database = await createEmptyDatabase();
  const orm = await openOrm(database.url, { poolMax: 2, logger });
  await orm.migrator.up({ to });
  const em = orm.em.fork();
  const insert = (id: string, email: string) =>
    em.execute(`insert into users (id, name, email, created_at, updated_at) values (?, 'U', ?, now(), now())`, [id, email]);
  const index = async () =>
    (await em.execute<{ indexdef: string }[]>("select indexdef from pg_indexes where indexname = 'users_email_lower_key'"))[0]!.indexdef;
  return { orm, url: database.url, insert, index, close: async () => (await orm.close(), await database.drop()) };
}

describe('the Unicode letter case migration', () => {
  const early = () => migratedTo('Migration20261127010000_deliveries_notified_after_commit');

  it('folds letter case beyond A to Z in the unique index, so two spellings of one address are refused', async () => {
    const { orm, insert, index, close } = await early();
    try {
      await insert('usr_a', 'åsa@example.com');
      await orm.migrator.up();
      expect(await index()).toContain('und-x-icu');
      await expect(insert('usr_b', 'ÅSA@example.com')).rejects.toThrow(/users_email_lower_key/);
    } finally {
      await close();
    }
  });

  it('keeps the index it had, and every account, where accounts would collide under the new rule, and says so in the service log', async () => {
    const { orm, url, insert, index, close } = await early();
    try {
      // As on a database made with the C locale, whatever this one's is: lower() folds A to Z only.
      await orm.em.fork().execute('drop index users_email_lower_key');
      await orm.em.fork().execute('create unique index users_email_lower_key on users (lower(email collate "C"))');
      await insert('usr_a', 'åsa@example.com');
      await insert('usr_b', 'ÅSA@example.com');
      const { logger: captured, logs } = captureLogs('info');
      await migrate(orm, captured, url);
      expect(await index()).not.toContain('und-x-icu');
      // The migration's RAISE WARNING reaches the operator, not only PostgreSQL's own log.
      // (The later rules of the same kind keep theirs too, and say so each.)
      const warned = logs.filter((line) => line.level === 40 && String(line.msg).startsWith('PostgreSQL, while migrating:'));
      expect(warned.length).toBeGreaterThan(0);
      for (const line of warned)
        expect(line).toMatchObject({ msg: match.stringMatching(/belongs? to more than one user/), severity: 'WARNING' });
      const rows = await orm.em.fork().execute<{ id: string }[]>('select id from users order by id');
      expect(rows.map((row) => row.id)).toEqual(['usr_a', 'usr_b']);
    } finally {
      await close();
    }
  });
});

describe('the case folding migration', () => {
  const early = () => migratedTo('Migration20261128020000_users_name_collation');
  const CASE_FOLDING = 'Migration20261128030000_users_email_case_folding';

  it('folds letter case in full, so spellings that lowering alone keeps apart are one address', async () => {
    const { orm, insert, close } = await early();
    try {
      const pairs = [
        ['straße@example.com', 'STRASSE@example.com'],
        ['STRAẞE@example.de', 'strasse@example.de'],
        ['ſam@example.com', 'SAM@example.com'],
        ['µ@example.com', 'μ@example.com'],
        ['οδοσ@example.gr', 'ΟΔΟΣ@example.gr'],
      ];
      // Before: two accounts each.
      for (const [i, [first, second]] of pairs.entries()) {
        await insert(`usr_${i}a`, first!);
        await insert(`usr_${i}b`, second!);
      }
      await orm.em.fork().execute(`delete from users where id like '%b'`);
      await orm.migrator.up({ to: CASE_FOLDING });
      for (const [i, [, second]] of pairs.entries()) {
        await expect(insert(`usr_${i}c`, second!), second).rejects.toThrow(/users_email_lower_key/);
      }
      // Letters that only look alike are not folded together.
      await insert('usr_dotless', 'ıx@example.com');
      await insert('usr_dotted', 'İx@example.com');
    } finally {
      await close();
    }
  });

  it('keeps the index it had, and every account, where accounts would collide under the new rule; down undoes up', async () => {
    const { orm, insert, index, close } = await early();
    try {
      await insert('usr_a', 'straße@example.com');
      await insert('usr_b', 'STRASSE@example.com');
      const before = await index();
      await orm.migrator.up({ to: CASE_FOLDING });
      expect(await index()).toBe(before);
      const rows = await orm.em.fork().execute<{ id: string }[]>('select id from users order by id');
      expect(rows.map((row) => row.id)).toEqual(['usr_a', 'usr_b']);
      // Resolved by the operator, then migrated again.
      await orm.em.fork().execute(`update users set email = 'strasse.b@example.com' where id = 'usr_b'`);
      await orm.migrator.down();
      expect(await index()).toBe(before);
      await orm.migrator.up({ to: CASE_FOLDING });
      expect(await index()).toContain('upper(');
      await orm.migrator.down();
      expect(await index()).toBe(before);
    } finally {
      await close();
    }
  });
});

describe('the migration that puts folded emails in NFC', () => {
  const early = () => migratedTo('Migration20261128030000_users_email_case_folding');
  const NFC = 'Migration20261128040000_users_email_fold_normalized';

  it('makes ΐ and Ϊ́ one address; keeps the index it had where accounts would collide; down undoes up', async () => {
    const { orm, insert, index, close } = await early();
    try {
      await insert('usr_a', '\u0390@example.gr');
      await insert('usr_b', '\u03aa\u0301@example.gr');
      const before = await index();
      await orm.migrator.up({ to: NFC });
      expect(await index()).toBe(before);
      // Resolved by the operator, then migrated again.
      await orm.em.fork().execute(`delete from users where id = 'usr_b'`);
      await orm.migrator.down();
      await orm.migrator.up({ to: NFC });
      expect(await index()).toMatch(/normalize\(/i);
      await expect(insert('usr_c', '\u03aa\u0301@example.gr')).rejects.toThrow(/users_email_lower_key/);
      await orm.migrator.down();
      expect(await index()).toBe(before);
    } finally {
      await close();
    }
  });
});

describe('migrations started by several processes at once', () => {
  it('are applied once, by one of them, while the others wait and then find nothing to do', async () => {
    const database = await createEmptyDatabase();
    const orms = await Promise.all([1, 2, 3].map(() => openOrm(database.url, { poolMax: 2, logger })));
    try {
      // As instances of a deployment start together on a new database (or an upgrade's first start).
      const applied = (await Promise.all(orms.map((each) => migrate(each, logger, database.url)))).flat();
      const all = (await orms[0]!.migrator.getExecuted()).map((migration) => migration.name);
      expect(all.length).toBeGreaterThan(10);
      expect(applied.toSorted()).toEqual(all.toSorted());
      expect((await orms[1]!.schema.getUpdateSchemaSQL({ wrap: false })).trim()).toBe('');
    } finally {
      await Promise.all(orms.map((each) => each.close()));
      await database.drop();
    }
  });
});
