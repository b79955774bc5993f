// A transaction's edges cost round trips of their own: BEGIN waits for its answer before the first
// statement goes, and a COMMIT travels on its own after the last. Each round trip wakes both
// processes once more, which in a short transaction costs more than its statements do. So, on every
// connection of the pool:
// - BEGIN (as Kysely, under MikroORM, sends it) is held back and goes in one message with the
//   transaction's first statement when that statement is plain text (the simple query protocol runs
//   `begin; <statement>` in order, and the transaction stays open after it); before a statement with
//   bound values, it goes first on its own, as it always did.
// - A plain text that ends in COMMIT (`insert …; commit`) ends the transaction itself; the COMMIT or
//   ROLLBACK its caller sends next is answered at once, as PostgreSQL would answer it with nothing
//   but a warning. So is the end of a transaction whose BEGIN never went.
import type pg from 'pg';
import { queryAfter, type Query } from './query-wrapping.ts';

/** What a statement answered locally reports, in the shape node-postgres gives. */
function localResult(command: string): pg.QueryResult {
  return { command, rowCount: null, oid: 0, rows: [], fields: [] };
}

/** Plain text without bound values, in the promise form: a statement that can share BEGIN's message. */
function plainText(args: unknown[]): string | undefined {
  const [text, values] = args;
  if (args.length > 2 || typeof text !== 'string') return undefined;
  return values === undefined || (Array.isArray(values) && values.length === 0) ? text : undefined;
}

const ENDS_IN_COMMIT = /;\s*commit\s*$/i;

export function foldsTransactionEdges(pool: pg.Pool): void {
  /** Connections whose BEGIN is held back. */
  const held = new WeakSet<pg.Client>();
  /** Connections whose transaction a statement committed, and whose caller has yet to end it. */
  const ended = new WeakSet<pg.Client>();
  // A connection goes back to the pool only after its transaction ended, so neither holds then;
  // should one, the next borrower must not inherit it.
  pool.on('release', (_error: Error | undefined, client: pg.PoolClient) => {
    held.delete(client);
    ended.delete(client);
  });
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as Query;
    // Plain text in the promise form (plainText), so the answer is a promise.
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- as said
    const plain = (text: string) => query(text, []) as Promise<unknown>;
    const send = (text: string) => (ENDS_IN_COMMIT.test(text) ? plain(text).then((result) => (ended.add(client), result)) : plain(text));
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- every overload passes through; only the promise form of plain text is changed
    client.query = ((...args: unknown[]) => {
      const text = plainText(args);
      if (text === undefined) return held.delete(client) ? queryAfter(plain('begin'), query, args) : query(...args);
      const command = text.trim().toLowerCase();
      if (command === 'begin') {
        held.add(client);
        return Promise.resolve(localResult('BEGIN'));
      }
      if (command === 'commit' || command === 'rollback') {
        if (held.delete(client) || ended.delete(client)) return Promise.resolve(localResult(command.toUpperCase()));
        return query(...args);
      }
      if (!held.delete(client)) return send(text);
      // The caller's text answers with what follows BEGIN's result.
      return send(`begin; ${text}`).then((results) => {
        // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- several statements in one text answer with one result each
        const [, ...rest] = results as pg.QueryResult[];
        return rest.length === 1 ? rest[0] : rest;
      });
    }) as typeof client.query;
  });
}
