// The transactional outbox: an event is inserted in the transaction of the change it reports, with a
// delivery for every enabled endpoint subscribed to its type at that moment. Committed together or
// not at all: no event without its change, no change without its event.
import { newId } from '../db/ids.ts';
import type { EntityManager } from '../db/orm.ts';
import { prepared, runPrepared } from '../db/prepared.ts';
import { PING, type EventType } from './event-types.ts';

const EVENT = `insert into events (id, type, created_at, data) values ($1, $2, $3, $4::jsonb) returning id, type`;

/** The event, and its fan-out to the endpoints subscribed to its type, in one statement. */
const RECORD_EVENT = prepared(
  'outbox_record_event',
  `with event as (${EVENT})
   insert into webhook_deliveries (event_id, endpoint_id)
   select event.id, endpoint.id from event
   join webhook_endpoints endpoint on endpoint.enabled and (endpoint.event_types is null or event.type = any(endpoint.event_types))`,
);

/** A ping, delivered to one endpoint only. */
const QUEUE_PING = prepared(
  'outbox_queue_ping',
  `with event as (${EVENT}) insert into webhook_deliveries (event_id, endpoint_id) select event.id, $5 from event`,
);

/** Records that `object` (as REST's GET shows it) underwent `type`, in `em`'s open transaction; returns the event id. */
export async function recordEvent(em: EntityManager, type: EventType, object: Record<string, unknown>): Promise<string> {
  const id = newId('event');
  await runPrepared(em, RECORD_EVENT, [id, type, new Date(), JSON.stringify({ object })]);
  return id;
}

/** Queues a ping for one endpoint, in `em`'s open transaction. */
export async function queuePing(em: EntityManager, endpointId: string, endpoint: Record<string, unknown>): Promise<string> {
  const id = newId('event');
  await runPrepared(em, QUEUE_PING, [id, PING, new Date(), JSON.stringify({ object: endpoint }), endpointId]);
  return id;
}
