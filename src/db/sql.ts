// Reads that need no managed entities go straight to node-postgres, on the ORM's own pool (so its
// bounds and its failure handling apply): the SQL travels once per connection as a prepared
// statement and its values as bind parameters, so PostgreSQL plans each statement once, and rows
// come back as plain objects without the unit of work's bookkeeping. Writes go through MikroORM's connection (db/prepared.ts).
import type pg from 'pg';
import type { MikroORM } from './orm.ts';
import { prepared, runPrepared, type StatementRunner } from './prepared.ts';

/** A statement prepared once per connection under its name; its text uses $1, $2 … placeholders. */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

export function statement(name: string, text: string): Statement {
  return { name, text };
}

export class Sql {
  readonly #pool: pg.Pool;
  readonly #onQuery: ((sql: string) => void) | undefined;
  readonly #stop: AbortSignal | undefined;
  readonly #transaction: (() => StatementRunner | undefined) | undefined;

  constructor(pool: pg.Pool, onQuery?: (sql: string) => void, stop?: AbortSignal, transaction?: () => StatementRunner | undefined) {
    this.#pool = pool;
    this.#onQuery = onQuery;
    this.#stop = stop;
    this.#transaction = transaction;
  }

  async rows<T>(query: Statement, values: unknown[]): Promise<T[]> {
    this.#stop?.throwIfAborted();
    this.#onQuery?.(query.text);
    const transaction = this.#transaction?.();
    if (transaction) return runPrepared<T>(transaction, prepared(query.name, query.text), values);
    return (await this.#pool.query<T & pg.QueryResultRow>({ name: query.name, text: query.text, values })).rows;
  }

  /**
   * The same reads for one request: once `stop` aborts (its deadline answered, or its client left),
   * no further statement starts; the work it would have fed is already answered or unheard. While
   * `transaction` names one (a write's, with everything its answer reads), they run in it: on its
   * connection, which it holds, rather than on a second one from the pool, which requests holding
   * theirs could wait on until none is left; and seeing what it wrote.
   */
  until(stop: AbortSignal | undefined, transaction?: () => StatementRunner | undefined): Sql {
    return stop || transaction ? new Sql(this.#pool, this.#onQuery, stop, transaction) : this;
  }
}

/** Plain reads on the ORM's pool; `onQuery` sees each statement, as the ORM's own hook does. */
export async function sqlOf(orm: MikroORM, onQuery?: (sql: string) => void): Promise<Sql> {
  return new Sql(await orm.driver.getConnection().getNativeClient(), onQuery);
}
