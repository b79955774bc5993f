// The delivery worker, in the test's process, on a test server's database (or on that database reached
// another way, through a fault-injecting proxy), logging into a list the test can read.
import type { DeliveryConfig } from '../../src/config.ts';
import { listen } from '../../src/db/notifications.ts';
import { openOrm, type MikroORM } from '../../src/db/orm.ts';
import { sqlOf } from '../../src/db/sql.ts';
import { SecretBox } from '../../src/webhooks/secret-box.ts';
import { DeliveryWorker } from '../../src/webhooks/worker.ts';
import { DELIVERIES_CHANNEL } from '../../src/webhooks/delivery-notifier.ts';
import { TEST_WEBHOOK_SECRET_KEY, type TestServer } from './server.ts';
import { captureLogs } from './captured-logs.ts';

/** Millisecond waits, so a whole schedule runs within a test. */
export const TEST_DELIVERY: DeliveryConfig = {
  retryScheduleMs: [0, 40, 80, 120],
  timeoutMs: 1000,
  concurrency: 16,
  endpointConcurrency: 16,
  ownerConcurrency: 16,
  pollMs: 50,
};

/** Bounds on every wait for PostgreSQL, short enough for fault tests. */
const BOUNDS = { connectTimeoutMs: 1000, statementTimeoutMs: 1000 };

export interface TestWorker {
  /** Every log line the worker wrote, parsed. */
  logs: Record<string, unknown>[];
  stop(): Promise<void>;
}

export async function startTestWorker(
  server: TestServer,
  delivery: Partial<DeliveryConfig> = {},
  { databaseUrl }: { databaseUrl?: string } = {},
): Promise<TestWorker> {
  const { logger, logs } = captureLogs('info');
  // A pool of its own when the database is reached another way.
  const orm: MikroORM | undefined = databaseUrl ? await openOrm(databaseUrl, { poolMax: 4, bounds: BOUNDS, logger }) : undefined;
  const worker = new DeliveryWorker({
    sql: await sqlOf(orm ?? server.orm),
    box: new SecretBox(TEST_WEBHOOK_SECRET_KEY),
    policy: { allowHttp: true, allowedHosts: ['127.0.0.1'] },
    delivery: { ...TEST_DELIVERY, ...delivery },
    logger,
    metrics: server.metrics,
    listen: (onNotify) =>
      listen(databaseUrl ?? server.databaseUrl, DELIVERIES_CHANNEL, onNotify, logger, { bounds: BOUNDS, retryMs: 200, heartbeatMs: 500 }),
  });
  await worker.start();
  // Once, however often a test and its clean-up ask.
  let stopped: Promise<void> | undefined;
  return {
    logs,
    stop: () =>
      (stopped ??= (async () => {
        await worker.stop();
        await orm?.close();
      })()),
  };
}
