// Statements pipelined in one message against a real PostgreSQL: values arrive exactly as node-postgres
// binds them, a failing statement skips the ones after it, and a named statement is prepared once per
// connection, and again after a pipeline whose failure leaves that in doubt.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runPipeline } from '../../src/db/pipeline.ts';
import { createTestDatabase } from '../support/database.ts';

let client: pg.Client;
let drop: () => Promise<void>;
const query = (...args: unknown[]) => (client.query as (...args: unknown[]) => unknown)(...args);

beforeAll(async () => {
  const database = await createTestDatabase();
  drop = database.drop;
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await client.query('create table piped (n int primary key, note text, at timestamptz, data jsonb)');
});
afterAll(async () => {
  await client.end();
  await drop();
});

const preparedNames = async () =>
  (await client.query<{ name: string }>(`select name from pg_prepared_statements where name like 'pipelined_%' order by name`)).rows.map(
    (row) => row.name,
  );

describe('a pipeline', () => {
  it('binds values exactly as node-postgres does, and answers with each statement’s result', async () => {
    const at = new Date('2026-03-04T05:06:07.089Z');
    const tricky = `it's "quoted" \\ -- $1 ✓\n`;
    const results = await runPipeline(query, [
      { text: 'insert into piped values ($1, $2, $3, $4)', values: [1, tricky, at, { a: [1, 'b'] }] },
      { text: 'select n, note, at, data from piped where n = $1', values: [1], name: 'test_piped_select' },
      { text: 'select $1::text as nothing', values: [null] },
    ]);
    expect(results.map((result) => result.command)).toEqual(['INSERT', 'SELECT', 'SELECT']);
    expect(results[1]!.rows).toEqual([{ n: 1, note: tricky, at, data: { a: [1, 'b'] } }]);
    expect(results[2]!.rows).toEqual([{ nothing: null }]);
  });

  it('skips every statement after a failing one; outside a transaction, the whole pipeline is undone', async () => {
    await expect(
      runPipeline(query, [
        { text: 'insert into piped (n) values ($1)', values: [2] },
        { text: 'select 1 / $1::int', values: [0] },
        { text: 'insert into piped (n) values ($1)', values: [3] },
      ]),
    ).rejects.toMatchObject({ code: '22012' });
    expect((await client.query('select n from piped where n in (2, 3)')).rows).toEqual([]);
    // The connection is ready for the next statement.
    expect((await client.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });

  it('prepares a named statement once per connection, and again after a pipeline that failed', async () => {
    const count = { text: 'select count(*)::int as n from piped where n > $1', values: [0], name: 'test_piped_count' };
    await runPipeline(query, [count]);
    await runPipeline(query, [count]);
    expect(await preparedNames()).toContain('pipelined_test_piped_count');
    // A failure after the statement was prepared: the next pipeline closes and prepares it again, unharmed.
    const later = { text: 'select count(*)::int as n from later where n > $1', values: [0], name: 'test_piped_later' };
    await expect(runPipeline(query, [count, later])).rejects.toMatchObject({ code: '42P01' });
    await client.query('create table later (n int)');
    const [counted, none] = await runPipeline(query, [count, later]);
    expect([counted!.rows, none!.rows]).toEqual([[{ n: 1 }], [{ n: 0 }]]);
    expect(await preparedNames()).toEqual(expect.arrayContaining(['pipelined_test_piped_count', 'pipelined_test_piped_later']));
  });

  it('refuses a value it cannot send without sending anything', async () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    await expect(runPipeline(query, [{ text: 'select $1::jsonb', values: [circular] }])).rejects.toThrow(/circular/i);
    expect((await client.query('select 2 as two')).rows).toEqual([{ two: 2 }]);
  });
});
