import { defineEntity, p } from '@mikro-orm/core';
import { idProperty } from './id-property.ts';

export const API_KEY_ENVIRONMENTS = ['live', 'test'] as const;

/**
 * A client application's API key. Only an HMAC of the secret is stored; `prefix` is the public part
 * shown in listings and used to find the row, the rest is compared in constant time.
 */
export const ApiKeySchema = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: idProperty('apiKey'),
    name: p.string().columnType('text'),
    prefix: p.string().columnType('text').collation('C').unique('api_keys_prefix_key'),
    secretHash: p.string().columnType('text'),
    environment: p.enum(API_KEY_ENVIRONMENTS),
    scopes: p.array(),
    /** CIDRs (IPv4 or IPv6) requests must come from; empty means anywhere. */
    allowedCidrs: p.array(),
    /** Requests per minute for this key, overriding the default policy; null uses the default. */
    rateLimitPerMinute: p.integer().nullable(),
    createdAt: p.datetime(3).onCreate(() => new Date()),
    expiresAt: p.datetime(3).nullable(),
    revokedAt: p.datetime(3).nullable(),
    lastUsedAt: p.datetime(3).nullable(),
    lastUsedIp: p.string().columnType('text').nullable(),
    /** The key this one replaced in a rotation. */
    rotatedFromId: p.string().columnType('text').collation('C').nullable(),
    /**
     * The id of the first key of its rotation chain (its own id, unless it replaced another). What a
     * key owns (webhook endpoints) belongs to the chain, so a rotated key's successor keeps it.
     */
    lineageId: p.string().columnType('text').collation('C'),
  },
  // Instances top up the prefixes they know with the keys created lately.
  indexes: [
    { name: 'api_keys_created_at_idx', properties: ['createdAt'] },
    { name: 'api_keys_lineage_id_idx', properties: ['lineageId'] },
  ],
  checks: [
    { name: 'api_keys_name_length_check', expression: 'char_length(name) >= 1 and char_length(name) <= 100' },
    { name: 'api_keys_rate_limit_check', expression: 'rate_limit_per_minute > 0' },
  ],
});

export class ApiKey extends ApiKeySchema.class {}
ApiKeySchema.setClass(ApiKey);
