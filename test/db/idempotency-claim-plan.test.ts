// A key's claim looks its key up by the primary key however many records there are. The service's
// connections keep one plan per statement (generic-plans.ts), made when a connection first runs it;
// a plan made while the table was empty scans the whole table, and it stayed in use until
// PostgreSQL's statistics next changed, while the table grew by a record per keyed write.
import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openKeyedDatabase, type KeyedDatabase } from '../support/keyed-database.ts';

let database: KeyedDatabase;
beforeAll(async () => {
  database = await openKeyedDatabase(2);
});
afterAll(() => database.close());

/** How the current transaction has read the records' table so far. */
async function scansOfRecords(client: pg.PoolClient): Promise<{ seq: number; index: number }> {
  const { rows } = await client.query<{ seq: number; index: number }>(
    `select seq_scan::int as seq, idx_scan::int as index from pg_stat_xact_user_tables where relname = 'idempotency_keys'`,
  );
  return rows[0]!;
}

it('reads its key by index on a connection that first claimed one when the table was empty', async () => {
  const { orm, apiKeyId } = database;
  const pool: pg.Pool = await orm.driver.getConnection().getNativeClient();
  // A freshly migrated database, its statistics saying the table is empty.
  await pool.query('analyze idempotency_keys');
  const client = await pool.connect();
  try {
    await client.query('begin');
    await client.query('select idempotency_claim($1, $2)', [apiKeyId, 'the-first-key']);
    await client.query('rollback');

    // A day's records since, on another connection; the statistics are not refreshed.
    await pool.query(
      `insert into idempotency_keys (api_key_id, key, fingerprint, status, headers, body, created_at, expires_at)
       select $1, 'key-' || n, 'f', 201, '{}', '{}', now(), now() + interval '1 day' from generate_series(1, 5000) n`,
      [apiKeyId],
    );

    await client.query('begin');
    try {
      await client.query('select idempotency_claim($1, $2)', [apiKeyId, 'a-new-key']);
      const scans = await scansOfRecords(client);
      expect(scans.seq).toBe(0);
      // The look-up of a live record, and the removal of an expired one.
      expect(scans.index).toBeGreaterThanOrEqual(2);
    } finally {
      await client.query('rollback');
    }
  } finally {
    client.release();
  }
});
