// Budgets in Redis, shared by every instance. Each check is one Lua script, so the read, the
// decision and the increment are atomic: however many instances race, a budget of N admits exactly
// N. Redis keeps the window's clock (PTTL), so instances' clocks need not agree.
//
// A connection whose peer went silent (packets dropped, a half-open socket) looks healthy to the
// client forever: commands merely time out, one after another. A command that times out therefore
// drops the connection, so that the client reconnects (bounded by the same timeout) and commands
// meanwhile fail at once instead of each waiting.
import { Redis } from 'ioredis';
import type { RateLimitCounter, WindowState } from './counter.ts';
import { messageOf } from '../guards.ts';

// KEYS[1] the budget; ARGV cost, limit, window in ms. Returns { allowed (0/1), used, ms to reset }.
const CONSUME = `
local ttl = redis.call('PTTL', KEYS[1])
local used = 0
if ttl > 0 then used = tonumber(redis.call('GET', KEYS[1])) else ttl = tonumber(ARGV[3]) end
local cost = tonumber(ARGV[1])
if used + cost > tonumber(ARGV[2]) then return { 0, used, ttl } end
if used == 0 then redis.call('SET', KEYS[1], cost, 'PX', ttl) else redis.call('INCRBY', KEYS[1], cost) end
return { 1, used + cost, ttl }
`;

const PEEK = `
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then return { 1, tonumber(redis.call('GET', KEYS[1])), ttl } end
return { 1, 0, tonumber(ARGV[1]) }
`;

type Reply = [number, number, number];

/** TCP keepalive lets the kernel notice a Redis that vanished while the connection sat idle. */
const KEEPALIVE_INITIAL_DELAY_MS = 10_000;

interface BudgetCommands {
  rateLimitConsume(key: string, cost: number, limit: number, windowMs: number): Promise<Reply>;
  rateLimitPeek(key: string, windowMs: number): Promise<Reply>;
}

export class RedisCounter implements RateLimitCounter {
  readonly #redis: Redis & BudgetCommands;

  constructor(url: string, options: { commandTimeoutMs: number; onConnectionError: (error: Error) => void }) {
    const redis = new Redis(url, {
      // A request must not wait for Redis to come back: with no connection, commands fail at once
      // and the caller decides (see fail-open.ts); the client keeps reconnecting in the background.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs,
      connectTimeout: options.commandTimeoutMs,
      keepAlive: KEEPALIVE_INITIAL_DELAY_MS,
      retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
      keyPrefix: 'portico:rate-limit:',
    });
    redis.on('error', options.onConnectionError);
    redis.defineCommand('rateLimitConsume', { numberOfKeys: 1, lua: CONSUME });
    redis.defineCommand('rateLimitPeek', { numberOfKeys: 1, lua: PEEK });
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- the commands defined just above
    this.#redis = redis as Redis & BudgetCommands;
  }

  /** Resolves true once connected, or false if that takes longer than `timeoutMs` (it keeps trying). */
  waitUntilReady(timeoutMs: number): Promise<boolean> {
    if (this.#redis.status === 'ready') return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#redis.off('ready', onReady);
        resolve(false);
      }, timeoutMs);
      const onReady = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.#redis.once('ready', onReady);
    });
  }

  /**
   * Why the database the URL names cannot be used, if it cannot: the client selects it on every
   * connection, and when Redis refuses (a number past its `databases`), it says so only as a
   * connection error and goes on in database 0, where other deployments' counters may be.
   */
  async refusedDatabase(): Promise<string | undefined> {
    const { db } = this.#redis.options;
    if (!db) return undefined;
    try {
      await this.#redis.select(db);
      return undefined;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  async consume(key: string, cost: number, limit: number, windowMs: number): Promise<WindowState> {
    return stateOf(await this.#answered(this.#redis.rateLimitConsume(key, cost, limit, windowMs)), limit);
  }

  async peek(key: string, limit: number, windowMs: number): Promise<WindowState> {
    return stateOf(await this.#answered(this.#redis.rateLimitPeek(key, windowMs)), limit);
  }

  async ping(): Promise<void> {
    await this.#answered(this.#redis.ping());
  }

  /** The reply; a command that timed out condemns its connection (see the top of this file). */
  async #answered<T>(command: Promise<T>): Promise<T> {
    try {
      return await command;
    } catch (error) {
      if (messageOf(error) === 'Command timed out' && this.#redis.status === 'ready') this.#redis.disconnect(true);
      throw error;
    }
  }

  async close(): Promise<void> {
    this.#redis.disconnect();
  }
}

function stateOf([allowed, used, ttl]: Reply, limit: number): WindowState {
  return { allowed: allowed === 1, limit, remaining: Math.max(limit - used, 0), resetMs: ttl };
}
