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

const ms = (column: string) => `(extract(epoch from ${column}) * 1000)::float8`;

/** The columns of each as reads select them: named as the records' fields, so a row is a record. */
export const USER_COLUMNS = `id, name, email, ${ms('created_at')} as "createdAt", ${ms('updated_at')} as "updatedAt"`;
export const ORDER_COLUMNS = `id, user_id as "userId", total, status, ${ms('created_at')} as "createdAt"`;
