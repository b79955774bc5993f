// Every wait on PostgreSQL has a bound, on both ends of the wire. node-postgres waits forever by
// default: for a pooled connection, for a connection to open, for a reply. Over a connection whose
// peer went silent (packets dropped, a half-open socket) a reply never comes, and the connection
// would go back to the pool still waiting, until every request waits behind it. So: a connection
// that stopped answering is destroyed, never reused; the server aborts transactions left idle.
import pg from 'pg';
import { KnownOutageError, type DatabaseAvailability } from './availability.ts';
import { databaseFailureOf, isDeadClientRefusal } from './failures.ts';

export interface ConnectionBounds {
  /** Longest wait for a pooled connection, including opening a new one (connect and log-in). */
  connectTimeoutMs: number;
  /** PostgreSQL's statement_timeout; past it the server cancels the statement. */
  statementTimeoutMs: number;
}

/**
 * How much longer than the statement timeout the client waits for a reply before it decides the
 * connection is dead: the server's cancellation normally answers first.
 */
const REPLY_MARGIN_MS = 1000;
/** How often `watchReplies` looks at a pool's connections. */
const WATCH_EVERY_MS = 100;
/** TCP keepalive lets the kernel notice a peer that vanished while a connection sat idle. */
const KEEPALIVE_INITIAL_DELAY_MS = 10_000;

/** How long a reply may take before its connection is taken for dead. */
export function replyTimeoutMs(bounds: ConnectionBounds): number {
  return bounds.statementTimeoutMs + REPLY_MARGIN_MS;
}

/**
 * Options for a pg Pool that bound every wait but the reply to a statement, which `watchReplies`
 * bounds for the whole pool.
 */
export function boundedConnectionOptions(bounds: ConnectionBounds): pg.ClientConfig & pg.PoolConfig {
  return {
    connectionTimeoutMillis: bounds.connectTimeoutMs,
    statement_timeout: bounds.statementTimeoutMs,
    // A transaction whose client went silent (its COMMIT lost on the way) would keep its locks until
    // TCP gave up, which can take many minutes; the server ends it as soon as the client would have.
    idle_in_transaction_session_timeout: replyTimeoutMs(bounds),
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_INITIAL_DELAY_MS,
  };
}

/** Options for a lone pg Client, which sends few statements: node-postgres bounds each reply itself. */
export function boundedClientOptions(bounds: ConnectionBounds): pg.ClientConfig {
  return { ...boundedConnectionOptions(bounds), query_timeout: replyTimeoutMs(bounds) };
}

/** What `watchReplies` reads of node-postgres's pool and clients, which keep it on untyped fields. */
interface Watched {
  _clients: { _activeQuery?: object | null }[];
}

/**
 * Bounds the reply to every statement on a pool's connections with one timer for the pool.
 * node-postgres's own bound (`query_timeout`) arms a timer for each statement, whose callback holds
 * the statement and, once they come, its rows. Under load that carried them out of the young
 * generation into the old: serving `users(first: 20)`, the old generation grew by 0.81 MB per
 * young-generation collection with it and 0.34 MB without, and no full collection (which stalls
 * every request in flight) came during the load, where two did.
 *
 * The pool's connections are looked at every 100 ms (a quarter of the bound, if that is shorter): one
 * whose statement has waited for its reply for the whole bound is destroyed, which fails that
 * statement (and any queued behind it) with "Connection terminated unexpectedly", and `guardPool`
 * hands it back to the pool. A silent connection is so given up within 100 ms after the bound.
 */
export function watchReplies(pool: pg.Pool, bounds: ConnectionBounds): void {
  const limitMs = replyTimeoutMs(bounds);
  // Often enough that a silent connection is given up close to the bound, as node-postgres's timer
  // would; a look is a walk over the pool's few connections.
  const everyMs = Math.min(limitMs / 4, WATCH_EVERY_MS);
  /**
   * When each statement on the wire was first seen. Keyed weakly by the statement, whose rows it must
   * not keep alive (the timers it replaces did); the value is a number, which leads nowhere.
   */
  const firstSeen = new WeakMap<object, number>();
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- node-postgres's own fields, as described by Watched
  const watched = pool as unknown as Watched;
  const timer = setInterval(() => {
    if (pool.ended) {
      clearInterval(timer);
      return;
    }
    const now = Date.now();
    // Read afresh each time: the pool replaces its array of connections when it drops one.
    for (const client of watched._clients) {
      const statement = client._activeQuery;
      if (!statement) continue;
      const since = firstSeen.get(statement);
      if (since === undefined) firstSeen.set(statement, now);
      else if (now - since >= limitMs) {
        // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- a pool's client is a pg.Client
        destroyConnection(client as unknown as pg.Client);
      }
    }
  }, everyMs);
  timer.unref();
}

/** Closes a connection's socket at once; pending queries fail and the pool drops it on release. */
export function destroyConnection(client: pg.Client | pg.PoolClient): void {
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- node-postgres keeps the socket on an untyped field
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}

