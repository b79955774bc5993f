// Users: the domain rules for reading and changing them. Reads are plain SQL returning records; a
// creation is one statement with its event; updates go through the unit of work, deletions are one
// statement; each commits with its event.
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { User } from '../db/entities/index.ts';
import type { EntityManager } from '../db/orm.ts';
import { violatedConstraint } from '../db/failures.ts';
import { newId } from '../db/ids.ts';
import { prepared, runPrepared } from '../db/prepared.ts';
import {
  ORDER_TUPLE,
  USER_COLUMNS,
  orderOfTuple,
  userResource,
  type OrderRecord,
  type OrderTuple,
  type UserRecord,
} from '../db/records.ts';
import { statement, type Sql, type Statement } from '../db/sql.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import type { CursorCodec } from '../pagination/cursor.ts';
import { cursorOf, pageOf, positionAfter, type Keyset } from '../pagination/keyset.ts';
import { changeWithEvent, runChangeWithEvent } from '../webhooks/outbox.ts';
import { withEvent } from './changes.ts';
import { PAGE_SIZE } from './limits.ts';
import { NEWEST_FIRST } from './orders.ts';
import { InputCheck, requireId } from './validation.ts';

/** One item of a page; its cursor is made only when someone reads it. */
export interface Edge<T> {
  node: T;
  readonly cursor: string;
}

export interface Page<T> {
  items: Edge<T>[];
  hasNextPage: boolean;
}

/** A page of users and, when asked for, each one's newest orders fetched in the same statement. */
export interface UserPage extends Page<UserRecord> {
  latestOrders?: Map<string, OrderRecord[]>;
}

export interface UserFields {
  name: string;
  email: string;
}

/** The connection's order: creation time, then id. */
const BY_CREATION: Keyset<UserRecord> = {
  scope: 'users/created',
  keyType: 'time',
  key: (user) => user.createdAt,
  id: (user) => user.id,
};

/** Edges whose cursors are computed on first read: a query that selects none pays for none. */
export function edgesOf<T>(items: readonly T[], keyset: Keyset<T>, cursors: CursorCodec): Edge<T>[] {
  return items.map((node) => {
    let cursor: string | undefined;
    return {
      node,
      get cursor() {
        return (cursor ??= cursorOf(keyset, cursors, node));
      },
    };
  });
}

/** Each user's newest `limit` orders as a JSON array of order tuples, in the user's own row. */
const latestOrdersOf = (limit: string) =>
  `coalesce((select json_agg(${ORDER_TUPLE}) from (select id, total, status, created_at from orders where user_id = users.id ${NEWEST_FIRST} limit ${limit}) o), '[]'::json) as "latestOrders"`;

/**
 * The page statement for each combination of "after a cursor" and "with each user's orders"; its
 * parameters are the cursor's (created_at, id) when after, the row limit, then the orders' limit.
 */
function usersPage(after: boolean, withOrders: boolean): Statement {
  const limit = after ? 3 : 1;
  const columns = withOrders ? `${USER_COLUMNS}, ${latestOrdersOf(`$${limit + 1}`)}` : USER_COLUMNS;
  const where = after ? 'where (created_at, id) > ($1, $2) ' : '';
  const name = `users_${after ? 'after' : 'first'}${withOrders ? '_with_orders' : ''}`;
  return statement(name, `select ${columns} from users ${where}order by created_at, id limit $${limit}`);
}
const USERS_PAGE = {
  first: { plain: usersPage(false, false), withOrders: usersPage(false, true) },
  after: { plain: usersPage(true, false), withOrders: usersPage(true, true) },
};
const USER_BY_ID = statement('user_by_id', `select ${USER_COLUMNS} from users where id = $1`);
const USERS_BY_IDS = statement('users_by_ids', `select ${USER_COLUMNS} from users where id = any($1::text[])`);

/**
 * Users in creation order, a page at a time, with a keyset on the unique tuple (created_at, id);
 * with `ordersLimit`, each user's newest orders come in the same statement.
 */
