import { defineEntity, p } from '@mikro-orm/core';
import { Event } from './event.ts';
import { WebhookEndpoint } from './webhook-endpoint.ts';

export const DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const;

/**
 * One event to one endpoint: made in the transaction that records the event, for every enabled
 * endpoint subscribed to its type at that moment. Written by plain SQL (webhooks/outbox.ts).
 */
export const WebhookDeliverySchema = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  properties: {
    event: () => p.manyToOne(Event).primary().deleteRule('cascade'),
    endpoint: () => p.manyToOne(WebhookEndpoint).primary().deleteRule('cascade'),
    state: p.enum(DELIVERY_STATES).default('pending'),
    attempts: p.integer().default(0),
    /** When the next attempt is due; the worker takes pending deliveries in this order. */
    nextAttemptAt: p.datetime(3).defaultRaw('now()'),
    createdAt: p.datetime(3).defaultRaw('now()'),
  },
  indexes: [
    { name: 'webhook_deliveries_pending_idx', properties: ['nextAttemptAt'], where: `state = 'pending'` },
    // Deleting an endpoint finds its deliveries.
    { name: 'webhook_deliveries_endpoint_id_idx', properties: ['endpoint'] },
  ],
});

export class WebhookDelivery extends WebhookDeliverySchema.class {}
WebhookDeliverySchema.setClass(WebhookDelivery);
