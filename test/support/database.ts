import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

export function databaseUrl(database: string): string {
  const url = new URL(inject('adminUrl'));
  url.pathname = `/${database}`;
  return url.toString();
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: inject('adminUrl') });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A fresh, migrated database of its own (cloned from the run's template); returns its URL and a dropper. */
export async function createTestDatabase(): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  const name = `portico_test_${randomBytes(5).toString('hex')}`;
  await admin((client) => client.query(`create database ${name} template ${inject('templateDatabase')}`));
  return {
    name,
    url: databaseUrl(name),
    drop: () => admin((client) => client.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
  };
}

/** An empty database with no schema at all (for migration tests). */
export async function createEmptyDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `portico_empty_${randomBytes(5).toString('hex')}`;
  await admin((client) => client.query(`create database ${name}`));
  return {
    url: databaseUrl(name),
    drop: () => admin((client) => client.query(`drop database if exists ${name} with (force)`)).then(() => undefined),
  };
}

/**
 * A plain node-postgres pool for a test: the pool ends a connection without waiting for its socket to
 * close, so a database dropped right after (with force) may still terminate it, and that notice comes
 * as an error event, which must not end the test run: on the connection, and, for one the pool holds
 * idle, again on the pool. Errors of statements reach their callers as ever.
 */
export function testPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool(config);
  pool.on('connect', (client) => client.on('error', () => undefined));
  pool.on('error', () => undefined);
  return pool;
}
