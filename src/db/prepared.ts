// Raw SQL sent through MikroORM (em.execute) reaches PostgreSQL with its values inlined into the text,
// so PostgreSQL parses and plans it on every call. A statement made with `prepared(name, text)` and run
// with `runPrepared` keeps its values apart and is sent as a named prepared statement: parsed and
// planned once per connection, then only bound and run. For a handful of fixed statements on the hot
// path of writes, inside their transaction; reads use named statements of their own (sql.ts).
import { CompiledQuery, type Kysely } from 'kysely';
import type pg from 'pg';

const MARKER = /^\/\* prepared:(\w+) \*\//;

/** The statement's text, marked to be prepared under `name` on each connection that runs it. */
export function prepared(name: string, text: string): string {
  return `/* prepared:${name} */ ${text}`;
}

/** The name a text was marked with by `prepared`; undefined for other texts. */
export function preparedNameOf(text: string): string | undefined {
  return MARKER.exec(text)?.[1];
}

/**
 * What runs a statement: an entity manager, in its transaction when it has one (the ORM's global one
 * runs it straight on the pool, for a write that is one statement and needs no unit of work); or a
 * keyed write's transaction (services/idempotency.ts).
 */
export interface StatementRunner {
  getKysely(): Pick<Kysely<unknown>, 'executeQuery'>;
}

/**
 * Runs a statement (`$1`, `$2` … placeholders) with bound values on `em`'s connection: in its
 * transaction when it has one, which is the point (em.execute would inline the values).
 */
export async function runPrepared<T>(em: StatementRunner, text: string, values: readonly unknown[]): Promise<T[]> {
  const result = await em.getKysely().executeQuery<T>(CompiledQuery.raw(text, [...values]));
  return [...result.rows];
}

/** Makes every connection of `pool` send marked statements as named prepared statements. */
export function preparesMarkedStatements(pool: pg.Pool): void {
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- every overload passes through; a marked text with its values becomes the config form
    client.query = ((...args: unknown[]) => {
      const [text, values, ...rest] = args;
      const name = typeof text === 'string' ? preparedNameOf(text) : undefined;
      if (name === undefined || typeof text !== 'string') return query(...args);
      // Prepared without its mark, so that a read prepared under its name on the pool (sql.ts) and
      // the same read in a transaction are one statement to the connection.
      return query({ name, text: text.slice(prepared(name, '').length), values }, ...rest);
    }) as typeof client.query;
  });
}
