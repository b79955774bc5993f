// A transaction's BEGIN shares a message with its first plain statement, and a COMMIT after a
// statement that committed costs nothing, against a real PostgreSQL; what reaches the server is
// counted below the folding.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { foldsTransactionEdges } from '../../src/db/transaction-edges.ts';
import { wirePool, type WirePool } from '../support/wire-pool.ts';

let wire: WirePool;
let pool: pg.Pool;
let sent: string[];

beforeAll(async () => {
  wire = await wirePool(foldsTransactionEdges);
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

  it('sends BEGIN on its own before a statement with bound values, and the transaction holds', async () => {
    const messages = await transaction(async (client) => {
      await client.query('insert into edges values ($1)', [2]);
      await client.query('rollback', []);
    });
    expect(messages).toEqual(['begin', 'insert into edges values ($1)', 'rollback']);
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
});
