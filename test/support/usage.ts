import type { EntityManager } from '../../src/db/orm.ts';
import { usageOfApiKey } from '../../src/services/api-key-usage.ts';

const utcDay = (at: number) => new Date(at).toISOString().slice(0, 10);

/**
 * A key's counted requests by operation since `since` (a `Date.now()` taken before the requests),
 * and whether every count fell on a UTC day between then and now: a test that straddles midnight
 * has its requests counted on two days.
 */
export async function usageSince(
  em: EntityManager,
  id: string,
  since: number,
): Promise<{ totals: Record<string, number>; inTime: boolean }> {
  const days = new Set([utcDay(since), utcDay(Date.now())]);
  const rows = await usageOfApiKey(em, id, 2);
  const totals: Record<string, number> = {};
  for (const row of rows) totals[row.operation] = (totals[row.operation] ?? 0) + row.requests;
  return { totals, inTime: rows.every((row) => days.has(row.day)) };
}
