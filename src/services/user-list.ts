// Users listed in the three paging styles the REST collection offers (the Relay connection lives in
// users.ts): numbered pages, keyset after an id, and cursors over a chosen sort.
import { USER_COLUMNS, type UserRecord } from '../db/records.ts';
import { statement, type Sql, type Statement } from '../db/sql.ts';
import type { CursorCodec } from '../pagination/cursor.ts';
import { cursorOf, pageOf, positionAfter, type Keyset } from '../pagination/keyset.ts';
import { PAGE_SIZE, PAGE_NUMBER_MAX } from './limits.ts';
import { InputCheck } from './validation.ts';

export const USER_SORTS = ['createdAt', '-createdAt', 'name', '-name'] as const;
export type UserSort = (typeof USER_SORTS)[number];

export interface UserListArgs {
  page?: number | null;
  limit?: number | null;
  afterId?: string | null;
  cursor?: string | null;
  sort?: string | null;
}

export type UserListPagination =
  | { style: 'offset'; page: number; limit: number; total: number; totalPages: number }
  | { style: 'cursor'; nextCursor: string | null; hasMore: boolean };

export interface UserList {
  data: UserRecord[];
  pagination: UserListPagination;
}

/** Each sort's SQL and cursor scope; the id breaks ties in the sort's direction. */
interface SortPlan {
  keyset: Keyset<UserRecord>;
  first: Statement;
  after: Statement;
  /** A numbered page. */
  page: Statement;
}

function sortPlan(sort: UserSort): SortPlan {
  const column = sort.endsWith('name') ? 'name' : 'created_at';
  const direction = sort.startsWith('-') ? 'desc' : 'asc';
  const order = `order by ${column} ${direction}, id ${direction}`;
  const name = `users_by_${column}_${direction}`;
  return {
    keyset: {
      // A place in the order by name is one in ICU's collation (since migration 20261128020000):
      // cursors minted in the order by bytes before it are of another list, and refused.
      scope: column === 'name' ? `users/sort:${sort}@icu` : `users/sort:${sort}`,
      keyType: column === 'name' ? 'text' : 'time',
      key: (user) => (column === 'name' ? user.name : user.createdAt),
      id: (user) => user.id,
    },
    first: statement(`${name}_first`, `select ${USER_COLUMNS} from users ${order} limit $1`),
    after: statement(
      `${name}_after`,
      `select ${USER_COLUMNS} from users where (${column}, id) ${direction === 'asc' ? '>' : '<'} ($1, $2) ${order} limit $3`,
    ),
    page: statement(`${name}_page`, `select ${USER_COLUMNS} from users ${order} limit $1 offset $2`),
  };
}

const SORTS = new Map(USER_SORTS.map((sort) => [sort, sortPlan(sort)]));
const AFTER_ID = statement('users_after_id', `select ${USER_COLUMNS} from users where id > $1 order by id limit $2`);
const COUNT = statement('users_count', 'select count(*)::int as total from users');

export async function listUserCollection(sql: Sql, cursors: CursorCodec, args: UserListArgs): Promise<UserList> {
  const check = new InputCheck();
  const limit = check.pageSize('limit', args.limit, PAGE_SIZE);
  const styles = (['page', 'afterId', 'cursor'] as const).filter((name) => args[name] != null);
  if (styles.length > 1) check.fail(styles[1]!, `cannot be combined with ${styles[0]}; choose one paging style`);
  if (args.page != null && (!Number.isInteger(args.page) || args.page < 1 || args.page > PAGE_NUMBER_MAX)) {
    check.fail('page', `must be a whole number from 1 to ${PAGE_NUMBER_MAX}; use cursors to go further`);
  }
  const sort = check.oneOf('sort', USER_SORTS, args.sort ?? 'createdAt');
  if (args.afterId != null) {
    check.id('user', 'afterId', args.afterId);
    if (args.sort != null) check.fail('sort', 'cannot be combined with afterId, which always orders by id');
  }
  check.done();

  const plan = SORTS.get(sort!)!;
  if (args.page != null) return offsetPage(sql, plan, args.page, limit!);
  if (args.afterId != null) return afterIdPage(sql, args.afterId, limit!);
  return cursorPage(sql, cursors, plan, args.cursor ?? null, limit!);
}

async function offsetPage(sql: Sql, plan: SortPlan, page: number, limit: number): Promise<UserList> {
  // The page and the total, side by side on two connections; the total is counted once for every
  // request that asks while it is being counted (Sql.sharedRows).
  const [rows, [count]] = await Promise.all([
    sql.rows<UserRecord>(plan.page, [limit, (page - 1) * limit]),
    sql.sharedRows<{ total: number }>(COUNT),
  ]);
  const total = count!.total;
  return { data: rows, pagination: { style: 'offset', page, limit, total, totalPages: Math.ceil(total / limit) } };
}

/** Keyset on the id alone; ids sort in creation order. `nextCursor` is the id to pass as the next `after_id`. */
async function afterIdPage(sql: Sql, afterId: string, limit: number): Promise<UserList> {
  const { items, hasMore } = pageOf(await sql.rows<UserRecord>(AFTER_ID, [afterId, limit + 1]), limit);
  return { data: items, pagination: { style: 'cursor', nextCursor: hasMore ? items.at(-1)!.id : null, hasMore } };
}

/** Keyset on the unique tuple (sort column, id), both in the sort's direction; the cursor is bound to its sort. */
async function cursorPage(sql: Sql, cursors: CursorCodec, plan: SortPlan, cursor: string | null, limit: number): Promise<UserList> {
  const rows =
    cursor === null
      ? await sql.rows<UserRecord>(plan.first, [limit + 1])
      : await sql.rows<UserRecord>(plan.after, [...positionAfter(plan.keyset, cursors, cursor, 'cursor'), limit + 1]);
  const { items, hasMore } = pageOf(rows, limit);
  return {
    data: items,
    pagination: { style: 'cursor', nextCursor: hasMore ? cursorOf(plan.keyset, cursors, items.at(-1)!) : null, hasMore },
  };
}
