import { defineEntity, p } from '@mikro-orm/core';
import { Event } from './event.ts';
import { WebhookEndpoint } from './webhook-endpoint.ts';

/**
 * `pending`: not attempted yet (or re-sent); `failed`: the last attempt failed and another is
 * scheduled; `succeeded`; `dead`: every attempt of the schedule failed (the dead-letter queue).
 */
export const DELIVERY_STATES = ['pending', 'failed', 'succeeded', 'dead'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/**
 * One event to one endpoint: made in the transaction that records the event, for every enabled
 * endpoint subscribed to its type at that moment; worked off by the delivery worker. Written by plain
 * SQL (webhooks/outbox.ts, webhooks/deliveries.ts).
 */
export const WebhookDeliverySchema = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  properties: {
    event: () => p.manyToOne(Event).primary().deleteRule('cascade'),
    endpoint: () => p.manyToOne(WebhookEndpoint).primary().deleteRule('cascade'),
    state: p.enum(DELIVERY_STATES).default('pending'),
    /** Attempts in the current series (a re-send starts a new one); the schedule is indexed by it. */
    attempts: p.integer().default(0),
    /** Attempts ever made, numbering them. */
    attemptsTotal: p.integer().default(0),
    /** When the next attempt is due; the worker takes due deliveries in this order. */
    nextAttemptAt: p.datetime(3).defaultRaw('now()'),
    /** A worker's claim: until then no other worker takes the delivery (a crashed worker's lapses). */
    lockedUntil: p.datetime(3).nullable(),
    createdAt: p.datetime(3).defaultRaw('now()'),
    /** When it succeeded or went to the dead-letter queue. */
    finishedAt: p.datetime(3).nullable(),
  },
  indexes: [
    // Claims go endpoint by endpoint (webhooks/deliveries.ts); the outbox's figures count it.
    { name: 'webhook_deliveries_endpoint_due_idx', properties: ['endpoint', 'nextAttemptAt'], where: `state in ('pending', 'failed')` },
    { name: 'webhook_deliveries_endpoint_id_event_id_idx', properties: ['endpoint', 'event'] },
    { name: 'webhook_deliveries_dead_idx', properties: ['endpoint', 'event'], where: `state = 'dead'` },
  ],
});

export class WebhookDelivery extends WebhookDeliverySchema.class {}
WebhookDeliverySchema.setClass(WebhookDelivery);
