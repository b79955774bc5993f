// The transactional outbox: an event is inserted in the transaction of the change it reports, with a
// delivery for every enabled endpoint subscribed to its type at that moment. Committed together or
// not at all: no event without its change, no change without its event. Each statement answers how
// many deliveries it queued; a request that queued any wakes the workers once it has ended, after its
// commit (delivery-notifier.ts).
import { newId } from '../db/ids.ts';
import type { EntityManager } from '../db/orm.ts';
import { prepared, runPrepared, type StatementRunner } from '../db/prepared.ts';
import { markDeliveriesQueued } from '../request-context.ts';
import { currentTraceparent } from '../telemetry/trace-context.ts';
import { PING, type EventType } from './event-types.ts';

/**
 * The event, its id, type, time, data and traceparent taken from five parameters starting at `$first`;
 * with `after`, the name of a common table expression the event's id is read through, so that it runs
 * first (the change's lock, db/user-locks.ts).
 */
const event = (first: number, after?: string) => {
  const id = after === undefined ? `$${first}` : `(select $${first}::text from ${after})`;
  return `event as (insert into events (id, type, created_at, data, traceparent) values (${id}, $${first + 1}, $${first + 2}, $${first + 3}::jsonb, $${first + 4}) returning id, type)`;
};

/** Deliveries inserted by `insert` (returning a row each), counted: the statement's one row. */
const counted = (insert: string) => `queued as (${insert} returning 1) select count(*)::int as queued from queued`;

/**
 * The fan-out: a delivery of the event for every enabled endpoint subscribed to its type. Each
 * endpoint is locked as its foreign key would lock it, but while it is read: an endpoint deleted
 * (or disabled) by a transaction that committed after this statement began is then skipped, where
 * the foreign key's own check, later, would fail the whole write.
 */
const DELIVERIES = counted(`insert into webhook_deliveries (event_id, endpoint_id)
   select event.id, endpoint.id from event
   join webhook_endpoints endpoint on endpoint.enabled and (endpoint.event_types is null or event.type = any(endpoint.event_types))
   for key share of endpoint`);

/** An event and its deliveries, in one statement. */
const RECORD_EVENT = prepared('outbox_record_event', `with ${event(1)}, ${DELIVERIES}`);

/** A ping, delivered to one endpoint only. */
const QUEUE_PING = prepared(
  'outbox_queue_ping',
  `with ${event(1)}, ${counted(
    'insert into webhook_deliveries (event_id, endpoint_id) select event.id, endpoint.id from event, webhook_endpoints endpoint where endpoint.id = $6 for key share of endpoint',
  )}`,
);

/** Runs an outbox statement, and notes on the request when it queued deliveries. */
async function runQueuing(em: StatementRunner, statement: string, values: readonly unknown[]): Promise<void> {
  const [row] = await runPrepared<{ queued: number }>(em, statement, values);
  if (row && row.queued > 0) markDeliveriesQueued();
}

/** The parameters of an event: that `object` (as REST's GET shows it) underwent `type`, now, in the trace active now. */
function eventValues(
  type: string,
  object: Record<string, unknown>,
): [id: string, type: string, at: Date, data: string, traceparent: string | null] {
  return [newId('event'), type, new Date(), JSON.stringify({ object }), currentTraceparent()];
}

/** Records the event in `em`'s open transaction; returns its id. */
export async function recordEvent(em: EntityManager, type: EventType, object: Record<string, unknown>): Promise<string> {
  const values = eventValues(type, object);
  await runQueuing(em, RECORD_EVENT, values);
  return values[0];
}

/**
 * A statement that makes a change and records its event and deliveries at once: `change` is a
 * common table expression (`name as (insert …)`) using parameters $1 to $`parameters`. One statement
 * is atomic on its own, so a write whose whole result is known beforehand (a creation) needs no
 * transaction of its own, and costs one round trip. With `lock`, a one-row expression that takes a
 * lock: it is named `held`, and the change and the event must both read it (the event does here),
 * since PostgreSQL runs a statement's inserts in an order of its own and the first gives the
 * transaction its id.
 */
export function changeWithEvent(name: string, change: string, parameters: number, lock?: string): string {
  const held = lock === undefined ? '' : `held as materialized (select ${lock}), `;
  return prepared(name, `with ${held}${change}, ${event(parameters + 1, lock === undefined ? undefined : 'held')}, ${DELIVERIES}`);
}

/** Runs a `changeWithEvent` statement with the change's values and the event's. */
export async function runChangeWithEvent(
  em: StatementRunner,
  statement: string,
  values: readonly unknown[],
  type: EventType,
  object: Record<string, unknown>,
): Promise<void> {
  await runQueuing(em, statement, [...values, ...eventValues(type, object)]);
}

/** Queues a ping for one endpoint, in `em`'s open transaction. */
export async function queuePing(em: EntityManager, endpointId: string, endpoint: Record<string, unknown>): Promise<string> {
  const values = eventValues(PING, endpoint);
  await runQueuing(em, QUEUE_PING, [...values, endpointId]);
  return values[0];
}
