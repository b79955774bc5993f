// Orders: creation and the bounded, newest-first lists of a user's orders.
import { ForeignKeyConstraintViolationException } from '@mikro-orm/core';
import { Order, User } from '../db/entities/index.ts';
import type { EntityManager } from '../db/orm.ts';
import { NotFoundError } from '../errors.ts';
import type { CursorCodec } from '../pagination/cursor.ts';
import { cursorOf, pageOf, seekAfter, type Keyset } from '../pagination/keyset.ts';
import { PAGE_SIZE, ORDERS_BY_USER_MAX } from './limits.ts';
import { InputCheck, requireId } from './validation.ts';

export interface CreateOrderFields {
  userId: string;
  total: number;
  status?: string | null;
}

export async function createOrder(em: EntityManager, input: CreateOrderFields): Promise<Order> {
  const check = new InputCheck();
  const userId = check.id('user', 'userId', input.userId);
  const total = check.total('total', input.total);
  const status = check.status('status', input.status);
  check.done();
  const order = em.create(Order, { user: em.getReference(User, userId!), total: total!, status: status! });
  try {
    await em.flush();
  } catch (error) {
    // The foreign key is the existence check: one statement, and no race with a concurrent delete.
    if (error instanceof ForeignKeyConstraintViolationException) throw new NotFoundError(`No user has the id ${userId}.`);
    throw error;
  }
  return order;
}

/** The newest orders of one user; NOT_FOUND when the user does not exist (an empty list means "no orders"). */
export async function listOrdersOfUser(em: EntityManager, userId: string): Promise<Order[]> {
  requireId('user', 'userId', userId);
  const orders = await em.find(Order, { user: userId }, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: ORDERS_BY_USER_MAX });
  // Only an empty list leaves open whether the user exists; ask then, and only then.
  if (orders.length === 0 && (await em.count(User, { id: userId })) === 0) throw new NotFoundError(`No user has the id ${userId}.`);
  return orders;
}

export async function findOrder(em: EntityManager, id: string): Promise<Order | null> {
  return em.findOne(Order, { id: requireId('order', 'id', id) });
}

export interface OrderPage {
  items: Order[];
  nextCursor: string | null;
}

/**
 * One page of a user's orders, newest first, keyset on (created_at, id). The cursor is bound to the
 * user, so a cursor from another user's list is refused. NOT_FOUND when the user does not exist.
 */
export async function pageOrdersOfUser(
  em: EntityManager,
  cursors: CursorCodec,
  args: { userId: string; limit?: number | null; cursor?: string | null },
): Promise<OrderPage> {
  const check = new InputCheck();
  const userId = check.id('user', 'userId', args.userId);
  const limit = check.pageSize('limit', args.limit, PAGE_SIZE);
  check.done();
  const newestFirst: Keyset<Order> = {
    scope: `orders/user:${userId}`,
    column: 'o.created_at',
    idColumn: 'o.id',
    direction: 'desc',
    keyType: 'time',
    key: (order) => order.createdAt,
    id: (order) => order.id,
  };
  const qb = em
    .createQueryBuilder(Order, 'o')
    .select('*')
    .where({ user: userId })
    .orderBy({ createdAt: 'desc', id: 'desc' })
    .limit(limit! + 1);
  if (args.cursor != null) seekAfter(qb, newestFirst, cursors, args.cursor, 'cursor');
  const rows = await qb.getResultList();
  if (rows.length === 0 && (await em.count(User, { id: userId })) === 0) throw new NotFoundError(`No user has the id ${userId}.`);
  const { items, hasMore } = pageOf(rows, limit!);
  return { items, nextCursor: hasMore ? cursorOf(newestFirst, cursors, items.at(-1)!) : null };
}

/**
 * The newest `limit` orders of each of many users in one statement: a LATERAL subquery per user
 * walks the (user_id, created_at, id) index backwards, so the cost is one index probe per user.
 */
export async function latestOrdersOfUsers(em: EntityManager, userIds: readonly string[], limit: number): Promise<Map<string, Order[]>> {
  const rows = await em.execute<Record<string, unknown>[]>(
    `select o.* from jsonb_array_elements_text(?::jsonb) as u(id)
     cross join lateral (
       select * from orders where user_id = u.id collate "C" order by created_at desc, id desc limit ?
     ) o`,
    [JSON.stringify(userIds), limit],
  );
  const byUser = new Map<string, Order[]>(userIds.map((id) => [id, []]));
  for (const row of rows) byUser.get(row.user_id as string)?.push(em.map(Order, row));
  return byUser;
}
