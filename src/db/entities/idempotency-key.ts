import { defineEntity, p } from '@mikro-orm/core';
import { ApiKey } from './api-key.ts';

/**
 * The outcome of a write sent with an `Idempotency-Key`, kept so that a retry gets the same answer
 * instead of writing again. Written in the transaction of the write it records; read and written by
 * plain SQL (services/idempotency.ts): this describes the table for the schema.
 */
export const IdempotencyKeySchema = defineEntity({
  name: 'IdempotencyKey',
  tableName: 'idempotency_keys',
  properties: {
    apiKey: () => p.manyToOne(ApiKey).primary().deleteRule('cascade'),
    key: p.string().columnType('text').collation('C').primary(),
    /** SHA-256 of what the request asked for; a retry must ask for the same. */
    fingerprint: p.string().columnType('text'),
    status: p.smallint(),
    /** The response headers that belong to the outcome (Content-Type, Location). */
    headers: p.json<Record<string, string>>(),
    /** The response body exactly as sent; null when there was none (204). */
    body: p.text().nullable(),
    createdAt: p.datetime(3),
    expiresAt: p.datetime(3),
  },
  // The background purge deletes by expiry.
  indexes: [{ name: 'idempotency_keys_expires_at_idx', properties: ['expiresAt'] }],
});

export class IdempotencyKey extends IdempotencyKeySchema.class {}
IdempotencyKeySchema.setClass(IdempotencyKey);
