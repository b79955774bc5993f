// What happens when the shared counters cannot be reached: requests go through unmetered rather than
// all failing, since an outage of the limiter should not become an outage of the API. The first
// failure of an outage is logged as an error, its end with how many requests went unmetered, and
// the running figures in `stats` are served on /ready for monitoring.
import type { Logger } from '../log.ts';
import type { RateLimitCounter, WindowState } from './counter.ts';

export interface FailOpenStats {
  /** Whether the last call to the store failed. */
  degraded: boolean;
  /** Requests let through without counting since the process started. */
  unmeteredRequests: number;
}

export class FailOpenCounter {
  readonly #counter: RateLimitCounter;
  readonly #logger: Logger;
  readonly stats: FailOpenStats = { degraded: false, unmeteredRequests: 0 };
  #unmeteredThisOutage = 0;

  constructor(counter: RateLimitCounter, logger: Logger) {
    this.#counter = counter;
    this.#logger = logger;
  }

  /** The budget after spending `cost`, or undefined when the store could not be asked (the request goes through). */
  consume(key: string, cost: number, limit: number, windowMs: number): Promise<WindowState | undefined> {
    return this.#guard(() => this.#counter.consume(key, cost, limit, windowMs), true);
  }

  peek(key: string, limit: number, windowMs: number): Promise<WindowState | undefined> {
    return this.#guard(() => this.#counter.peek(key, limit, windowMs), false);
  }

  async #guard(call: () => Promise<WindowState>, counts: boolean): Promise<WindowState | undefined> {
    try {
      const state = await call();
      if (this.stats.degraded) {
        this.stats.degraded = false;
        this.#logger.warn({ unmeteredRequests: this.#unmeteredThisOutage }, 'rate limit store reachable again; limits apply');
        this.#unmeteredThisOutage = 0;
      }
      return state;
    } catch (error) {
      if (!this.stats.degraded) {
        this.stats.degraded = true;
        this.#logger.error({ err: error }, 'rate limit store unreachable; requests go through unmetered until it is back');
      }
      if (counts) {
        this.stats.unmeteredRequests += 1;
        this.#unmeteredThisOutage += 1;
      }
      return undefined;
    }
  }

  close(): Promise<void> {
    return this.#counter.close();
  }
}
