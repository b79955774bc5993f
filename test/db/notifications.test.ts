// The listening connection's heartbeat, when PostgreSQL stops answering: it finds the silent peer
// within its bound, and never stacks statements on the connection while one waits for its reply.
import { describe, expect, it } from 'vitest';
import { listen, type Listener } from '../../src/db/notifications.ts';
import { eventually } from '../support/steady-load.ts';
import { proxiedTestDatabase } from '../support/proxied-database.ts';
import { captureLogs } from '../support/captured-logs.ts';

// Every warning the process emits from here on.
const warnings: Error[] = [];
process.on('warning', (warning) => warnings.push(warning));

const database = proxiedTestDatabase();

describe('the notification connection', () => {
  it('sends one heartbeat at a time while PostgreSQL is silent, and replaces the connection once its reply is overdue', async () => {
    const reconnected: string[] = [];
    const { logger, logs } = captureLogs('warn');
    // A heartbeat far more often than a reply may take: while one waits, many more come due.
    const bounds = { connectTimeoutMs: 1000, statementTimeoutMs: 600 };
    let listener: Listener | undefined;
    try {
      listener = await listen(database.url, 'heartbeat_test', (payload) => reconnected.push(payload), logger, {
        bounds,
        retryMs: 50,
        heartbeatMs: 20,
      });
      expect(reconnected).toEqual(['']);
      await database.proxy.set('blackhole');
      // Lost once a heartbeat's reply is overdue (the statement timeout and a margin); back once PostgreSQL answers again.
      await eventually(
        () => logs.some((log) => String(log.msg).startsWith('lost the notification connection')),
        'the silent peer noticed',
        10_000,
      );
      // An outage is expected here: logged by what happened, without the driver's stack.
      const lost = logs.find((log) => String(log.msg).startsWith('lost the notification connection'))!;
      expect(lost.err).toBeTypeOf('string');
      await database.proxy.set('pass');
      await eventually(() => reconnected.length >= 2, 'the listener reconnected after the silence', 10_000);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((warning) => warning.message).filter((message) => message.includes('already executing a query'))).toEqual([]);
    } finally {
      await listener?.close();
    }
  });
});
