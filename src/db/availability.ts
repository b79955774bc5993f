// Whether PostgreSQL can be reached, as the connection pool experiences it. The first failure of an
// outage is logged once, as an error; while it lasts a probe on its own connection checks every
// second, and the end is logged once with how long it lasted and how many calls failed. Requests
// meanwhile answer 503 on their own (see plugins/error-masking.ts). Once an outage has lasted two
// probes' time with nothing answering, the pool refuses new checkouts at once (`refusing`): over a
// network that drops packets each request would otherwise wait out the whole connect bound for a
// connection that cannot come, and clients would see the API hang where it can say 503 now.
import type { Logger } from '../log.ts';
import { requestContext } from '../request-context.ts';

/**
 * A call not tried because the database is known to be unreachable (`refusing`). Its code is
 * SQLSTATE 08001, "unable to establish connection", so it is answered as any unreachable database is.
 */
export class KnownOutageError extends Error {
  readonly code = '08001';
  constructor() {
    super('the database has not answered since the outage began; not trying until a probe finds it back');
    this.name = 'KnownOutageError';
  }
}

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
  /** When the latest call that succeeded was started. */
  #lastSuccessStartedAt = 0;
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

  /**
   * Whether calls should not even try: an outage has lasted two probes' time, so a probe has had its
   * chance to see the database answer (one lost connection is over as soon as the next call or probe
   * succeeds, and never refuses anything). Only a probe ends it then.
   */
  get refusing(): boolean {
    return this.#outage !== undefined && Date.now() - this.#outage.since >= 2 * this.#probeEveryMs;
  }

  get stats(): AvailabilityStats {
    return { available: this.available, outages: this.#outages };
  }

  /**
   * A connection could not be had, or one in use stopped answering, in a call started at
   * `startedAt`. If a call started since succeeded, the database answers: that connection alone was
   * lost (a reply dropped before an outage ended, say), which is no outage. A call started earlier
   * that succeeded meanwhile proves nothing: its reply may have been on its way as the network went.
   */
  failed(error: unknown, startedAt = Date.now()): void {
    if (!this.#watching) return;
    if (this.#outage) {
      this.#outage.failedCalls += 1;
      return;
    }
    if (this.#lastSuccessStartedAt > startedAt) return;
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
    this.#lastSuccessStartedAt = Math.max(this.#lastSuccessStartedAt, startedAt);
    const outage = this.#outage;
    if (!outage || startedAt < outage.since) return;
    this.#outage = undefined;
    clearInterval(this.#timer);
    this.#logger.warn({ outageMs: Date.now() - outage.since, failedCalls: outage.failedCalls }, 'database reachable again');
  }

  /**
   * Probes every second while the outage lasts, a new one each time even while earlier ones wait:
   * over a silent network a probe waits out the connect bound, and a network back meanwhile would
   * otherwise be seen only when that probe gives up. At most one probe per second of that bound is
   * under way.
   */
  #scheduleProbe(): void {
    if (this.#closed) return;
    // Outside the request that noticed the outage, which ended long before the probe speaks.
    this.#timer = requestContext.exit(() =>
      setInterval(() => {
        if (!this.#outage) return;
        const startedAt = Date.now();
        this.#probe().then(
          () => this.succeeded(startedAt),
          () => undefined,
        );
      }, this.#probeEveryMs),
    );
    this.#timer.unref();
  }

  close(): void {
    this.#closed = true;
    clearInterval(this.#timer);
  }
}