export async function listUsers(
  sql: Sql,
  cursors: CursorCodec,
  args: { first?: number | null; after?: string | null },
  ordersLimit?: number,
): Promise<UserPage> {
  const check = new InputCheck();
  const first = check.pageSize('first', args.first, PAGE_SIZE);
  check.done();
  const after = args.after == null ? undefined : positionAfter(BY_CREATION, cursors, args.after, 'after');
  type Row = UserRecord & { latestOrders?: OrderTuple[] };
  const statements = after === undefined ? USERS_PAGE.first : USERS_PAGE.after;
  const rows = await sql.rows<Row>(ordersLimit === undefined ? statements.plain : statements.withOrders, [
    ...(after ?? []),
    first! + 1,
    ...(ordersLimit === undefined ? [] : [ordersLimit]),
  ]);
  const { items, hasMore } = pageOf(rows, first!);
  const page: UserPage = { items: edgesOf<UserRecord>(items, BY_CREATION, cursors), hasNextPage: hasMore };
  if (ordersLimit !== undefined) {
    page.latestOrders = new Map(items.map((row) => [row.id, (row.latestOrders ?? []).map((order) => orderOfTuple(row.id, order))]));
  }
  return page;
}

export async function findUser(sql: Sql, id: string): Promise<UserRecord | null> {
  const [row] = await sql.rows<UserRecord>(USER_BY_ID, [requireId('user', 'id', id)]);
  return row ?? null;
}

export async function findUsersByIds(sql: Sql, ids: readonly string[]): Promise<UserRecord[]> {
  return await sql.rows<UserRecord>(USERS_BY_IDS, [ids]);
}

async function mustFind(em: EntityManager, id: string): Promise<User> {
  const user = await em.findOne(User, { id });
  if (!user) throw new NotFoundError(`No user has the id ${id}.`);
  return user;
}

/** The unique index on lower(email). */
const EMAIL_UNIQUE = 'users_email_lower_key';

const emailTaken = (email: string) =>
  new ConflictError(`A user with the email ${email} already exists (emails are compared case-insensitively).`);

async function flushUnique(em: EntityManager, email: string): Promise<void> {
  try {
    await em.flush();
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) throw emailTaken(email);
    throw error;
  }
}

/** A user, its event and its deliveries in one statement. */
const CREATE_USER = changeWithEvent(
  'create_user',
  `created as (insert into users (id, name, email, created_at, updated_at) values ($1, $2, $3, $4, $4))`,
  4,
);

export async function createUser(em: EntityManager, input: UserFields): Promise<UserRecord> {
  const check = new InputCheck();
  const name = check.name('name', input.name);
  const email = check.email('email', input.email);
  check.done();
  const createdAt = new Date();
  const user: UserRecord = { id: newId('user'), name: name!, email: email!, createdAt, updatedAt: createdAt };
  try {
    await runChangeWithEvent(em, CREATE_USER, [user.id, user.name, user.email, createdAt], 'user.created', userResource(user));
  } catch (error) {
    if (violatedConstraint(error) === EMAIL_UNIQUE) throw emailTaken(user.email);
    throw error;
  }
  return user;
}

/** Applies `changes` to the stored user and records the change as `user.updated`. */
async function changeUser(em: EntityManager, id: string, changes: Partial<UserFields>): Promise<UserRecord> {
  return withEvent(
    em,
    'user.updated',
    async (tx) => {
      const user = await mustFind(tx, id);
      tx.assign(user, changes);
      await flushUnique(tx, changes.email ?? user.email);
      return user;
    },
    userResource,
  );
}

/** PUT semantics: every writable field is given and replaces the stored one. */
export async function replaceUser(em: EntityManager, id: string, input: UserFields): Promise<UserRecord> {
  const check = new InputCheck();
  check.id('user', 'id', id);
  const name = check.name('name', input.name);
  const email = check.email('email', input.email);
  check.done();
  return changeUser(em, id, { name: name!, email: email! });
}

/** PATCH semantics: absent fields keep their value; null is refused because no field is nullable. */
export async function updateUser(
  em: EntityManager,
  id: string,
  input: { name?: string | null; email?: string | null },
): Promise<UserRecord> {
  const check = new InputCheck();
  check.id('user', 'id', id);
  const changes: Partial<UserFields> = {};
  if (input.name !== undefined) changes.name = check.name('name', input.name);
  if (input.email !== undefined) changes.email = check.email('email', input.email);
  check.done();
  return changeUser(em, id, changes);
}

/** Deletes a user and returns them as they were (one statement, so no race with another delete). */
const DELETE_USER = prepared('delete_user', `delete from users where id = $1 returning ${USER_COLUMNS}`);

/** Deletes the user; their orders go with them (foreign key ON DELETE CASCADE). */
export async function deleteUser(em: EntityManager, id: string): Promise<string> {
  requireId('user', 'id', id);
  const deleted = await withEvent(
    em,
    'user.deleted',
    async (tx) => {
      const [user] = await runPrepared<UserRecord>(tx, DELETE_USER, [id]);
      if (!user) throw new NotFoundError(`No user has the id ${id}.`);
      return user;
    },
    userResource,
  );
  return deleted.id;
}
