// Planned statements against a real PostgreSQL: values written as literals arrive exactly as sent,
// whatever they hold, and each connection prepares a statement once, only after a PREPARE that took.
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execute, literal, planned, preparesPlannedStatements } from '../../src/db/plain-text.ts';
import { wirePool, type WirePool } from '../support/wire-pool.ts';

let wire: WirePool;
let pool: pg.Pool;
let sent: string[];

const ECHO = planned('test_echo_planned', ['text', 'bigint'], 'select $1 as text, $2 as number');
const LATER = planned('test_later_planned', ['int'], 'select n from later where n = $1');

beforeAll(async () => {
  wire = await wirePool(preparesPlannedStatements);
  ({ pool, sent } = wire);
});
afterAll(() => wire.close());

describe('planned statements', () => {
  it('carries any text as a literal, exactly', async () => {
    const tricky = [`it's`, `back\\slash \\' and \\\\`, `line\nbreak\ttab`, `$1 -- not a comment; drop table x`, 'ünïcødé ✓', ''];
    for (const text of tricky) {
      const result = await pool.query<{ text: string; number: string }>(execute(ECHO, [text, 2 ** 40]));
      expect(result.rows).toEqual([{ text, number: String(2 ** 40) }]);
    }
    const nothing = await pool.query<{ text: string | null }>(execute(ECHO, [null, 1]));
    expect(nothing.rows[0]!.text).toBeNull();
  });

  it('refuses a number that is not an integer rather than writing it loosely', () => {
    expect(() => literal(1.5)).toThrow(/integer/);
    expect(() => literal(Number.NaN)).toThrow(/integer/);
  });

  it('prepares once per connection', async () => {
    for (let i = 0; i < 3; i++) await pool.query(execute(ECHO, ['again', i]));
    // Whichever test ran ECHO first prepared it; none did again.
    expect(sent.filter((text) => text.startsWith('prepare test_echo_planned'))).toHaveLength(1);
    const [name] = (await pool.query<{ name: string }>(`select name from pg_prepared_statements where name = 'test_echo_planned'`)).rows;
    expect(name).toEqual({ name: 'test_echo_planned' });
  });

  it('prepares again after a PREPARE that failed, once what it needs exists', async () => {
    sent.length = 0;
    await expect(pool.query(execute(LATER, [1]))).rejects.toMatchObject({ code: '42P01' });
    await pool.query('create table later (n int); insert into later values (1)');
    const result = await pool.query<{ n: number }>(execute(LATER, [1]));
    expect(result.rows).toEqual([{ n: 1 }]);
    expect(sent.filter((text) => text.startsWith('prepare test_later_planned'))).toHaveLength(2);
  });
});
