// Every change to a resource commits with its event (the transactional outbox, webhooks/outbox.ts).
import { TransactionPropagation } from '@mikro-orm/core';
import type { EntityManager } from '../db/orm.ts';
import { crashAt, isArmed } from '../failpoints.ts';
import type { EventType } from '../webhooks/event-types.ts';
import { recordEvent } from '../webhooks/outbox.ts';

/**
 * Runs `change` and records its event in one transaction: the request's own when it has one open (a
 * write sent with an Idempotency-Key, which then commits the change, the event and the key's record
 * together), or a new one. `resource` gives the changed resource as REST's GET shows it.
 */
export async function withEvent<T>(
  em: EntityManager,
  type: EventType,
  change: (tx: EntityManager) => Promise<T>,
  resource: (result: T) => Record<string, unknown>,
): Promise<T> {
  const ownTransaction = !em.isInTransaction();
  const result = await em.transactional(
    async (tx) => {
      const changed = await change(tx);
      await recordEvent(tx, type, resource(changed));
      if (isArmed('fail-after-event')) throw new Error('failpoint fail-after-event');
      crashAt('crash-after-event');
      return changed;
    },
    { propagation: TransactionPropagation.REQUIRED },
  );
  if (ownTransaction) crashAt('crash-after-event-commit');
  return result;
}
