import { defineEntity, p } from '@mikro-orm/core';
import { ApiKey } from './api-key.ts';

/** Requests made with a key on one UTC day, per operation (the GraphQL root fields a request ran). */
export const ApiKeyUsageSchema = defineEntity({
  name: 'ApiKeyUsage',
  tableName: 'api_key_usage',
  properties: {
    apiKey: () => p.manyToOne(ApiKey).primary().deleteRule('cascade'),
    day: p.date().primary(),
    operation: p.string().columnType('text').primary(),
    requests: p.bigint('number'),
  },
});

export class ApiKeyUsage extends ApiKeyUsageSchema.class {}
ApiKeyUsageSchema.setClass(ApiKeyUsage);
