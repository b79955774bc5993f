// A database of its own with one API key, for tests of idempotency records, which belong to a key.
import { openOrm, type MikroORM } from '../../src/db/orm.ts';
import { createLogger } from '../../src/log.ts';
import { createApiKey } from '../../src/services/api-keys.ts';
import { createTestDatabase } from './database.ts';

export interface KeyedDatabase {
  orm: MikroORM;
  apiKeyId: string;
  close(): Promise<void>;
}

export async function openKeyedDatabase(poolMax: number): Promise<KeyedDatabase> {
  const database = await createTestDatabase();
  const orm = await openOrm(database.url, { poolMax, logger: createLogger('silent') });
  const { key } = await createApiKey(orm.em.fork(), 'a-pepper-of-at-least-thirty-two-characters', 'test', {
    name: 'idempotency',
    scopes: ['orders:write'],
  });
  return {
    orm,
    apiKeyId: key.id,
    close: async () => {
      await orm.close();
      await database.drop();
    },
  };
}
