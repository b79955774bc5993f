// Users: the domain rules for reading and changing them. Reads are plain SQL returning records; a
// creation is one statement with its event; an update or a deletion is one statement, then its
// event, in one transaction.
import type { EntityManager } from '../db/orm.ts';
import { violatedConstraint } from '../db/failures.ts';
import { newId } from '../db/ids.ts';
import { prepared, runPrepared, type StatementRunner } from '../db/prepared.ts';
import { ORDER_TUPLE, USER_COLUMNS, ordersOfTuples, userResource, type OrderRecord, type UserRecord } from '../db/records.ts';
import { statement, type Sql, type Statement } from '../db/sql.ts';
import { lockUser } from '../db/user-locks.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import type { CursorCodec } from '../pagination/cursor.ts';
import { edgesOf, type Page } from '../pagination/edges.ts';
import { pageOf, positionAfter, type Keyset } from '../pagination/keyset.ts';
import { changeWithEvent, runChangeWithEvent } from '../webhooks/outbox.ts';
import { Unchanged, withEvent } from './changes.ts';
import { PAGE_SIZE } from './limits.ts';
import { NEWEST_FIRST } from './orders.ts';
import { InputCheck, requireId } from './validation.ts';

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

/** Each user's newest `limit` orders as an array of order tuples, in the user's own row (as text: ordersOfTuples reads it). */
const latestOrdersOf = (limit: string) =>
  `array(select ${ORDER_TUPLE} from orders where user_id = users.id ${NEWEST_FIRST} limit ${limit})::text as "latestOrders"`;

/** What a page request asks for; each part changes the page statement. */
interface PageShape {
  after: boolean;
  before: boolean;
  /** `last`: the rows nearest `before` (or the end), fetched newest first and handed back in order. */
  backward: boolean;
  withOrders: boolean;
}

/**
 * The page statement for one shape, made on first use (16 shapes at most); its parameters are the
 * `after` cursor's (created_at, id) when given, the `before` cursor's, the row limit, then the
 * orders' limit.
 */
const pageStatements = new Map<string, Statement>();
function usersPage(shape: PageShape): Statement {
  const name = `users_page${shape.after ? '_after' : ''}${shape.before ? '_before' : ''}${shape.backward ? '_backward' : ''}${shape.withOrders ? '_with_orders' : ''}`;
  let page = pageStatements.get(name);
  if (!page) {
    let parameters = 0;
    const next = () => `$${++parameters}`;
    const conditions: string[] = [];
    if (shape.after) conditions.push(`(created_at, id) > (${next()}, ${next()})`);
    if (shape.before) conditions.push(`(created_at, id) < (${next()}, ${next()})`);
    const limit = next();
    const columns = shape.withOrders ? `${USER_COLUMNS}, ${latestOrdersOf(next())}` : USER_COLUMNS;
    const where = conditions.length > 0 ? `where ${conditions.join(' and ')} ` : '';
    const order = shape.backward ? 'order by created_at desc, id desc' : 'order by created_at, id';
    page = statement(name, `select ${columns} from users ${where}${order} limit ${limit}`);
    pageStatements.set(name, page);
  }
  return page;
}
/**
 * Whether any user sits at or before a position, and at or after one: rows outside a page's cursors.
 * The nearest such row is read from the index in its order. Statements are planned for any position
 * (generic-plans.ts), and an EXISTS, whose order PostgreSQL drops, was planned as a scan of the table
 * from its start: slow for a position near the far end.
 */
const USERS_THROUGH = statement(
  'users_exist_through',
  'select coalesce((select true from users where (created_at, id) <= ($1, $2) order by created_at desc, id desc limit 1), false) as "exists"',
);
const USERS_FROM = statement(
  'users_exist_from',
  'select coalesce((select true from users where (created_at, id) >= ($1, $2) order by created_at, id limit 1), false) as "exists"',
);
const USER_BY_ID = statement('user_by_id', `select ${USER_COLUMNS} from users where id = $1`);
const USERS_BY_IDS = statement('users_by_ids', `select ${USER_COLUMNS} from users where id = any($1::text[])`);

/** The Relay connection arguments: forwards with `first`/`after`, backwards with `last`/`before`. */
export interface UserPageArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

export interface UserPageOptions {
  /** Fetch each user's newest `ordersLimit` orders in the page's statement. */
  ordersLimit?: number;
  /**
   * Which of `hasPreviousPage`/`hasNextPage` the caller will read. Rows beyond a cursor (before
   * `after`, after `before`) take a statement of their own, run alongside the page, so only then.
   */
  flags?: { hasPreviousPage: boolean; hasNextPage: boolean };
}

async function anyUser(sql: Sql, query: Statement, position: readonly unknown[] | undefined): Promise<boolean> {
  if (!position) return false;
  const [row] = await sql.rows<{ exists: boolean }>(query, [...position]);
  return row?.exists ?? false;
}

/**
 * Users in creation order, a page at a time, with a keyset on the unique tuple (created_at, id),
 * following the Relay connection rules: `after` and `before` bound the list, then `first` takes
 * from its start or `last` from its end. `hasPreviousPage`/`hasNextPage` are exact: true when users
 * lie before/after the page (false when not asked for in `flags`). With `ordersLimit`, each user's
 * newest orders come in the same statement.
 */
