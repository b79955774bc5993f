import { defineEntity, p } from '@mikro-orm/core';
import { idProperty } from './id-property.ts';

/**
 * A URL that receives events as signed webhooks. It belongs to the API key lineage that registered it
 * (a rotated key's successor keeps it). Its signing secret must stay recoverable to sign, so it is
 * stored encrypted (webhooks/secret-box.ts), never in plain text.
 */
export const WebhookEndpointSchema = defineEntity({
  name: 'WebhookEndpoint',
  tableName: 'webhook_endpoints',
  properties: {
    id: idProperty('webhookEndpoint'),
    /** The `lineageId` of the API key that registered it. */
    ownerKeyId: p.string().columnType('text').collation('C'),
    url: p.string().columnType('text'),
    /** Event types it receives; null: every type. */
    eventTypes: p.array().nullable(),
    description: p.string().columnType('text').nullable(),
    enabled: p.boolean().default(true),
    /** Why the service disabled it (a receiver that answered 410 Gone); cleared when it is enabled again. */
    disabledReason: p.string().columnType('text').nullable(),
    secret: p.string().columnType('text'),
    /** During a rotation's overlap, the secret before it, which keeps signing until `previousSecretExpiresAt`. */
    previousSecret: p.string().columnType('text').nullable(),
    previousSecretExpiresAt: p.datetime(3).nullable(),
    createdAt: p.datetime(3).onCreate(() => new Date()),
    updatedAt: p
      .datetime(3)
      .onCreate((endpoint: { createdAt?: Date }) => endpoint.createdAt ?? new Date())
      .onUpdate(() => new Date()),
  },
  // Listing a key's endpoints, in creation order.
  indexes: [{ name: 'webhook_endpoints_owner_key_id_id_idx', properties: ['ownerKeyId', 'id'] }],
  checks: [{ name: 'webhook_endpoints_url_length_check', expression: 'char_length(url) <= 2048' }],
});

export class WebhookEndpoint extends WebhookEndpointSchema.class {}
WebhookEndpointSchema.setClass(WebhookEndpoint);
