// A transaction's edges cost round trips of their own: BEGIN waits for its answer before the first
// statement goes, and a COMMIT travels on its own after the last. Each round trip wakes both
// processes once more, which in a short transaction costs more than its statements do. So, on every
// connection of the pool:
// - BEGIN (as Kysely, under MikroORM, sends it) is held back and goes in one message with the
//   transaction's first statement: with a plain text, as `begin; <statement>` in the simple query
//   protocol; with a statement whose values are bound, as a pipeline of both (pipeline.ts). Before a
//   statement in the callback form, it goes first on its own, as it always did.
// - Riders (`riderText`) are statements with bound values that must open the transaction, such as
//   the claim of an idempotency key: held back with BEGIN, they go in its pipeline, before the first
//   statement. A rider that fails stops the statements after it (the pipeline skips them); when the
//   failure is the rider's refusal, the transaction is refused: every statement after it fails with
//   that refusal without being sent, until its ROLLBACK.
// - A plain text that ends in COMMIT (`insert …; commit`) ends the transaction itself; the COMMIT or
//   ROLLBACK its caller sends next is answered at once, as PostgreSQL would answer it with nothing
//   but a warning. So is the end of a transaction whose BEGIN never went.
import type pg from 'pg';
import { runPipeline, type Step } from './pipeline.ts';
import { preparedNameOf } from './prepared.ts';
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

/** A statement with bound values in the promise form, as a step of a pipeline; undefined for any other form. */
function boundStep(args: unknown[]): Step | undefined {
  const [text, values] = args;
  if (args.length !== 2 || typeof text !== 'string' || !Array.isArray(values)) return undefined;
  return { text, values, name: preparedNameOf(text) };
}

/** A statement that opens its transaction, in the message of the transaction's first statement. */
export interface Rider {
  /** With `$1`, `$2` … for `values`; when marked by `prepared`, prepared once per connection (pipeline.ts). */
  text: string;
  values: readonly unknown[];
  /** Whether an error of the pipeline that carried the rider is the rider's refusal. */
  refused(error: unknown): boolean;
}

/** Riders on their way to a connection, by the number in their text. */
const riders = new Map<number, Rider>();
let lastRider = 0;
const RIDER = /^\/\* rider:(\d+) \*\/$/;

/** A text that, run on a connection whose transaction just began, holds `rider` back with its BEGIN. */
export function riderText(rider: Rider): string {
  riders.set(++lastRider, rider);
  return `/* rider:${lastRider} */`;
}

const stepOf = (rider: Rider): Step => ({ text: rider.text, values: rider.values, name: preparedNameOf(rider.text) });
const BEGIN: Step = { text: 'begin', values: [] };

/** Answers a statement with `error` without sending it, in the form its caller asked for. */
function fail(args: unknown[], error: unknown): unknown {
  const last = args.at(-1);
  // The refusal is the error PostgreSQL answered with, so an Error.
  const reason = error instanceof Error ? error : new Error(String(error));
  if (typeof last !== 'function') return Promise.reject(reason);
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- node-postgres's callbacks take the error first
  queueMicrotask(() => (last as (error: unknown) => void)(reason));
  return undefined;
}

const ENDS_IN_COMMIT = /;\s*commit\s*$/i;

export function foldsTransactionEdges(pool: pg.Pool): void {
  /** Connections whose BEGIN is held back, with the riders held back with it. */
  const held = new WeakMap<pg.Client, Rider[]>();
  /** Connections whose transaction a statement committed, and whose caller has yet to end it. */
  const ended = new WeakSet<pg.Client>();
  /** Connections whose transaction a rider refused, with the refusal. */
  const refused = new WeakMap<pg.Client, unknown>();
  // A connection goes back to the pool only after its transaction ended, so none of these holds
  // then; should one, the next borrower must not inherit it.
  pool.on('release', (_error: Error | undefined, client: pg.PoolClient) => {
    held.delete(client);
    ended.delete(client);
    refused.delete(client);
  });
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as Query;
    // Plain text in the promise form (plainText), so the answer is a promise.
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- as said
    const plain = (text: string) => query(text, []) as Promise<unknown>;
    const send = (text: string) => (ENDS_IN_COMMIT.test(text) ? plain(text).then((result) => (ended.add(client), result)) : plain(text));
    /** Runs `steps` in one pipeline; when it fails with the refusal of a rider among them, the transaction is refused. */
    const carry = (carried: Rider[], steps: Step[]) =>
      runPipeline(query, steps).catch((error: unknown) => {
        if (carried.some((rider) => rider.refused(error))) refused.set(client, error);
        throw error;
      });
    /** Runs the held BEGIN and riders with `steps` after them. */
    const start = (waiting: Rider[], steps: Step[]) => carry(waiting, [BEGIN, ...waiting.map(stepOf), ...steps]);
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- every overload passes through; only the promise form is changed
    client.query = ((...args: unknown[]) => {
      const text = plainText(args);
      const command = text?.trim().toLowerCase();
      if (refused.has(client)) {
        if (command !== 'rollback') return fail(args, refused.get(client));
        refused.delete(client);
        return query(...args);
      }
      const waiting = held.get(client);
      if (text === undefined) {
        if (waiting === undefined) return query(...args);
        held.delete(client);
        const step = boundStep(args);
        if (step === undefined) return queryAfter(start(waiting, []), query, args);
        return start(waiting, [step]).then((results) => results.at(-1));
      }
      const rider = RIDER.exec(text);
      if (rider) {
        const own = riders.get(Number(rider[1]))!;
        riders.delete(Number(rider[1]));
        if (waiting === undefined) {
          // No BEGIN held back (a transaction already under way): the rider goes now, on its own.
          return carry([own], [stepOf(own)]);
        }
        waiting.push(own);
        return Promise.resolve(localResult('SELECT'));
      }
      if (command === 'begin') {
        held.set(client, []);
        return Promise.resolve(localResult('BEGIN'));
      }
      if (command === 'commit' || command === 'rollback') {
        if (waiting !== undefined) {
          held.delete(client);
          // Riders with nothing after them still go when the transaction is to be kept.
          if (command === 'commit' && waiting.length > 0)
            return start(waiting, [{ text: 'commit', values: [] }]).then((results) => results.at(-1));
          return Promise.resolve(localResult(command.toUpperCase()));
        }
        if (ended.delete(client)) return Promise.resolve(localResult(command.toUpperCase()));
        return query(...args);
      }
      if (waiting === undefined) return send(text);
      held.delete(client);
      // Riders bind values, which the simple query protocol cannot: they go first, in a pipeline with BEGIN.
      if (waiting.length > 0) return start(waiting, []).then(() => send(text));
      // The caller's text answers with what follows BEGIN's result.
      return send(`begin; ${text}`).then((results) => {
        // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- several statements in one text answer with one result each
        const [, ...rest] = results as pg.QueryResult[];
        return rest.length === 1 ? rest[0] : rest;
      });
    }) as typeof client.query;
  });
}
