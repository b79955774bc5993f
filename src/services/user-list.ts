// Users listed in the three paging styles the REST collection offers (the Relay connection lives in
// users.ts): numbered pages, keyset after an id, and opaque cursors over a chosen sort.
import { User } from '../db/entities/index.ts';
import type { EntityManager } from '../db/orm.ts';
import type { CursorCodec } from '../pagination/cursor.ts';
import { cursorOf, pageOf, seekAfter, type Keyset } from '../pagination/keyset.ts';
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
  data: User[];
  pagination: UserListPagination;
}

export async function listUserCollection(em: EntityManager, cursors: CursorCodec, args: UserListArgs): Promise<UserList> {
  const check = new InputCheck();
  const limit = check.pageSize('limit', args.limit, PAGE_SIZE);
  const styles = (['page', 'afterId', 'cursor'] as const).filter((name) => args[name] != null);
  if (styles.length > 1) check.fail(styles[1]!, `cannot be combined with ${styles[0]}; choose one paging style`);
  if (args.page != null && (!Number.isInteger(args.page) || args.page < 1 || args.page > PAGE_NUMBER_MAX)) {
    check.fail('page', `must be a whole number from 1 to ${PAGE_NUMBER_MAX}; use cursors to go further`);
  }
  if (args.sort != null && !(USER_SORTS as readonly string[]).includes(args.sort))
    check.fail('sort', `must be one of ${USER_SORTS.join(', ')}`);
  if (args.afterId != null) {
    check.id('user', 'afterId', args.afterId);
    if (args.sort != null) check.fail('sort', 'cannot be combined with afterId, which always orders by id');
  }
  check.done();

  const sort = (args.sort ?? 'createdAt') as UserSort;
  if (args.page != null) return offsetPage(em, sort, args.page, limit!);
  if (args.afterId != null) return afterIdPage(em, args.afterId, limit!);
  return cursorPage(em, cursors, sort, args.cursor ?? null, limit!);
}

function sortOrder(sort: UserSort): { property: 'createdAt' | 'name'; direction: 'asc' | 'desc' } {
  return { property: sort.replace('-', '') as 'createdAt' | 'name', direction: sort.startsWith('-') ? 'desc' : 'asc' };
}

async function offsetPage(em: EntityManager, sort: UserSort, page: number, limit: number): Promise<UserList> {
  const { property, direction } = sortOrder(sort);
  const [data, total] = await em.findAndCount(
    User,
    {},
    { orderBy: { [property]: direction, id: direction }, limit, offset: (page - 1) * limit },
  );
  return { data, pagination: { style: 'offset', page, limit, total, totalPages: Math.ceil(total / limit) } };
}

/** Keyset on the id alone; ids sort in creation order. `nextCursor` is the id to pass as the next `after_id`. */
async function afterIdPage(em: EntityManager, afterId: string, limit: number): Promise<UserList> {
  const { items, hasMore } = pageOf(await em.find(User, { id: { $gt: afterId } }, { orderBy: { id: 'asc' }, limit: limit + 1 }), limit);
  return { data: items, pagination: { style: 'cursor', nextCursor: hasMore ? items.at(-1)!.id : null, hasMore } };
}

/** Keyset on the unique tuple (sort column, id), both in the sort's direction; the cursor is bound to its sort. */
async function cursorPage(
  em: EntityManager,
  cursors: CursorCodec,
  sort: UserSort,
  cursor: string | null,
  limit: number,
): Promise<UserList> {
  const { property, direction } = sortOrder(sort);
  const keyset: Keyset<User> = {
    scope: `users/sort:${sort}`,
    column: property === 'name' ? 'u.name' : 'u.created_at',
    idColumn: 'u.id',
    direction,
    keyType: property === 'name' ? 'text' : 'time',
    key: (user) => user[property],
    id: (user) => user.id,
  };
  const qb = em
    .createQueryBuilder(User, 'u')
    .select('*')
    .orderBy({ [property]: direction, id: direction })
    .limit(limit + 1);
  if (cursor !== null) seekAfter(qb, keyset, cursors, cursor, 'cursor');
  const { items, hasMore } = pageOf(await qb.getResultList(), limit);
  return { data: items, pagination: { style: 'cursor', nextCursor: hasMore ? cursorOf(keyset, cursors, items.at(-1)!) : null, hasMore } };
}
