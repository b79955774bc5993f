// A transaction's BEGIN shares a message with its first statement (plain text, or a pipeline with
// one whose values are bound) and with the riders that open it, a refused rider stops the
// transaction, and a COMMIT after a statement that committed costs nothing, against a real
// PostgreSQL; what reaches the server is counted below the folding.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { prepared, preparesMarkedStatements } from '../../src/db/prepared.ts';
import { foldsTransactionEdges, riderText } from '../../src/db/transaction-edges.ts';
import { wirePool, type WirePool } from '../support/wire-pool.ts';

let wire: WirePool;
let pool: pg.Pool;
let sent: string[];

beforeAll(async () => {
  wire = await wirePool((pool) => {
    preparesMarkedStatements(pool);
    foldsTransactionEdges(pool);
  });
  ({ pool, sent } = wire);
  await pool.query('create table edges (n int primary key)');
});
afterAll(() => wire.close());
afterEach(async () => {
  await pool.query('truncate edges');
  sent.length = 0;
});

async function rows(): Promise<number[]> {
  const result = await pool.query<{ n: number }>('select n from edges order by n');
  return result.rows.map((row) => row.n);
}

async function transaction(work: (client: pg.PoolClient) => Promise<void>): Promise<string[]> {
  sent.length = 0;
  const client = await pool.connect();
  try {
    await client.query('begin', []);
    await work(client);
  } finally {
    client.release();
  }
  return [...sent];
}

