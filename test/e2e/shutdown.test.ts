// The service as a process, asked to stop at a moment of its start: whatever had started stops with
// it, in order, and the process exits cleanly instead of serving on with nothing to stop it.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { startServiceProcess } from '../support/service-process.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe('a stop asked for during the start', { timeout: 60_000 }, () => {
  it('drains the API it went on to start, begins no worker, and exits cleanly', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'portico-shutdown-'));
    try {
      const service = await startServiceProcess(server.databaseUrl, dataDir, 'stop-once-listening', { role: 'all' });
      expect(await service.exited).toBe(0);
      const messages = service
        .output()
        .split('\n')
        .filter(Boolean)
        .map((line) => (JSON.parse(line) as { msg: string }).msg);
      expect(messages).toEqual(expect.arrayContaining(['shutting down', 'draining requests', 'stopped']));
      expect(messages).not.toContain('webhook worker started');
      // Stopped once: what had started by the signal is not stopped a second time.
      expect(messages.filter((message) => message === 'shutting down')).toHaveLength(1);
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });
});
