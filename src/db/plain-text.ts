// Statements that travel as plain text. Only the simple query protocol carries several statements in
// one message (a transaction's BEGIN with its first statement, or a statement with the COMMIT after
// it: transaction-edges.ts), and it takes no bound values. So that such a statement is still planned
// once per connection, not parsed and planned on every call, it is a planned statement: prepared on
// each connection with SQL PREPARE the first time that connection needs it, then run with EXECUTE and
// its values written as literals. For the few statements whose round trips matter most; everything
// else binds its values (prepared.ts, sql.ts).
import pg from 'pg';
import { runPrepared, type StatementRunner } from './prepared.ts';
import { queryAfter, type Query } from './query-wrapping.ts';

/** A statement PostgreSQL keeps planned per connection, run with `execute`. */
export interface PlannedStatement {
  readonly name: string;
  /** Its PREPARE, sent once on each connection before its first EXECUTE there. */
  readonly prepare: string;
}

// How a text names the planned statement it executes: a leading comment, "planned:" and the name.
const MARKER_START = '/* planned:';
const MARKER = new RegExp(`${MARKER_START.replace(/[/*]/g, '\\$&')}(\\w+) \\*/`, 'g');
/** Every planned statement, by name: the connection wrapper prepares them from here. */
const statements = new Map<string, PlannedStatement>();

/** `text` uses `$1`, `$2` … for values of `types`. */
export function planned(name: string, types: readonly string[], text: string): PlannedStatement {
  const statement = { name, prepare: `prepare ${name} (${types.join(', ')}) as ${text}` };
  if (statements.has(name)) throw new Error(`a planned statement is already named ${name}`);
  statements.set(name, statement);
  return statement;
}

/** A value as an SQL literal, quoted and escaped by node-postgres; integers only among numbers. */
export function literal(value: string | number | null): string {
  if (value === null) return 'null';
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`not an integer literal: ${value}`);
    return String(value);
  }
  return pg.escapeLiteral(value);
}

/** The statement's EXECUTE with these values, marked so that the connection prepares it first. */
export function execute(statement: PlannedStatement, values: readonly (string | number | null)[]): string {
  return `${MARKER_START}${statement.name} */ execute ${statement.name}(${values.map(literal).join(', ')})`;
}

/** Runs plain text (no placeholders) on `em`'s connection, in its transaction when it has one. */
export function runPlainText<T>(em: StatementRunner, text: string): Promise<T[]> {
  // No values: node-postgres then sends it as a simple query, which may hold several statements.
  return runPrepared<T>(em, text, []);
}

/**
 * Makes every connection of `pool` prepare a planned statement before the first text that executes
 * it. The PREPARE goes alone, so that whether it took is never in doubt; it happens once per
 * statement and connection.
 */
export function preparesPlannedStatements(pool: pg.Pool): void {
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as Query;
    const prepared = new Set<string>();
    const prepare = async (statement: PlannedStatement) => {
      await query(statement.prepare, []);
      prepared.add(statement.name);
    };
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- every overload passes through; a marked plain text waits for its PREPARE
    client.query = ((...args: unknown[]) => {
      const [text] = args;
      // Most texts name no planned statement: a substring search answers that before any regex.
      const missing =
        typeof text === 'string' && text.includes(MARKER_START)
          ? [...text.matchAll(MARKER)].flatMap(([, name = '']) => {
              const statement = statements.get(name);
              return statement && !prepared.has(name) ? [statement] : [];
            })
          : [];
      if (missing.length === 0) return query(...args);
      return queryAfter(
        missing.reduce((before, statement) => before.then(() => prepare(statement)), Promise.resolve()),
        query,
        args,
      );
    }) as typeof client.query;
  });
}
