import { defineEntity, p } from '@mikro-orm/core';
import { idProperty } from './id-property.ts';

/**
 * Something that happened to a resource, recorded in the transaction of the change itself (the
 * outbox): no event without its change, no change without its event. Written and read by plain SQL
 * (webhooks/outbox.ts, services/events.ts): this describes the table for the schema.
 */
export const EventSchema = defineEntity({
  name: 'Event',
  tableName: 'events',
  properties: {
    id: idProperty('event'),
    type: p.string().columnType('text'),
    /**
     * The id of the transaction that wrote the event. The feed is ordered by it, then by id, and shows
     * only events of transactions older than every running one: a transaction that commits late can
     * then never slip in behind a page a reader has already seen.
     */
    xact: p.string().columnType('xid8').defaultRaw('pg_current_xact_id()'),
    createdAt: p.datetime(3),
    /** `{ object }`: the resource as REST's GET shows it (for a deletion, as it was). */
    data: p.json<{ object: Record<string, unknown> }>(),
    /** The W3C `traceparent` of the request that wrote it, when tracing was on: delivery attempts link to it. */
    traceparent: p.string().columnType('text').nullable(),
  },
  indexes: [
    { name: 'events_xact_id_idx', properties: ['xact', 'id'] },
    { name: 'events_type_xact_id_idx', properties: ['type', 'xact', 'id'] },
  ],
});

export class Event extends EventSchema.class {}
EventSchema.setClass(Event);