export async function listUsers(sql: Sql, cursors: CursorCodec, args: UserPageArgs, options: UserPageOptions = {}): Promise<UserPage> {
  const check = new InputCheck();
  const backward = args.last != null;
  if (backward && args.first != null)
    check.fail('last', 'cannot be combined with first: page forwards with first and after, or backwards with last and before');
  const size = backward ? check.pageSize('last', args.last, PAGE_SIZE) : check.pageSize('first', args.first, PAGE_SIZE);
  check.done();
  const after = args.after == null ? undefined : positionAfter(BY_CREATION, cursors, args.after, 'after');
  const before = args.before == null ? undefined : positionAfter(BY_CREATION, cursors, args.before, 'before');
  const { ordersLimit, flags } = options;
  type Row = UserRecord & { latestOrders?: string };
  const query = usersPage({ after: after !== undefined, before: before !== undefined, backward, withOrders: ordersLimit !== undefined });
  // The page's own fetch sees one row past its far end when the flag of that end is read (that row,
  // and in a nested page its orders, are work for nothing otherwise); rows past a cursor need a probe each.
  const pastEnd = !flags || (backward ? flags.hasPreviousPage : flags.hasNextPage) ? 1 : 0;
  const values = [...(after ?? []), ...(before ?? []), size! + pastEnd, ...(ordersLimit === undefined ? [] : [ordersLimit])];
  const [rows, throughAfter, fromBefore] = await Promise.all([
    sql.rows<Row>(query, values),
    flags?.hasPreviousPage ? anyUser(sql, USERS_THROUGH, after) : false,
    flags?.hasNextPage ? anyUser(sql, USERS_FROM, before) : false,
  ]);
  const { items: fetched, hasMore } = pageOf(rows, size!);
  const items = backward ? fetched.reverse() : fetched;
  const page: UserPage = {
    items: edgesOf<UserRecord>(items, BY_CREATION, cursors),
    hasNextPage: (!backward && hasMore) || fromBefore,
    hasPreviousPage: (backward && hasMore) || throughAfter,
  };
  if (ordersLimit !== undefined) {
    page.latestOrders = new Map(items.map((row) => [row.id, ordersOfTuples(row.id, row.latestOrders ?? '{}')]));
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

/** The unique index on the email with its letter case folded in full by ICU (ß as ss). */
const EMAIL_UNIQUE = 'users_email_lower_key';

const emailTaken = (email: string) =>
  new ConflictError(`A user with the email ${email} already exists (emails are compared case-insensitively).`, [
    { field: 'email', message: 'is taken by another user' },
  ]);

/** A user, its event and its deliveries in one statement. */
const CREATE_USER = changeWithEvent(
  'create_user',
  `created as (insert into users (id, name, email, created_at, updated_at) values ($1, $2, $3, $4, $4))`,
  4,
);

export async function createUser(em: StatementRunner, input: UserFields): Promise<UserRecord> {
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

/**
 * The update, once the user's lock is held (db/user-locks.ts): each field given ($2, $3; null keeps
 * the stored one) replaces the stored one, and `updated_at` is the time it was made, after any wait
 * (and never before the time it replaces, whatever the clocks of the servers that wrote them). A user
 * left as it was is not written, and no row comes back; nor when the user is gone (deleted, perhaps
 * while this waited). Being one statement, it changes the row as it stands when it does so.
 */
const UPDATE_USER = prepared(
  'update_user',
  `update users set name = coalesce($2, name), email = coalesce($3, email), updated_at = greatest(clock_timestamp(), updated_at)
     from (select ${lockUser('$1')}) held
    where id = $1 and (name, email) is distinct from (coalesce($2, name), coalesce($3, email))
    returning ${USER_COLUMNS}`,
);
/** The read of one user, in the update's transaction. */
const USER_AS_STORED = prepared('user_as_stored', USER_BY_ID.text);

/** Applies `changes` to the stored user and records the change as `user.updated`, when it changes anything. */
async function changeUser(em: EntityManager, id: string, changes: Partial<UserFields>): Promise<UserRecord> {
  return withEvent(
    em,
    'user.updated',
    async (tx) => {
      let changed: UserRecord | undefined;
      try {
        [changed] = await runPrepared<UserRecord>(tx, UPDATE_USER, [id, changes.name ?? null, changes.email ?? null]);
      } catch (error) {
        if (violatedConstraint(error) === EMAIL_UNIQUE) throw emailTaken(changes.email!);
        throw error;
      }
      if (changed) return changed;
      const [stored] = await runPrepared<UserRecord>(tx, USER_AS_STORED, [id]);
      if (!stored) throw new NotFoundError(`No user has the id ${id}.`);
      return new Unchanged(stored);
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

/** Deletes a user and returns them as they were (one statement, so no race with another delete), once the user's lock is held. */
const DELETE_USER = prepared(
  'delete_user',
  `delete from users using (select ${lockUser('$1')}) held where id = $1 returning ${USER_COLUMNS}`,
);

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
