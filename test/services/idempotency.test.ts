// The idempotency record against a real PostgreSQL, where timing over HTTP cannot reach: a claim
// that travels with the write's first statement and stops it when refused, and a record that
// committed after the claim looked (by a writer that never took the lock) wins over this write.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MikroORM } from '../../src/db/orm.ts';
import { IdempotencyKeyInFlightError, IdempotencyKeyReusedError } from '../../src/errors.ts';
import { IdempotentWrite, fingerprintOf, type IdempotencyScope } from '../../src/services/idempotency.ts';
import { openKeyedDatabase, type KeyedDatabase } from '../support/keyed-database.ts';

let database: KeyedDatabase;
let orm: MikroORM;
let apiKeyId: string;

beforeAll(async () => {
  database = await openKeyedDatabase(3);
  ({ orm, apiKeyId } = database);
  await orm.em.fork().execute(`create table markers (name text primary key)`);
});
afterAll(() => database.close());

const TTL_MS = 60_000;
/** What a statement stopped by a refused claim fails with (through the ORM, which wraps it). */
const IN_USE = /idempotency key in use/;
let sequence = 0;
const scopeOf = (body: unknown): IdempotencyScope => ({ apiKeyId, key: `race-${++sequence}`, fingerprint: fingerprintOf([body]) });

async function claim(scope: IdempotencyScope): Promise<IdempotentWrite> {
  return await IdempotentWrite.begin(orm.em.fork(), scope);
}

/** A row the write makes in its transaction, to see whether it was kept. */
async function writeMarker(write: IdempotentWrite, name: string): Promise<void> {
  await write.em.execute(`insert into markers values (?)`, [name]);
}

async function markers(): Promise<string[]> {
  const rows = await orm.em.fork().execute<{ name: string }[]>(`select name from markers order by name`);
  return rows.map((row) => row.name);
}

/** Commits a record of `scope` the way another request would have, without its lock. */
async function recordElsewhere(scope: IdempotencyScope, body: string): Promise<void> {
  await orm.em.fork().execute(
    `insert into idempotency_keys (api_key_id, key, fingerprint, status, headers, body, created_at, expires_at)
       values (?, ?, ?, 201, '{"content-type":"application/json"}', ?, now(), now() + interval '1 hour')`,
    [scope.apiKeyId, scope.key, scope.fingerprint, body],
  );
}

describe('recording an outcome', () => {
  it('commits the write with its record, and a second claim replays it', async () => {
    const scope = scopeOf({ total: 1 });
    const write = await claim(scope);
    await writeMarker(write, scope.key);
    const outcome = { status: 201, headers: { 'content-type': 'application/json' }, body: `{"it's":"mine"}` };
    expect(await write.record(outcome, TTL_MS, false)).toEqual({ committed: true });
    expect(await markers()).toContain(scope.key);
    // The retry's claim travels with its first statement, which it stops.
    const retry = await claim(scope);
    await expect(writeMarker(retry, `${scope.key}-again`)).rejects.toThrow(/idempotency key recorded/);
    expect(retry.claimRefused).toBe(true);
    expect(await retry.record({ status: 500, headers: {}, body: null }, TTL_MS, false)).toEqual({ committed: false, replay: outcome });
    expect(await markers()).not.toContain(`${scope.key}-again`);
  });

  it('claims with the record when the write ran no statement, and replays that record', async () => {
    const scope = scopeOf({ total: 4 });
    const outcome = { status: 400, headers: { 'content-type': 'application/problem+json' }, body: '{"title":"Bad"}' };
    expect(await (await claim(scope)).record(outcome, TTL_MS, true)).toEqual({ committed: true });
    expect(await (await claim(scope)).record({ status: 201, headers: {}, body: '{}' }, TTL_MS, false)).toEqual({
      committed: false,
      replay: outcome,
    });
  });

  it('refuses, without running its statements, a write whose key another open write holds', async () => {
    const scope = scopeOf({ total: 5 });
    const first = await claim(scope);
    await writeMarker(first, `${scope.key}-first`);
    const second = await claim(scope);
    await expect(writeMarker(second, `${scope.key}-second`)).rejects.toThrow(IN_USE);
    // Every statement after the refusal fails with it, unsent.
    await expect(writeMarker(second, `${scope.key}-third`)).rejects.toThrow(IN_USE);
    expect(second.claimRefused).toBe(true);
    await expect(second.record({ status: 201, headers: {}, body: '{}' }, TTL_MS, false)).rejects.toBeInstanceOf(
      IdempotencyKeyInFlightError,
    );
    expect(await first.record({ status: 201, headers: {}, body: '{}' }, TTL_MS, false)).toEqual({ committed: true });
    expect(await markers()).toEqual(expect.arrayContaining([`${scope.key}-first`]));
    expect(await markers()).not.toEqual(expect.arrayContaining([`${scope.key}-second`]));
  });

  it('refuses a retry whose request differs from the recorded one', async () => {
    const scope = scopeOf({ total: 6 });
    expect(await (await claim(scope)).record({ status: 201, headers: {}, body: '{}' }, TTL_MS, false)).toEqual({ committed: true });
    const other = await claim({ ...scope, fingerprint: fingerprintOf(['another request']) });
    await expect(writeMarker(other, `${scope.key}-other`)).rejects.toThrow(/idempotency key recorded/);
    await expect(other.record({ status: 201, headers: {}, body: '{}' }, TTL_MS, false)).rejects.toBeInstanceOf(IdempotencyKeyReusedError);
    expect(await markers()).not.toContain(`${scope.key}-other`);
  });

  it('answers with a record committed after the claim looked, and rolls its own write back', async () => {
    const scope = scopeOf({ total: 2 });
    const write = await claim(scope);
    await writeMarker(write, scope.key);
    await recordElsewhere(scope, '{"first":true}');
    const recorded = await write.record({ status: 201, headers: {}, body: '{"second":true}' }, TTL_MS, false);
    expect(recorded).toEqual({
      committed: false,
      replay: { status: 201, headers: { 'content-type': 'application/json' }, body: '{"first":true}' },
    });
    expect(await markers()).not.toContain(scope.key);
  });

  it('refuses when the record committed after the claim was for a different request', async () => {
    const scope = scopeOf({ total: 3 });
    const write = await claim(scope);
    await writeMarker(write, scope.key);
    await recordElsewhere({ ...scope, fingerprint: fingerprintOf(['another request']) }, '{}');
    await expect(write.record({ status: 201, headers: {}, body: '{}' }, TTL_MS, false)).rejects.toBeInstanceOf(IdempotencyKeyReusedError);
    expect(await markers()).not.toContain(scope.key);
  });
});
