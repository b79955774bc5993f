// ORM options shared by the service, the CLI and the tests; the connection is supplied at run time.
import { defineConfig, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import {
  ApiKey,
  ApiKeyUsage,
  Event,
  IdempotencyKey,
  Order,
  User,
  WebhookAttempt,
  WebhookDelivery,
  WebhookEndpoint,
} from './src/db/entities/index.ts';
import { migrations } from './src/db/migrations/index.ts';

export function ormOptions(clientUrl: string, overrides: Partial<Options> = {}): Options {
  return defineConfig({
    clientUrl,
    entities: [User, Order, ApiKey, ApiKeyUsage, IdempotencyKey, Event, WebhookEndpoint, WebhookDelivery, WebhookAttempt],
    extensions: [Migrator],
    migrations: {
      migrationsList: migrations,
      tableName: 'mikro_orm_migrations',
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      silent: true,
    },
    // Every unit of work runs in a request-scoped fork; the global manager is a bug magnet.
    allowGlobalContext: false,
    // Never create or alter the schema implicitly: migrations own it.
    ensureDatabase: false,
    // The one function (the idempotency claim) is defined by its migration alone, not declared to the
    // ORM: comparing the schema with the entities leaves functions out.
    schemaGenerator: { ignoreRoutines: true },
    ...overrides,
  });
}

export default ormOptions(process.env.DATABASE_URL ?? 'postgres://localhost:5432/portico');