/**
 * Makes a pool report to `availability` and drop connections that stopped answering, at once.
 * node-postgres fails the statements of a connection that closed (`watchReplies` closes one whose
 * reply is overdue), but a connection whose failure came otherwise would go back to the pool still
 * waiting; and Kysely (under MikroORM) hands a connection back only after a COMMIT or ROLLBACK that
 * succeeded, so a transaction whose connection died would hold its pool slot forever. A dead
 * connection is therefore destroyed and given back to the pool here, whoever holds it.
 */
export function guardPool(pool: pg.Pool, availability: DatabaseAvailability | undefined): void {
  /** The current checkout's release of each client, made idempotent: the holder may still call it. */
  const releases = new WeakMap<pg.PoolClient, (error?: Error | boolean) => void>();
  type Callback = (error: Error | undefined, client?: pg.PoolClient, release?: unknown) => void;
  const connect = pool.connect.bind(pool) as { (): Promise<pg.PoolClient>; (callback: Callback): void };
  /** What a checkout that failed says of the database. */
  const connectFailed = (error: unknown, startedAt: number) => {
    if (databaseFailureOf(error) === 'unreachable') availability?.failed(error, startedAt);
  };
  /** A checkout not even tried, the database being known to be unreachable; else undefined. */
  const refused = (startedAt: number) => {
    if (!availability?.refusing) return undefined;
    const error = new KnownOutageError();
    availability.failed(error, startedAt);
    return error;
  };
  // Both forms are used: the promise by Kysely (under MikroORM, for writes), the callback by the
  // pool's own `query` (plain reads, db/sql.ts).
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- answers each overload as the original does
  pool.connect = ((callback?: Callback) => {
    const startedAt = Date.now();
    const refusal = refused(startedAt);
    if (callback) {
      // The pool answers a checkout on a later tick, never before its caller returns.
      if (refusal) process.nextTick(callback, refusal);
      else
        connect((error, client, release) => {
          if (error) connectFailed(error, startedAt);
          callback(error, client, release);
        });
      return;
    }
    if (refusal) return Promise.reject(refusal);
    return connect().then(
      (client) => {
        const release = client.release.bind(client);
        let released = false;
        const once = (error?: Error | boolean) => {
          if (released) return;
          released = true;
          release(error);
        };
        client.release = once;
        releases.set(client, once);
        return client;
      },
      (error: unknown) => {
        connectFailed(error, startedAt);
        throw error;
      },
    );
  }) as typeof pool.connect;

  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    /**
     * When each statement sent on the connection and not yet answered was sent, oldest first. When
     * the connection fails, every statement queued on it fails with it however late it was sent:
     * the failure is evidence from the time the oldest was sent, whose reply never came, not of an
     * outage that began after the database was last seen answering.
     */
    const unanswered: number[] = [];
    /**
     * Since when the connection is known lost: a statement sent on it later still fails (a ROLLBACK
     * once its request was answered, say), and is evidence from that time, not news of another outage.
     */
    let lostSince: number | undefined;
    /** What a statement's outcome says of the database and of its connection. */
    const forget = (startedAt: number) => {
      const at = unanswered.indexOf(startedAt);
      if (at >= 0) unanswered.splice(at, 1);
    };
    const answered = (error: unknown, startedAt: number) => {
      const since = lostSince ?? unanswered[0] ?? startedAt;
      forget(startedAt);
      if (!error) {
        availability?.succeeded(startedAt);
        return;
      }
      const failure = databaseFailureOf(error);
      // Lost, or holding statements prepared for tables that have since changed shape (a fresh
      // connection prepares them anew): given up either way.
      if (failure !== 'unreachable' && failure !== 'schema-changed') return;
      destroyConnection(client);
      releases.get(client)?.(error instanceof Error ? error : true);
      if (failure === 'unreachable') {
        lostSince = since;
        if (!isDeadClientRefusal(error)) availability?.failed(error, since);
      }
    };
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- every overload passes through unchanged
    client.query = ((...args: unknown[]) => {
      const startedAt = Date.now();
      unanswered.push(startedAt);
      // The callback form: the pool's own `query` (plain reads) sends its statement so.
      const last = args.at(-1);
      if (typeof last === 'function') {
        args[args.length - 1] = (error: unknown, result: unknown) => {
          answered(error, startedAt);
          Reflect.apply(last, undefined, [error, result]);
        };
      }
      let result: unknown;
      try {
        result = query(...args);
      } catch (error) {
        forget(startedAt);
        throw error;
      }
      if (result instanceof Promise) {
        result.then(
          () => answered(undefined, startedAt),
          (error: unknown) => answered(error, startedAt),
        );
      } else if (typeof last !== 'function') forget(startedAt);
      return result;
    }) as typeof client.query;
  });
}

/** Resolves when PostgreSQL answers `select 1` on a new connection of its own, within the bounds. */
export async function probeDatabase(url: string, bounds: ConnectionBounds): Promise<void> {
  const client = new pg.Client({ connectionString: url, ...boundedClientOptions(bounds) });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
  } catch (error) {
    destroyConnection(client);
    throw error;
  }
  await client.end();
}
