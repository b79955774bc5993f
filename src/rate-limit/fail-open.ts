// What happens when the shared counters cannot be reached: requests go through unmetered rather than
// all failing, since an outage of the limiter should not become an outage of the API. The first
// failure of an outage is logged as an error, its end with how many requests went unmetered, and
// the running figures in `stats` are served on /ready for monitoring. While the store is out, a
// probe asks it every second, so the end of an outage is noticed even when no request comes.
import type { Logger } from '../log.ts';
import { requestContext } from '../request-context.ts';
import type { MaybePromise } from '../maybe-promise.ts';
import type { RateLimitCounter, WindowState } from './counter.ts';

export interface FailOpenStats {
  /** Whether the last call to the store failed. */
  degraded: boolean;
  /** Requests let through without counting since the process started. */
  unmeteredRequests: number;
}

const PROBE_EVERY_MS = 1000;

export class FailOpenCounter {
  readonly #counter: RateLimitCounter;
  readonly #logger: Logger;
  readonly stats: FailOpenStats = { degraded: false, unmeteredRequests: 0 };
  #unmeteredThisOutage = 0;
  #probe: NodeJS.Timeout | undefined;

  constructor(counter: RateLimitCounter, logger: Logger) {
    this.#counter = counter;
    this.#logger = logger;
  }

  /** The budget after spending `cost`, or undefined when the store could not be asked (the request goes through). */
  consume(key: string, cost: number, limit: number, windowMs: number): MaybePromise<WindowState | undefined> {
    return this.#guard(() => this.#counter.consume(key, cost, limit, windowMs), true);
  }

  peek(key: string, limit: number, windowMs: number): MaybePromise<WindowState | undefined> {
    return this.#guard(() => this.#counter.peek(key, limit, windowMs), false);
  }

  /** The store's answer, at once when the store answers at once. */
  #guard(call: () => MaybePromise<WindowState>, counts: boolean): MaybePromise<WindowState | undefined> {
    let answer: MaybePromise<WindowState>;
    try {
      answer = call();
    } catch (error) {
      return this.#failed(error, counts);
    }
    if (!(answer instanceof Promise)) return this.#answered(answer);
    return answer.then(
      (state) => this.#answered(state),
      (error: unknown) => this.#failed(error, counts),
    );
  }

  #answered(state: WindowState): WindowState {
    this.#recovered();
    return state;
  }

  /** The store could not be reached at start: an outage from the start, with the line that says so. */
  unreachableAtStart(reason: unknown): void {
    this.#outageBegins(() =>
      this.#logger.error(
        { err: reason },
        'rate limit store (REDIS_URL) unreachable at start; requests go through unmetered until it is reachable',
      ),
    );
  }

  #failed(error: unknown, counts: boolean): undefined {
    this.#outageBegins(() =>
      this.#logger.error({ err: error }, 'rate limit store unreachable; requests go through unmetered until it is back'),
    );
    if (counts) {
      this.stats.unmeteredRequests += 1;
      this.#unmeteredThisOutage += 1;
    }
    return undefined;
  }

  /** Marks the store degraded and starts probing it, telling the log once per outage. */
  #outageBegins(tell: () => void): void {
    if (!this.stats.degraded) {
      this.stats.degraded = true;
      tell();
      // Outside the request that noticed the outage, which ended long before the probe speaks.
      this.#probe = requestContext.exit(() =>
        setInterval(
          () =>
            void this.#counter.ping().then(
              () => this.#recovered(),
              () => undefined,
            ),
          PROBE_EVERY_MS,
        ),
      );
      this.#probe.unref();
    }
  }

  #recovered(): void {
    if (!this.stats.degraded) return;
    this.stats.degraded = false;
    clearInterval(this.#probe);
    this.#logger.warn({ unmeteredRequests: this.#unmeteredThisOutage }, 'rate limit store reachable again; limits apply');
    this.#unmeteredThisOutage = 0;
  }

  close(): Promise<void> {
    clearInterval(this.#probe);
    return this.#counter.close();
  }
}
