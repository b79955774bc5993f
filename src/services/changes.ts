// Every change to a resource commits with its event (the transactional outbox, webhooks/outbox.ts).
import type { EntityManager } from '../db/orm.ts';
import { crashAt, isArmed } from '../failpoints.ts';
import type { EventType } from '../webhooks/event-types.ts';
import { recordEvent } from '../webhooks/outbox.ts';

/** What a change hands back when it found the resource already as asked: no event is recorded. */
export class Unchanged<T> {
  readonly value: T;
  constructor(value: T) {
    this.value = value;
  }
}

/**
 * Runs `change` and records its event in one transaction: the request's own when it has one open (a
 * write sent with an Idempotency-Key, which then commits the change, the event and the key's record
 * together), or a new one. `resource` gives the changed resource as REST's GET shows it. A change
 * that alters nothing returns `Unchanged`: subscribers hear of changes, not of requests.
 */
export async function withEvent<T>(
  em: EntityManager,
  type: EventType,
  change: (tx: EntityManager) => Promise<T | Unchanged<T>>,
  resource: (result: T) => Record<string, unknown>,
): Promise<T> {
  const run = async () => {
    const changed = await change(em);
    if (changed instanceof Unchanged) return changed.value;
    await recordEvent(em, type, resource(changed));
    if (isArmed('fail-after-event')) throw new Error('failpoint fail-after-event');
    crashAt('crash-after-event');
    return changed;
  };
  if (em.isInTransaction()) return run();
  // The request's own unit of work opens the transaction: no fork of it (em.transactional forks one
  // per call, which costs a write more than its extra statement).
  await em.begin();
  let result: T;
  try {
    result = await run();
    await em.commit();
  } catch (error) {
    // A rollback fails only on a dead connection, and then PostgreSQL has rolled back already. What
    // the change left in the unit of work was not written, so a later flush must not try it again.
    await em.rollback().catch(() => undefined);
    em.clear();
    throw error;
  }
  crashAt('crash-after-event-commit');
  return result;
}