describe('transaction edges', () => {
  it("sends BEGIN in one message with the transaction's first plain statement, which then runs inside it", async () => {
    const messages = await transaction(async (client) => {
      const inserted = await client.query('insert into edges values (1) returning n', []);
      expect(inserted.rows).toEqual([{ n: 1 }]);
      expect(client.getTransactionStatus()).toBe('T');
      await client.query('rollback', []);
    });
    expect(messages).toEqual(['begin; insert into edges values (1) returning n', 'rollback']);
    expect(await rows()).toEqual([]);
  });

  it('sends BEGIN in one message with a first statement whose values are bound, and the transaction holds', async () => {
    const messages = await transaction(async (client) => {
      await client.query('insert into edges values ($1)', [2]);
      expect(client.getTransactionStatus()).toBe('T');
      await client.query('rollback', []);
    });
    expect(messages).toEqual(['begin; insert into edges values ($1)', 'rollback']);
    expect(await rows()).toEqual([]);
  });

  it('sends BEGIN first before a statement in the callback form, which answers through its callback', async () => {
    const messages = await transaction(async (client) => {
      const rows = await new Promise<unknown[]>((resolve, reject) => {
        client.query('insert into edges values (7) returning n', (error: Error | null, result: pg.QueryResult) =>
          error ? reject(error) : resolve(result.rows),
        );
      });
      expect(rows).toEqual([{ n: 7 }]);
      await client.query('rollback', []);
    });
    expect(messages).toEqual(['begin', 'insert into edges values (7) returning n', 'rollback']);
    expect(await rows()).toEqual([]);
  });

  it('answers the COMMIT after a statement that committed without a message, and the write is kept', async () => {
    const messages = await transaction(async (client) => {
      const results = (await client.query('insert into edges values (3); commit', [])) as unknown as pg.QueryResult[];
      expect(results.map((result) => result.command)).toEqual(['INSERT', 'COMMIT']);
      const commit = await client.query('commit', []);
      expect(commit.command).toBe('COMMIT');
    });
    expect(messages).toEqual(['begin; insert into edges values (3); commit']);
    expect(await rows()).toEqual([3]);
  });

  it('sends the COMMIT of a transaction whose statement failed, which PostgreSQL turns into a rollback', async () => {
    await pool.query('insert into edges values (4)');
    const messages = await transaction(async (client) => {
      await client.query('insert into edges values (5)', []);
      await expect(client.query('insert into edges values (4)', [])).rejects.toMatchObject({ code: '23505' });
      const commit = await client.query('commit', []);
      expect(commit.command).toBe('ROLLBACK');
    });
    expect(messages).toEqual(['begin; insert into edges values (5)', 'insert into edges values (4)', 'commit']);
    expect(await rows()).toEqual([4]);
  });

  it('costs no message for a transaction that ran nothing', async () => {
    expect(await transaction((client) => client.query('commit', []).then(() => undefined))).toEqual([]);
    expect(await transaction((client) => client.query('rollback', []).then(() => undefined))).toEqual([]);
  });

  it('never hands a held-back BEGIN to the next borrower of the connection', async () => {
    await transaction(async () => undefined);
    const client = await pool.connect();
    try {
      await client.query('insert into edges values (6)', []);
      expect(client.getTransactionStatus()).toBe('I');
    } finally {
      client.release();
    }
    expect(await rows()).toEqual([6]);
  });

  it('binds the values of a prepared statement in the pipeline, exactly as node-postgres binds them', async () => {
    const insert = prepared('test_edges_insert', 'insert into edges values ($1) returning n, $2::text as note, $3::timestamptz as at');
    const at = new Date('2026-01-02T03:04:05.678Z');
    const note = `it's "quoted" \\ ✓`;
    // Once outside a transaction, so that the connection has it prepared; then bound by name in the pipeline.
    await pool.query(insert, [7, note, at]);
    const messages = await transaction(async (client) => {
      const inserted = await client.query(insert, [8, note, at]);
      expect(inserted.rows).toEqual([{ n: 8, note, at }]);
      await client.query('commit', []);
    });
    expect(messages).toEqual([`begin; ${insert}`, 'commit']);
    expect(await rows()).toEqual([7, 8]);
  });

  it("sends riders with BEGIN and the first statement, and answers with that statement's result", async () => {
    const messages = await transaction(async (client) => {
      expect((await client.query(riderText({ text: 'select $1::int', values: [1], refused: () => false }), [])).command).toBe('SELECT');
      const inserted = await client.query('insert into edges values ($1) returning n', [9]);
      expect(inserted.rows).toEqual([{ n: 9 }]);
      await client.query('commit', []);
    });
    expect(messages).toEqual(['begin; select $1::int; insert into edges values ($1) returning n', 'commit']);
    expect(await rows()).toEqual([9]);
  });

  it('sends riders with BEGIN before a first statement in plain text, which follows on its own', async () => {
    const messages = await transaction(async (client) => {
      await client.query(riderText({ text: 'select $1::int', values: [1], refused: () => false }), []);
      await client.query('insert into edges values (13)', []);
      await client.query('commit', []);
    });
    expect(messages).toEqual(['begin; select $1::int', 'insert into edges values (13)', 'commit']);
    expect(await rows()).toEqual([13]);
  });

  it('stops the transaction at a refused rider: its statement never runs, nor any after it, until the rollback', async () => {
    const refusal = /refused here/;
    const messages = await transaction(async (client) => {
      const rider = riderText({
        text: `do $$ begin raise exception 'refused here'; end $$`,
        values: [],
        refused: (error) => refusal.test(String(error)),
      });
      await client.query(rider, []);
      await expect(client.query('insert into edges values ($1)', [10])).rejects.toThrow(refusal);
      await expect(client.query('insert into edges values (11)', [])).rejects.toThrow(refusal);
      await expect(client.query('commit', [])).rejects.toThrow(refusal);
      await client.query('rollback', []);
      expect(client.getTransactionStatus()).toBe('I');
    });
    expect(messages).toEqual([`begin; do $$ begin raise exception 'refused here'; end $$; insert into edges values ($1)`, 'rollback']);
    expect(await rows()).toEqual([]);
  });

  it('sends a rider at once, on its own, in a transaction already under way; its refusal still stops the transaction', async () => {
    const refusal = /refused later/;
    const messages = await transaction(async (client) => {
      await client.query('insert into edges values (14)', []);
      await client.query(riderText({ text: 'insert into edges values ($1)', values: [15], refused: () => false }), []);
      const rider = riderText({
        text: `do $$ begin raise exception 'refused later'; end $$`,
        values: [],
        refused: (error) => refusal.test(String(error)),
      });
      await expect(client.query(rider, [])).rejects.toThrow(refusal);
      await expect(client.query('insert into edges values (16)', [])).rejects.toThrow(refusal);
      await client.query('rollback', []);
      expect(client.getTransactionStatus()).toBe('I');
    });
    expect(messages).toEqual([
      'begin; insert into edges values (14)',
      'insert into edges values ($1)',
      `do $$ begin raise exception 'refused later'; end $$`,
      'rollback',
    ]);
    expect(await rows()).toEqual([]);
  });

  it('sends riders that nothing followed with the COMMIT, and none with a ROLLBACK', async () => {
    const rider = () => riderText({ text: 'insert into edges values ($1)', values: [12], refused: () => false });
    expect(await transaction(async (client) => void (await client.query(rider(), []), await client.query('rollback', [])))).toEqual([]);
    expect(await transaction(async (client) => void (await client.query(rider(), []), await client.query('commit', [])))).toEqual([
      'begin; insert into edges values ($1); commit',
    ]);
    expect(await rows()).toEqual([12]);
  });
});
