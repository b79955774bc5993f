// The rate limit store (Redis) misbehaving at the network level, under steady load: a TCP proxy
// between the service and a private redis-server swallows every packet, resets connections, or
// slows replies past the command timeout. For each fault requests keep being served (the limiter
// fails open) without each waiting out the command timeout once the outage is known; /ready
// reports the degradation; and after the restore budgets are counted again within seconds, without
// a restart: a key over its limit is refused again.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { REDIS_COMMAND_TIMEOUT_MS } from '../../src/rate-limit/open.ts';
import { runs } from '../support/long-mode.ts';
import { SKIP_REDIS, startTestRedis, type TestRedis } from '../support/redis.ts';
import { boundedFetch, eventually, startSteadyLoad } from '../support/steady-load.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { startTcpProxy, type Fault, type TcpProxy } from '../support/tcp-proxy.ts';

const FAULT_MS = runs(2500, 15_000);
/** How long the fault lasts at least once the outage is known: the window in which requests must flow. */
const KNOWN_MS = 1500;
const WORKERS = runs(6, 16);
/** How soon after the restore budgets must be counted again. */
const RECOVERY_MS = 10_000;

describe.skipIf(SKIP_REDIS)('Redis behind faults', () => {
  let redis: TestRedis;
  let proxy: TcpProxy;
  let server: TestServer;

  beforeAll(async () => {
    redis = await startTestRedis();
    const { port } = new URL(redis.url);
    proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(port) });
    server = await startTestServer({
      rateLimit: { max: 1_000_000, unidentifiedMax: 1_000_000, windowMs: 60_000, redisUrl: proxy.proxiedUrl(redis.url) },
    });
  });
  afterAll(async () => {
    await server?.close();
    await proxy?.close();
    await redis?.stop();
  });

  const metered = (headers: Headers | undefined) => headers?.get('ratelimit') != null;
  const ready = async () => (await boundedFetch(`${server.url}/ready`, {}, 2500)).body as { rateLimits: { degraded: boolean } };

  it('reports the store degraded from the start when it cannot be reached then, and healthy once it can', { timeout: 60_000 }, async () => {
    // A proxy of its own: refusing on the shared one would cut the other tests' server off too, and
    // its reconnection could then log an outage of its own into the next test.
    const { port } = new URL(redis.url);
    const own = await startTcpProxy({ host: '127.0.0.1', port: Number(port) });
    onTestFinished(() => own.close());
    await own.set('refuse');
    const late = await startTestServer({
      rateLimit: { max: 1_000_000, unidentifiedMax: 1_000_000, windowMs: 60_000, redisUrl: own.proxiedUrl(redis.url) },
    });
    onTestFinished(() => late.close());
    const readyAt = async () => (await boundedFetch(`${late.url}/ready`, {}, 2500)).body as { rateLimits: { degraded: boolean } };
    // Before any request has met the store.
    expect((await readyAt()).rateLimits.degraded).toBe(true);
    await own.set('pass');
    await eventually(async () => !(await readyAt()).rateLimits.degraded, '/ready reports the store healthy', RECOVERY_MS);
  });

  it.for<[string, Fault]>([
    ['dropped packets', 'blackhole'],
    ['reset connections', 'reset'],
    ['replies slower than the command timeout', { latencyMs: 2500 }],
  ])(
    'with %s: serves unmetered at full speed, then meters again after the restore',
    { timeout: 90_000 },
    async ([, fault], { annotate }) => {
      const logsBefore = server.logs.length;
      const load = startSteadyLoad(WORKERS, async () => {
        const answer = await boundedFetch(`${server.url}/users?limit=1`, { headers: { 'x-api-key': server.apiKey } }, 10_000);
        return { name: metered(answer.headers) ? 'metered' : 'unmetered', status: answer.status };
      });
      onTestFinished(() => load.stop());
      await eventually(() => load.outcomes.some((o) => o.name === 'metered'), 'requests are metered', 5000);

      await proxy.set(fault);
      const faultStart = Date.now();
      await eventually(async () => (await ready()).rateLimits.degraded, '/ready reports the store degraded', 10_000);
      const knownAt = Date.now();
      // Detection can take up to a command timeout, so the window that counts is measured from it.
      await eventually(
        () => Date.now() - faultStart >= FAULT_MS && Date.now() - knownAt >= KNOWN_MS,
        'the fault has lasted',
        FAULT_MS + KNOWN_MS,
      );
      const restoredAt = Date.now();
      await proxy.set('pass');

      await eventually(
        () => load.between(restoredAt, Infinity).some((o) => o.name === 'metered'),
        'budgets are counted again after the restore',
        RECOVERY_MS,
      );
      await eventually(async () => !(await ready()).rateLimits.degraded, '/ready reports the store healthy', RECOVERY_MS);
      await load.stop();

      // Nothing failed: the limiter fails open.
      expect(load.outcomes.filter((o) => o.status !== 200)).toEqual([]);
      // Once the outage is known, requests do not wait for a store that does not answer: the load
      // keeps going at the pace of the API. Had each request waited out the command timeout, a
      // worker could have started at most one per timeout in the window; several times that count
      // shows they did not (a real request here takes milliseconds).
      const unmeteredAfterKnown = load.between(knownAt, restoredAt).filter((o) => o.name === 'unmetered');
      const ifEachWaited = WORKERS * Math.ceil((restoredAt - knownAt) / REDIS_COMMAND_TIMEOUT_MS);
      expect(unmeteredAfterKnown.length).toBeGreaterThan(3 * ifEachWaited);

      // Limits apply again: a key over its budget is refused.
      const key = await server.createKey({ name: 'After the fault', rateLimitPerMinute: 2 });
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await server.fetch('/users?limit=1', { headers: { 'x-api-key': key } })).status);
      expect(statuses).toEqual([200, 200, 429]);

      const slowest = Math.max(...load.between(knownAt, restoredAt).map((o) => o.endedAt - o.startedAt));
      const meteredAgain = load.between(restoredAt, Infinity).find((o) => o.name === 'metered')!;
      await annotate(
        `outage known ${knownAt - faultStart} ms after the fault began; then ${unmeteredAfterKnown.length} requests unmetered, ` +
          `the slowest in ${slowest} ms; metered again ${meteredAgain.endedAt - restoredAt} ms after the restore`,
      );

      // One error when the outage began, one warning when it ended.
      const logs = server.logs.slice(logsBefore);
      expect(logs.filter((line) => String(line.msg).startsWith('rate limit store unreachable'))).toHaveLength(1);
      expect(logs.filter((line) => String(line.msg).startsWith('rate limit store reachable again'))).toHaveLength(1);
    },
  );
});
