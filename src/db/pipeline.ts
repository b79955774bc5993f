// Several statements with bound values in one message, ended by one Sync: PostgreSQL runs them in
// order, and once one fails it skips the rest (the extended query protocol's error recovery), so a
// statement placed first can stop the ones after it. Each statement's values stay bound, never
// written into its text: a failing statement is logged by PostgreSQL with its placeholders only.
//
// node-postgres sends every query with a Sync of its own; this is one of its queries (its Query
// class, which already collects the results of several statements) that writes its messages itself.
import { createRequire } from 'node:module';
import type pg from 'pg';

/**
 * A statement of the pipeline. With a `name`, it is prepared on each connection the first time a
 * pipeline there runs it, and only bound after that.
 */
export interface Step {
  text: string;
  values: readonly unknown[];
  name?: string;
}

/** What the pipeline needs of node-postgres's connection (pg/lib/connection.js). */
interface Connection {
  stream: { cork?: () => void; uncork?: () => void };
  parse(query: { text: string; name: string; types: unknown[] }): void;
  close(message: { type: 'S'; name: string }): void;
  bind(config: { portal: string; statement: string; values: unknown[] }): void;
  describe(message: { type: 'P'; name: string }): void;
  execute(config: { portal: string; rows: number }): void;
  sync(): void;
}

interface QueryInstance {
  submit(connection: Connection): Error | null;
  text: string;
}
type QueryClass = new (config: { text: string; callback: (error: Error | null, result: unknown) => void }) => QueryInstance;

const require = createRequire(import.meta.url);
// eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- node-postgres's own modules, without types of their own; the shapes above are what they export
const Query = require('pg/lib/query.js') as QueryClass;
// eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- as said
const { prepareValue } = require('pg/lib/utils.js') as { prepareValue(value: unknown): unknown };

/**
 * The statements each connection has prepared for pipelines. Under names of their own (`pipelined_`
 * and the step's name), apart from those node-postgres prepares, which it tracks itself: when a
 * pipeline fails, whether its new statements were prepared is unknown, so the next pipeline that
 * needs one closes it first, which is no error when it does not exist.
 */
const preparedOn = new WeakMap<Connection, Set<string>>();
const pipelinedName = (name: string) => `pipelined_${name}`;

class PipelinedQuery extends Query {
  readonly #steps: readonly Step[];
  #preparing: { connection: Connection; names: string[] } | undefined;

  constructor(steps: readonly Step[], callback: (error: Error | null, result: unknown) => void) {
    // The text is what the query reads as, in errors and in notes of what was sent.
    super({
      text: steps.map((step) => step.text).join('; '),
      callback: (error, result) => {
        if (error === null && this.#preparing) {
          const { connection, names } = this.#preparing;
          for (const name of names) preparedOn.get(connection)?.add(name);
        }
        callback(error, result);
      },
    });
    this.#steps = steps;
  }

  override submit(connection: Connection): Error | null {
    let bound: unknown[][];
    try {
      // Converted before anything is written, so that a value that cannot be sent leaves the connection untouched.
      bound = this.#steps.map((step) => step.values.map((value) => prepareValue(value)));
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
    let prepared = preparedOn.get(connection);
    if (prepared === undefined) preparedOn.set(connection, (prepared = new Set()));
    const preparing: string[] = [];
    this.#preparing = { connection, names: preparing };
    connection.stream.cork?.();
    try {
      this.#steps.forEach((step, index) => {
        // A statement without a name is parsed as the unnamed statement, which each Parse replaces.
        const name = step.name === undefined ? '' : pipelinedName(step.name);
        if (name === '' || !prepared.has(name)) {
          if (name !== '') {
            connection.close({ type: 'S', name });
            preparing.push(name);
          }
          connection.parse({ text: step.text, name, types: [] });
        }
        connection.bind({ portal: '', statement: name, values: bound[index]! });
        connection.describe({ type: 'P', name: '' });
        connection.execute({ portal: '', rows: 0 });
      });
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }
}

/**
 * Runs `steps` on `query` (a connection's `client.query`, or a wrapper of it that passes objects
 * through) in one message; answers with the result of each statement, in order, or the first error.
 */
export function runPipeline(query: (...args: unknown[]) => unknown, steps: readonly Step[]): Promise<pg.QueryResult[]> {
  return new Promise((resolve, reject) => {
    query(
      new PipelinedQuery(steps, (error, results) => {
        if (error) reject(error);
        // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- node-postgres answers several statements with one result each, one with its result
        else resolve((Array.isArray(results) ? results : [results]) as pg.QueryResult[]);
      }),
    );
  });
}
