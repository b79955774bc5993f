// Orders: creation (one statement with its event) and the bounded, newest-first lists of a user's
// orders (plain SQL returning records).
import { violatedConstraint } from '../db/failures.ts';
import { newId } from '../db/ids.ts';
import type { StatementRunner } from '../db/prepared.ts';
import { ORDER_COLUMNS, orderResource, type OrderRecord } from '../db/records.ts';
import { statement, type Sql } from '../db/sql.ts';
import { lockUser, lockUserShared } from '../db/user-locks.ts';
import { NotFoundError } from '../errors.ts';
import type { CursorCodec } from '../pagination/cursor.ts';
import { cursorOf, pageOf, positionAfter, type Keyset } from '../pagination/keyset.ts';
import { changeWithEvent, runChangeWithEvent } from '../webhooks/outbox.ts';
import { PAGE_SIZE, ORDERS_BY_USER_MAX } from './limits.ts';
import { InputCheck, requireId } from './validation.ts';

export interface CreateOrderFields {
  userId: string;
  total: number;
  status?: string | null;
}

const INSERT_ORDER = `created as (insert into orders (id, user_id, total, status, created_at) values ((select $1::text from held), $2, $3, $4, $5))`;

/**
 * The hot write path: the order, its event and its deliveries in one statement (one round trip, atomic
 * by itself), once the user's shared lock is held (so not while the user is being deleted).
 */
const CREATE_ORDER = changeWithEvent('create_order', INSERT_ORDER, 5, lockUserShared('$2'));

/**
 * The same among other writes of one transaction (a document with several mutations), which may
 * update or delete the user next: holding the lock shared, two such documents each waited to hold it
 * alone, a deadlock. Held alone from the start, the second waits for the first to commit.
 */
const CREATE_ORDER_AMONG_OTHERS = changeWithEvent('create_order_among_others', INSERT_ORDER, 5, lockUser('$2'));

export async function createOrder(
  em: StatementRunner,
  input: CreateOrderFields,
  { amongOtherWrites = false }: { amongOtherWrites?: boolean } = {},
): Promise<OrderRecord> {
  const check = new InputCheck();
  const userId = check.id('user', 'userId', input.userId);
  const total = check.total('total', input.total);
  const status = check.status('status', input.status);
  check.done();
  const order: OrderRecord = { id: newId('order'), userId: userId!, total: total!, status: status!, createdAt: new Date() };
  try {
    await runChangeWithEvent(
      em,
      amongOtherWrites ? CREATE_ORDER_AMONG_OTHERS : CREATE_ORDER,
      [order.id, order.userId, order.total, order.status, order.createdAt],
      'order.created',
      orderResource(order),
    );
  } catch (error) {
    // The foreign key is the existence check: no statement more, and no race with a concurrent delete.
    if (violatedConstraint(error) === 'orders_user_id_foreign') throw new NotFoundError(`No user has the id ${userId}.`);
    throw error;
  }
  return order;
}

/** A user's orders, newest first; the (user_id, created_at, id) index serves it backwards. */
export const NEWEST_FIRST = `order by created_at desc, id desc`;
const ORDERS_OF_USER = statement('orders_of_user', `select ${ORDER_COLUMNS} from orders where user_id = $1 ${NEWEST_FIRST} limit $2`);
const ORDERS_OF_USER_AFTER = statement(
  'orders_of_user_after',
  `select ${ORDER_COLUMNS} from orders where user_id = $1 and (created_at, id) < ($2, $3) ${NEWEST_FIRST} limit $4`,
);
const ORDER_BY_ID = statement('order_by_id', `select ${ORDER_COLUMNS} from orders where id = $1`);
const ORDERS_BY_IDS = statement('orders_by_ids', `select ${ORDER_COLUMNS} from orders where id = any($1::text[])`);
const USER_EXISTS = statement('user_exists', 'select 1 from users where id = $1');
/**
 * The newest `limit` orders of each of many users in one statement: a LATERAL subquery per user
 * walks the (user_id, created_at, id) index backwards, so the cost is one index probe per user.
 */
const LATEST_ORDERS_OF_USERS = statement(
  'latest_orders_of_users',
  `select o.* from unnest($1::text[]) as u(id)
   cross join lateral (select ${ORDER_COLUMNS} from orders where user_id = u.id ${NEWEST_FIRST} limit $2) o`,
);

async function mustExist(sql: Sql, userId: string): Promise<void> {
  if ((await sql.rows(USER_EXISTS, [userId])).length === 0) throw new NotFoundError(`No user has the id ${userId}.`);
}

/** The newest orders of one user; NOT_FOUND when the user does not exist (an empty list means "no orders"). */
export async function listOrdersOfUser(sql: Sql, userId: string): Promise<OrderRecord[]> {
  requireId('user', 'userId', userId);
  const orders = await sql.rows<OrderRecord>(ORDERS_OF_USER, [userId, ORDERS_BY_USER_MAX]);
  // Only an empty list leaves open whether the user exists; ask then, and only then.
  if (orders.length === 0) await mustExist(sql, userId);
  return orders;
}

export async function findOrder(sql: Sql, id: string): Promise<OrderRecord | null> {
  const [row] = await sql.rows<OrderRecord>(ORDER_BY_ID, [requireId('order', 'id', id)]);
  return row ?? null;
}

export async function findOrdersByIds(sql: Sql, ids: readonly string[]): Promise<OrderRecord[]> {
  return await sql.rows<OrderRecord>(ORDERS_BY_IDS, [ids]);
}

export interface OrderPage {
  items: OrderRecord[];
  nextCursor: string | null;
}

/**
 * One page of a user's orders, newest first, keyset on (created_at, id). The cursor is bound to the
 * user, so a cursor from another user's list is refused. NOT_FOUND when the user does not exist.
 */
export async function pageOrdersOfUser(
  sql: Sql,
  cursors: CursorCodec,
  args: { userId: string; limit?: number | null; cursor?: string | null },
): Promise<OrderPage> {
  const check = new InputCheck();
  const userId = check.id('user', 'userId', args.userId);
  const limit = check.pageSize('limit', args.limit, PAGE_SIZE);
  check.done();
  const newestFirst: Keyset<OrderRecord> = {
    scope: `orders/user:${userId}`,
    keyType: 'time',
    key: (order) => order.createdAt,
    id: (order) => order.id,
  };
  const rows =
    args.cursor == null
      ? await sql.rows<OrderRecord>(ORDERS_OF_USER, [userId, limit! + 1])
      : await sql.rows<OrderRecord>(ORDERS_OF_USER_AFTER, [
          userId,
          ...positionAfter(newestFirst, cursors, args.cursor, 'cursor'),
          limit! + 1,
        ]);
  if (rows.length === 0) await mustExist(sql, userId!);
  const { items, hasMore } = pageOf(rows, limit!);
  return { items, nextCursor: hasMore ? cursorOf(newestFirst, cursors, items.at(-1)!) : null };
}

/** The newest `limit` orders of each user, by user id (every id present, with [] for none). */
export async function latestOrdersOfUsers(sql: Sql, userIds: readonly string[], limit: number): Promise<Map<string, OrderRecord[]>> {
  const rows = await sql.rows<OrderRecord>(LATEST_ORDERS_OF_USERS, [userIds, limit]);
  const byUser = new Map<string, OrderRecord[]>(userIds.map((id) => [id, []]));
  for (const order of rows) byUser.get(order.userId)?.push(order);
  return byUser;
}
