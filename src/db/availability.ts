// Whether PostgreSQL can be reached, as the connection pool experiences it. The first failure of an
// outage is logged once, as an error; while it lasts a probe on its own connection checks every
// second, and the end is logged once with how long it lasted and how many calls failed. Requests
// meanwhile answer 503 on their own (see plugins/error-masking.ts), so nothing here sits in their way.
import type { Logger } from '../log.ts';
import { requestContext } from '../request-context.ts';

export interface AvailabilityStats {
  available: boolean;
  /** Outages since the process started. */
  outages: number;
}

export class DatabaseAvailability {
  readonly #logger: Logger;
  readonly #probe: () => Promise<void>;
  readonly #probeEveryMs: number;
  #outage: { since: number; failedCalls: number } | undefined;
  #lastSuccessAt = 0;
  #outages = 0;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  #watching: boolean;

  /**
   * `probe` resolves when the database answers, on a connection of its own (not the pool's). Not
   * `watching`: failures are not outages until `watch()` (a start that fails says so itself, and
   * exits; a line saying requests will answer 503 would be untrue).
   */
  constructor(logger: Logger, probe: () => Promise<void>, probeEveryMs = 1000, { watching = true } = {}) {
    this.#logger = logger;
    this.#probe = probe;
    this.#probeEveryMs = probeEveryMs;
    this.#watching = watching;
  }

  /** From now on, a failure is an outage, logged and probed until it ends. */
  watch(): void {
    this.#watching = true;
  }

  get available(): boolean {
    return this.#outage === undefined;
  }

  get stats(): AvailabilityStats {
    return { available: this.available, outages: this.#outages };
  }

  /**
   * A connection could not be had, or one in use stopped answering, in a call started at
   * `startedAt`. If another call succeeded since, the database answers: that connection alone was
   * lost (a reply dropped before an outage ended, say), which is no outage.
   */
  failed(error: unknown, startedAt = Date.now()): void {
    if (!this.#watching) return;
    if (this.#outage) {
      this.#outage.failedCalls += 1;
      return;
    }
    if (this.#lastSuccessAt > startedAt) return;
    this.#outage = { since: Date.now(), failedCalls: 1 };
    this.#outages += 1;
    const reason = error instanceof Error ? error.message.split('\n', 1)[0] : String(error);
    this.#logger.error({ reason }, 'database unreachable; requests that need it answer 503 until it is back');
    this.#scheduleProbe();
  }

  /**
   * A call started at `startedAt` completed. One started after the outage began proves the database
   * answers again; one started before (a reply that was already on its way) proves nothing.
   */
  succeeded(startedAt = Date.now()): void {
    this.#lastSuccessAt = Date.now();
    const outage = this.#outage;
    if (!outage || startedAt < outage.since) return;
    this.#outage = undefined;
    clearTimeout(this.#timer);
    this.#logger.warn({ outageMs: Date.now() - outage.since, failedCalls: outage.failedCalls }, 'database reachable again');
  }

  #scheduleProbe(): void {
    if (this.#closed) return;
    // Outside the request that noticed the outage, which ended long before the probe speaks.
    this.#timer = requestContext.exit(() =>
      setTimeout(() => {
        const startedAt = Date.now();
        this.#probe().then(
          () => this.succeeded(startedAt),
          () => this.#outage && this.#scheduleProbe(),
        );
      }, this.#probeEveryMs),
    );
    this.#timer.unref();
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
  }
}
