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

export function createLoaders(sql: Sql): Loaders {
  const latestByLimit = new Map<number, DataLoader<string, OrderRecord[]>>();
  const prefetchedByLimit = new Map<number, ReadonlyMap<string, OrderRecord[]>>();
  let userById: DataLoader<string, UserRecord | null> | undefined;
  return {
    // Made on first use: most requests need neither.
    get userById() {
      return (userById ??= new DataLoader(async (ids) => {
        const users = new Map((await findUsersByIds(sql, ids)).map((user) => [user.id, user]));
        return ids.map((id) => users.get(id) ?? null);
      }));
    },
    latestOrders(limit) {
      let loader = latestByLimit.get(limit);
      if (!loader) {
        loader = new DataLoader(async (userIds) => {
          const orders = await latestOrdersOfUsers(sql, userIds, limit);
          return userIds.map((id) => orders.get(id) ?? []);
        });
        latestByLimit.set(limit, loader);
      }
      return loader;
    },
    prefetch(limit, ordersByUser) {
      prefetchedByLimit.set(limit, ordersByUser);
    },
    prefetched(limit, userId) {
      return prefetchedByLimit.get(limit)?.get(userId);
    },
  };
}
