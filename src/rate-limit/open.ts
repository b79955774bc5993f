// The counter the configuration asks for: Redis when REDIS_URL is set (one budget shared by every
// instance), otherwise this process's memory; either way failing open (fail-open.ts).
import type { RateLimitConfig } from '../config.ts';
import type { Logger } from '../log.ts';
import { MemoryCounter } from './counter.ts';
import { FailOpenCounter } from './fail-open.ts';
import { RedisCounter } from './redis-counter.ts';

/** A budget check waits at most this long for Redis before the request goes through unmetered. */
const REDIS_COMMAND_TIMEOUT_MS = 500;

export function openRateLimitCounter(config: RateLimitConfig, logger: Logger): FailOpenCounter {
  const counter = config.redisUrl
    ? new RedisCounter(config.redisUrl, {
        commandTimeoutMs: REDIS_COMMAND_TIMEOUT_MS,
        // The client retries on its own; the outage is reported once, by the fail-open wrapper.
        onConnectionError: (error) => logger.debug({ err: error }, 'rate limit store connection error'),
      })
    : new MemoryCounter(config.windowMs);
  return new FailOpenCounter(counter, logger);
}
