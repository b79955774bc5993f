import { defineEntity, p } from '@mikro-orm/core';
import { WebhookDelivery } from './webhook-delivery.ts';

/** One attempt to deliver: when, how long, and what came back. Written by plain SQL (webhooks/deliveries.ts). */
export const WebhookAttemptSchema = defineEntity({
  name: 'WebhookAttempt',
  tableName: 'webhook_attempts',
  properties: {
    delivery: () =>
      p
        .manyToOne(WebhookDelivery)
        .primary()
        .joinColumns('event_id', 'endpoint_id')
        .referencedColumnNames('event_id', 'endpoint_id')
        .deleteRule('cascade')
        .updateRule('cascade')
        // The ids' collation, which the columns of a key two references away do not inherit.
        .collation('C'),
    number: p.integer().primary(),
    startedAt: p.datetime(3),
    durationMs: p.integer(),
    /** The receiver's HTTP status; null when none came (a time-out, a refused connection). */
    statusCode: p.integer().nullable(),
    /** What went wrong, when nothing or a failure came back. */
    error: p.string().columnType('text').nullable(),
    /** The first KiB of the response body. */
    responseBody: p.string().columnType('text').nullable(),
    /** The signature header sent (never the secret). */
    signature: p.string().columnType('text'),
  },
});

export class WebhookAttempt extends WebhookAttemptSchema.class {}
WebhookAttemptSchema.setClass(WebhookAttempt);
