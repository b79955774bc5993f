// PostgreSQL LISTEN on a dedicated connection, re-established after failures: how one instance
// hears about changes another made (e.g. a revoked API key) without polling.
import pg from 'pg';
import type { Logger } from '../log.ts';

export interface Listener {
  close(): Promise<void>;
}

export async function listen(
  url: string,
  channel: string,
  onNotify: (payload: string) => void,
  logger: Logger,
  retryMs = 5000,
): Promise<Listener> {
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url });
    next.on('notification', (message) => {
      if (message.channel === channel) onNotify(message.payload ?? '');
    });
    next.on('error', (error) => {
      logger.warn({ err: error, channel }, 'lost the notification connection; reconnecting');
      void next.end().catch(() => undefined);
      if (client === next) client = undefined;
      schedule();
    });
    await next.connect();
    await next.query(`listen ${pg.escapeIdentifier(channel)}`);
    client = next;
    // Whatever was sent while nobody listened is unknown: tell the owner to start afresh.
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
      await client?.end().catch(() => undefined);
    },
  };
}

/** Sends a notification that commits (or not) with the transaction `execute` belongs to. */
export const NOTIFY_SQL = 'select pg_notify(?, ?)';
