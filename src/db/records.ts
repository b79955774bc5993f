// Users and orders as plain values: what reads return, what GraphQL and REST serialise, and what
// writes hand back once their entities are flushed. One shape for every face.
import type { OrderStatus } from './entities/index.ts';

export interface UserRecord {
  id: string;
  name: string;
  email: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface OrderRecord {
  id: string;
  userId: string;
  total: number;
  status: OrderStatus;
  createdAt: Date;
}

/**
 * The columns of each, as reads select them: times come as epoch milliseconds (float8 holds a
 * millisecond timestamp exactly), which is cheaper to turn into a Date than PostgreSQL's text.
 */
const ms = (column: string) => `(extract(epoch from ${column}) * 1000)::float8`;
export const USER_COLUMNS = `id, name, email, ${ms('created_at')} as created_ms, ${ms('updated_at')} as updated_ms`;
export const ORDER_COLUMNS = `id, user_id, total, status, ${ms('created_at')} as created_ms`;

export interface UserRow {
  id: string;
  name: string;
  email: string;
  created_ms: number;
  updated_ms: number;
}

export interface OrderRow {
  id: string;
  user_id: string;
  total: number;
  status: OrderStatus;
  created_ms: number;
}

export function userOf(row: UserRow): UserRecord {
  return { id: row.id, name: row.name, email: row.email, createdAt: new Date(row.created_ms), updatedAt: new Date(row.updated_ms) };
}

export function orderOf(row: OrderRow): OrderRecord {
  return { id: row.id, userId: row.user_id, total: row.total, status: row.status, createdAt: new Date(row.created_ms) };
}
