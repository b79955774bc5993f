// The rate limit store's availability as the service tracks it: an outage noticed by a request is
// watched by a probe of its own, whose lines belong to no request (as the database's: test/db/availability.test.ts).
import { describe, expect, it, onTestFinished } from 'vitest';
import { openRateLimitCounter } from '../../src/rate-limit/open.ts';
import { requestContext } from '../../src/request-context.ts';
import { captureLogs } from '../support/captured-logs.ts';
import { SKIP_REDIS, startTestRedis } from '../support/redis.ts';
import { eventually } from '../support/steady-load.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';

describe.skipIf(SKIP_REDIS)('the rate limit store probe', () => {
  it('logs the end of an outage a request noticed without that request’s id, though no request came since', async () => {
    const redis = await startTestRedis();
    onTestFinished(() => redis.stop());
    const target = new URL(redis.url);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
    onTestFinished(() => proxy.close());
    const { logger, logs } = captureLogs('info');
    const counter = await openRateLimitCounter(
      { max: 10, unidentifiedMax: 10, windowMs: 60_000, redisUrl: proxy.proxiedUrl(redis.url) },
      logger,
    );
    onTestFinished(() => counter.close());
    expect(await counter.consume('key', 1, 10, 60_000)).toMatchObject({ allowed: true });

    await proxy.set('refuse');
    const unmetered = await requestContext.run({ requestId: 'the-request-that-noticed' }, () => counter.consume('key', 1, 10, 60_000));
    expect(unmetered).toBeUndefined();
    expect(logs.find((line) => String(line.msg).startsWith('rate limit store unreachable'))?.requestId).toBe('the-request-that-noticed');

    await proxy.set('pass');
    await eventually(() => !counter.stats.degraded, 'the probe to find the store back', 15_000);
    const back = logs.find((line) => String(line.msg).startsWith('rate limit store reachable again'));
    expect(back).toBeDefined();
    expect(back!.requestId).toBeUndefined();
  });
});
