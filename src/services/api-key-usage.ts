// Usage of API keys, counted in memory and written in batches: a busy key costs one upsert per
// flush interval, not one write per request. Counts are per key, UTC day and operation; the last
// time and address a key was used ride along in the same flush.
import { ApiKeyUsage } from '../db/entities/index.ts';
import type { EntityManager } from '../db/orm.ts';
import { databaseFailureOf } from '../db/failures.ts';
import type { Logger } from '../log.ts';
import { requireId } from './validation.ts';
import { loggedFailure } from '../db/failures.ts';

export class UsageRecorder {
  readonly #em: () => EntityManager;
  readonly #logger: Logger;
  #counts = new Map<string, number>();
  #lastUsed = new Map<string, { at: number; ip: string }>();
  /** The UTC day being counted, and when it ends: a date is formatted once a day, not per request. */
  #day = '';
  #dayEndsAt = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(em: () => EntityManager, logger: Logger, flushEveryMs: number) {
    this.#em = em;
    this.#logger = logger;
    if (flushEveryMs > 0) {
      this.#timer = setInterval(
        () =>
          void this.flush().catch((error: unknown) =>
            // An unreachable database is reported once by the pool; the counts wait for the next flush.
            databaseFailureOf(error)
              ? logger.debug({ err: error }, 'writing API key usage failed; will retry')
              : logger.error({ err: error }, 'writing API key usage failed'),
          ),
        flushEveryMs,
      );
      this.#timer.unref();
    }
  }

  record(keyId: string, operation: string, ip: string, at = Date.now()): void {
    if (at >= this.#dayEndsAt || at < this.#dayEndsAt - 86_400_000) {
      this.#day = new Date(at).toISOString().slice(0, 10);
      this.#dayEndsAt = Date.parse(this.#day) + 86_400_000;
    }
    const entry = `${keyId}\t${this.#day}\t${operation}`;
    this.#counts.set(entry, (this.#counts.get(entry) ?? 0) + 1);
    const last = this.#lastUsed.get(keyId);
    if (last) {
      last.at = at;
      last.ip = ip;
    } else this.#lastUsed.set(keyId, { at, ip });
  }

  /** Writes what was counted since the last flush; counts survive a failed write for the next try. */
  async flush(): Promise<void> {
    const counts = this.#counts;
    const lastUsed = this.#lastUsed;
    if (counts.size === 0 && lastUsed.size === 0) return;
    this.#counts = new Map();
    this.#lastUsed = new Map();
    try {
      const rows = [...counts].map(([entry, requests]) => [...entry.split('\t'), requests] as const);
      await this.#em().transactional(async (em) => {
        if (rows.length > 0) {
          await em.execute(
            `insert into api_key_usage (api_key_id, day, operation, requests)
             select u.id, u.day::date, u.operation, u.requests from jsonb_to_recordset(?::jsonb) as u(id text, day text, operation text, requests bigint)
             join api_keys k on k.id = u.id
             on conflict (api_key_id, day, operation) do update set requests = api_key_usage.requests + excluded.requests`,
            [JSON.stringify(rows.map(([id, day, operation, requests]) => ({ id, day, operation, requests })))],
          );
        }
        await em.execute(
          `update api_keys k set last_used_at = u.at::timestamptz, last_used_ip = u.ip
           from jsonb_to_recordset(?::jsonb) as u(id text, at text, ip text)
           where k.id = u.id and (k.last_used_at is null or k.last_used_at < u.at::timestamptz)`,
          [JSON.stringify([...lastUsed].map(([id, used]) => ({ id, at: new Date(used.at).toISOString(), ip: used.ip })))],
        );
      });
    } catch (error) {
      for (const [entry, count] of counts) this.#counts.set(entry, (this.#counts.get(entry) ?? 0) + count);
      for (const [id, used] of lastUsed) if (!this.#lastUsed.has(id)) this.#lastUsed.set(id, used);
      throw error;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush().catch((error: unknown) => this.#logger.error(loggedFailure(error), 'writing API key usage at shutdown failed'));
  }
}

export interface UsageRow {
  day: string;
  operation: string;
  requests: number;
}

/** A key's usage over the last `days` days, newest day first. */
export async function usageOfApiKey(em: EntityManager, id: string, days: number): Promise<UsageRow[]> {
  const since = new Date(Date.now() - (days - 1) * 86_400_000).toISOString().slice(0, 10);
  const rows = await em.find(
    ApiKeyUsage,
    { apiKey: requireId('apiKey', 'id', id), day: { $gte: since } },
    { orderBy: { day: 'desc', operation: 'asc' } },
  );
  return rows.map((row) => ({ day: String(row.day).slice(0, 10), operation: row.operation, requests: Number(row.requests) }));
}
