// What every test of webhook deliveries starts with: a test server whose endpoints may point at
// 127.0.0.1, a receiver there, and a delivery worker on the server's database.
import { loadConfig, type Config, type DeliveryConfig } from '../../src/config.ts';
import { startReceiver, type Receiver } from './receiver.ts';
import { startTestServer, type TestServer } from './server.ts';
import { startTestWorker, type TestWorker } from './worker.ts';

export interface DeliveryRig {
  server: TestServer;
  receiver: Receiver;
  worker: TestWorker;
  /** Stops the worker, then the receiver, then the server. */
  close(): Promise<void>;
}

/** Settings under which webhook endpoints may point at 127.0.0.1, where the receiver listens. */
export function localWebhooks(): Pick<Config, 'webhooks'> {
  return { webhooks: { ...loadConfig({}).webhooks, allowedHosts: ['127.0.0.1'] } };
}

export async function startDeliveryRig(overrides: Partial<Config> = {}, delivery: Partial<DeliveryConfig> = {}): Promise<DeliveryRig> {
  const server = await startTestServer({ ...overrides, ...localWebhooks() });
  const receiver = await startReceiver();
  const worker = await startTestWorker(server, delivery);
  return {
    server,
    receiver,
    worker,
    close: async () => {
      await worker.stop();
      await receiver.close();
      await server.close();
    },
  };
}
