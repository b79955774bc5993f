// Users and orders as plain values: what reads return, what GraphQL and REST serialise, and what
// writes hand back once their entities are flushed. One shape for every face.
import type { OrderStatus } from './entities/index.ts';

/**
 * An instant: epoch milliseconds as reads return it (float8 holds them exactly), or a Date as the
 * unit of work does. Reads leave it a number, so a query that does not select it makes no Date.
 */
export type Instant = Date | number;

export interface UserRecord {
  id: string;
  name: string;
  email: string;
  createdAt: Instant;
  updatedAt: Instant;
}

export interface OrderRecord {
  id: string;
  userId: string;
  total: number;
  status: OrderStatus;
  createdAt: Instant;
}

export function epochMs(instant: Instant): number {
  return typeof instant === 'number' ? instant : instant.getTime();
}

/** An instant as every face writes it: ISO 8601 in UTC with milliseconds. */
export function isoOf(instant: Instant): string {
  return (typeof instant === 'number' ? new Date(instant) : instant).toISOString();
}

/**
 * A user as REST's GET shows it, and as events carry it: the GraphQL `User` type's fields, in its
 * order (the tests hold the two to each other).
 */
export function userResource(user: UserRecord): Record<string, unknown> {
  return { id: user.id, name: user.name, email: user.email, createdAt: isoOf(user.createdAt), updatedAt: isoOf(user.updatedAt) };
}

/** An order as REST's GET shows it, and as events carry it. */
export function orderResource(order: OrderRecord): Record<string, unknown> {
  return { id: order.id, total: order.total, status: order.status, createdAt: isoOf(order.createdAt), userId: order.userId };
}

/**
 * A timestamptz(3) column as epoch milliseconds. `date_part` answers float8 seconds directly (where
 * `extract` computes in numeric, which cost PostgreSQL a quarter of the nested page's time); the
 * column holds whole milliseconds, so rounding the product gives them back exactly.
 */
export const epochMsOf = (column: string) => `round(date_part('epoch', ${column}) * 1000)`;

/** The columns of each as reads select them: named as the records' fields, so a row is a record. */
export const USER_COLUMNS = `id, name, email, ${epochMsOf('created_at')} as "createdAt", ${epochMsOf('updated_at')} as "updatedAt"`;
export const ORDER_COLUMNS = `id, user_id as "userId", total, status, ${epochMsOf('created_at')} as "createdAt"`;

/**
 * An order inside a user's row, as PostgreSQL builds it in JSON: a compact array (the user id is the
 * row's own), several times cheaper for PostgreSQL to build than an object per order.
 */
export const ORDER_TUPLE = `json_build_array(id, total, status, ${epochMsOf('created_at')})`;
export type OrderTuple = [id: string, total: number, status: OrderStatus, createdAt: number];

export function orderOfTuple(userId: string, [id, total, status, createdAt]: OrderTuple): OrderRecord {
  return { id, userId, total, status, createdAt };
}
