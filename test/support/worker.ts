// The delivery worker, in the test's process, on a test server's database.
import { loadConfig, type DeliveryConfig } from '../../src/config.ts';
import { databaseBounds } from '../../src/db/database.ts';
import { listen } from '../../src/db/notifications.ts';
import { sqlOf } from '../../src/db/sql.ts';
import { createLogger } from '../../src/log.ts';
import { SecretBox } from '../../src/webhooks/secret-box.ts';
import { DELIVERIES_CHANNEL, DeliveryWorker } from '../../src/webhooks/worker.ts';
import { TEST_WEBHOOK_SECRET_KEY, type TestServer } from './server.ts';

/** Millisecond waits, so a whole schedule runs within a test. */
export const TEST_DELIVERY: DeliveryConfig = { retryScheduleMs: [0, 40, 80, 120], timeoutMs: 1000, concurrency: 16, pollMs: 50 };

export async function startTestWorker(server: TestServer, delivery: Partial<DeliveryConfig> = {}): Promise<DeliveryWorker> {
  const logger = createLogger('silent');
  const bounds = databaseBounds(loadConfig({}));
  const worker = new DeliveryWorker({
    sql: await sqlOf(server.orm),
    box: new SecretBox(TEST_WEBHOOK_SECRET_KEY),
    policy: { allowHttp: true, allowedHosts: ['127.0.0.1'] },
    delivery: { ...TEST_DELIVERY, ...delivery },
    logger,
    listen: (onNotify) => listen(server.databaseUrl, DELIVERIES_CHANNEL, onNotify, logger, { bounds }),
  });
  await worker.start();
  return worker;
}
