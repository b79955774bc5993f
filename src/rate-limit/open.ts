// The counter the configuration asks for: Redis when REDIS_URL is set (one budget shared by every
// instance), otherwise this process's memory; either way failing open (fail-open.ts).
import type { RateLimitConfig } from '../config.ts';
import { StartupError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { MemoryCounter } from './counter.ts';
import { FailOpenCounter } from './fail-open.ts';

/** A budget check waits at most this long for a hung Redis before the request goes through unmetered; generous, since under load the reply may wait behind other requests in the event loop. */
export const REDIS_COMMAND_TIMEOUT_MS = 2000;
/** How long a start waits for Redis before serving anyway. */
const REDIS_CONNECT_WAIT_MS = 3000;

export async function openRateLimitCounter(config: RateLimitConfig, logger: Logger): Promise<FailOpenCounter> {
  if (!config.redisUrl) return new FailOpenCounter(new MemoryCounter(config.windowMs), logger);
  // Loaded only when used: the Redis client is a sizeable module tree a memory counter does not need.
  const { RedisCounter } = await import('./redis-counter.ts');
  let lastError: unknown;
  const redis = new RedisCounter(config.redisUrl, {
    commandTimeoutMs: REDIS_COMMAND_TIMEOUT_MS,
    // The client retries on its own; an outage is reported once, by the fail-open wrapper.
    onConnectionError: (error) => {
      lastError = error;
      logger.debug({ err: error }, 'rate limit store connection error');
    },
  });
  const counter = new FailOpenCounter(redis, logger);
  // Commands are not queued while disconnected, so the first requests would otherwise go unmetered.
  if (!(await redis.waitUntilReady(REDIS_CONNECT_WAIT_MS))) {
    // A password Redis refuses is no outage to wait out: every request would go unmetered for good.
    const refusal = authenticationRefusal(lastError);
    if (refusal !== undefined) {
      await redis.close();
      throw new StartupError(
        `REDIS_URL's password (or user name) is refused by this Redis (${refusal}); give the one its requirepass or ACL sets.`,
      );
    }
    counter.unreachableAtStart(lastError);
  } else {
    const refused = await redis.refusedDatabase();
    if (refused !== undefined) {
      await redis.close();
      const db = new URL(config.redisUrl).pathname.slice(1);
      throw new StartupError(
        `REDIS_URL names database ${db}, which this Redis refuses (${refused}); name one it has (0 unless its \`databases\` setting allows more).`,
      );
    }
  }
  return counter;
}

/** Redis's own words when it refused the client's credentials (they never quote them), or undefined. */
function authenticationRefusal(error: unknown): string | undefined {
  const message = error instanceof Error ? error.message.split('\n')[0]! : '';
  return /^(WRONGPASS|NOAUTH)\b|invalid (username-)?password|without any password configured/i.test(message) ? message : undefined;
}
