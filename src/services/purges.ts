// Background purges of records past their retention (idempotency outcomes, events), and the disabling
// of webhook endpoints whose keys have all expired: each runs every
// PURGE_EVERY_MS in bounded batches, never two runs at once; a failed run is logged and the next one
// tries again.
import type { EntityManager } from '../db/orm.ts';
import type { Logger } from '../log.ts';

/** How often each purge runs. */
export const PURGE_EVERY_MS = 60_000;

export interface Purge {
  /** What it deletes, for the log. */
  what: string;
  /** What it does to them, when it does not delete them (the log's word). */
  does?: 'disabled';
  /** Deletes (or disables) what is due; returns how many. */
  run(em: EntityManager): Promise<number>;
}

/** Starts the purges; `stop` waits for the runs in progress. */
export function startPurges(purges: readonly Purge[], em: () => EntityManager, logger: Logger): { stop(): Promise<void> } {
  const running = new Map<Purge, Promise<void>>();
  const runAll = () => {
    for (const purge of purges) {
      if (running.has(purge)) continue;
      const run = purge
        .run(em())
        .then((deleted) => {
          if (deleted > 0) logger.debug({ count: deleted }, `${purge.what} ${purge.does ?? 'deleted'}`);
        })
        .catch((error: unknown) => logger.warn({ err: error }, `${purge.what}: the upkeep failed; trying again later`))
        .finally(() => running.delete(purge));
      running.set(purge, run);
    }
  };
  // Once at start too: what came due while no instance ran (a key revoked by a version that did not
  // disable its endpoints, say) is not left for a whole interval.
  const first = setTimeout(runAll, 0).unref();
  const timer = setInterval(runAll, PURGE_EVERY_MS).unref();
  return {
    async stop() {
      clearTimeout(first);
      clearInterval(timer);
      await Promise.all(running.values());
    },
  };
}
