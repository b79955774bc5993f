// PostgreSQL LISTEN on a dedicated connection, re-established after failures: how one instance
// hears about changes another made (e.g. a revoked API key) without polling. A listening connection
// only ever receives, so a peer that went silent (a half-open socket) would never be noticed; a
// heartbeat query with a bounded reply finds it, and the connection is replaced.
import pg from 'pg';
import type { Logger } from '../log.ts';
import { boundedClientOptions, destroyConnection, type ConnectionBounds } from './connections.ts';
import { loggedFailure } from './failures.ts';

export interface Listener {
  close(): Promise<void>;
}

export interface ListenOptions {
  bounds: ConnectionBounds;
  /** Wait between a lost connection and the next attempt. */
  retryMs?: number;
  /** How often the connection is checked while nothing arrives. */
  heartbeatMs?: number;
}

/**
 * Calls `onNotify` with each payload sent on `channel`, and with '' whenever the connection is
 * (re-)established: whatever was sent while nobody listened is unknown, so the owner starts afresh.
 */
export async function listen(
  url: string,
  channel: string,
  onNotify: (payload: string) => void,
  logger: Logger,
  { bounds, retryMs = 2000, heartbeatMs = 10_000 }: ListenOptions,
): Promise<Listener> {
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;

  const lost = (lostClient: pg.Client, error: unknown) => {
    if (client !== lostClient) return;
    client = undefined;
    clearInterval(heartbeat);
    destroyConnection(lostClient);
    if (!closed) logger.warn({ ...loggedFailure(error), channel }, 'lost the notification connection; reconnecting');
    schedule();
  };

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url, ...boundedClientOptions(bounds) });
    next.on('notification', (message) => {
      if (message.channel === channel) onNotify(message.payload ?? '');
    });
    next.on('error', (error) => lost(next, error));
    try {
      await next.connect();
      await next.query(`listen ${pg.escapeIdentifier(channel)}`);
    } catch (error) {
      destroyConnection(next);
      throw error;
    }
    client = next;
    // One heartbeat at a time: while one waits for its (bounded) reply, the ticks that come due are
    // skipped rather than queued behind it on the connection.
    let beating = false;
    heartbeat = setInterval(() => {
      if (beating) return;
      beating = true;
      next.query('select 1').then(
        () => (beating = false),
        (error: unknown) => lost(next, error),
      );
    }, heartbeatMs);
    heartbeat.unref();
    onNotify('');
  };
  const schedule = () => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      connect().catch(schedule);
    }, retryMs);
    retry.unref();
  };

  await connect();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      clearInterval(heartbeat);
      const last = client;
      client = undefined;
      if (!last) return;
      // A polite goodbye, but not a wait on a peer that stopped answering.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, bounds.connectTimeoutMs)));
      await Promise.race([last.end().catch(() => undefined), late]);
      clearTimeout(timer);
      destroyConnection(last);
    },
  };
}

/** Sends a notification that commits (or not) with the transaction `execute` belongs to. */
export const NOTIFY_SQL = 'select pg_notify(?, ?)';
