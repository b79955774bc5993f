// Per-request batch loaders: fields resolved once per parent (User.orders, Order.user) ask a loader,
// which collects the keys of one execution tick into a single statement. No N+1.
import DataLoader from 'dataloader';
import type { OrderRecord, UserRecord } from '../db/records.ts';
import type { Sql } from '../db/sql.ts';
import { latestOrdersOfUsers } from '../services/orders.ts';
import { findUsersByIds } from '../services/users.ts';

export interface Loaders {
  userById: DataLoader<string, UserRecord | null>;
  /** The newest `limit` orders per user; one loader (so one statement) per distinct limit. */
  latestOrders(limit: number): DataLoader<string, OrderRecord[]>;
  /** Records each user's newest `limit` orders, fetched with the users themselves. */
  prefetch(limit: number, ordersByUser: ReadonlyMap<string, OrderRecord[]>): void;
  /**
   * A user's prefetched orders, handed back as they are: resolved without a promise per user,
   * which a loader's cache would still cost.
   */
  prefetched(limit: number, userId: string): OrderRecord[] | undefined;
}

/** A class rather than an object literal: a literal's getter would cost every request in garbage collection (see pagination/edges.ts). */
class RequestLoaders implements Loaders {
  readonly #sql: Sql;
  readonly #latestByLimit = new Map<number, DataLoader<string, OrderRecord[]>>();
  readonly #prefetchedByLimit = new Map<number, ReadonlyMap<string, OrderRecord[]>>();
  #userById: DataLoader<string, UserRecord | null> | undefined;

  constructor(sql: Sql) {
    this.#sql = sql;
  }

  // Made on first use: most requests need neither.
  get userById(): DataLoader<string, UserRecord | null> {
    const sql = this.#sql;
    return (this.#userById ??= new DataLoader(async (ids) => {
      const users = new Map((await findUsersByIds(sql, ids)).map((user) => [user.id, user]));
      return ids.map((id) => users.get(id) ?? null);
    }));
  }

  latestOrders(limit: number): DataLoader<string, OrderRecord[]> {
    let loader = this.#latestByLimit.get(limit);
    if (!loader) {
      const sql = this.#sql;
      loader = new DataLoader(async (userIds) => {
        const orders = await latestOrdersOfUsers(sql, userIds, limit);
        return userIds.map((id) => orders.get(id) ?? []);
      });
      this.#latestByLimit.set(limit, loader);
    }
    return loader;
  }

  prefetch(limit: number, ordersByUser: ReadonlyMap<string, OrderRecord[]>): void {
    this.#prefetchedByLimit.set(limit, ordersByUser);
  }

  prefetched(limit: number, userId: string): OrderRecord[] | undefined {
    return this.#prefetchedByLimit.get(limit)?.get(userId);
  }
}

export function createLoaders(sql: Sql): Loaders {
  return new RequestLoaders(sql);
}
