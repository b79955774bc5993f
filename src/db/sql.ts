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

/** Shared reads under way (Sql.sharedRows), by pool and statement. */
const SHARED_READS = new WeakMap<pg.Pool, Map<string, Promise<unknown[]>>>();

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
   * The rows of a read that takes no values, shared by every request of the pool that asks while it
   * is under way: one such statement at a time however many ask (a count of the users, which reads
   * the whole table: a document of fifteen aliased pages, or fifteen such requests at once, ran it
   * fifteen times side by side, and held as many connections). A request that asks after it ended
   * runs it afresh, so an answer never predates the request by more than one run of the statement.
   * Inside a write's transaction the read runs there, seeing what it wrote.
   */
  async sharedRows<T>(query: Statement): Promise<T[]> {
    if (this.#transaction?.()) return this.rows<T>(query, []);
    this.#stop?.throwIfAborted();
    let underWay = SHARED_READS.get(this.#pool);
    if (!underWay) SHARED_READS.set(this.#pool, (underWay = new Map<string, Promise<unknown[]>>()));
    let rows = underWay.get(query.name);
    if (!rows) {
      this.#onQuery?.(query.text);
      const running = this.#pool.query({ name: query.name, text: query.text }).then((result): unknown[] => result.rows as unknown[]);
      rows = running.finally(() => underWay.delete(query.name));
      underWay.set(query.name, rows);
    }
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- rows of the statement named, whose callers all read it as T
    return (await rows) as T[];
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
