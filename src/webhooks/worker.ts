// The delivery worker: claims due deliveries, sends each signed, and settles the outcomes (recorded,
// retried on the schedule, dead-lettered after the last attempt). Any number of workers, in any number
// of processes, share one database: claims are exclusive and leased (deliveries.ts). A worker wakes
// when deliveries were queued and committed (LISTEN; delivery-notifier.ts), and polls as well, for due
// retries and any notification lost or never sent.
import { Tally } from '../tally.ts';
import type { Span } from '@opentelemetry/api';
import { endAttemptSpan, startAttemptSpan } from './attempt-span.ts';
import { outgoingHeaders } from '../telemetry/trace-context.ts';
import type { Metrics } from '../telemetry/metrics.ts';
import type { DeliveryConfig } from '../config.ts';
import { isoOf } from '../db/records.ts';
import type { Sql } from '../db/sql.ts';
import type { Listener } from '../db/notifications.ts';
import type { Logger } from '../log.ts';
import { claimDeliveries, disableGoneEndpoint, settleDeliveries, type ClaimedDelivery, type Settled } from './deliveries.ts';
import { nextWaitMs } from './schedule.ts';
import type { SecretBox } from './secret-box.ts';
import { WebhookSender, type AttemptResult } from './sender.ts';
import { SIGNATURE_HEADER, signedHeaders, signingKey, type SigningKey } from './signing.ts';
import type { UrlPolicy } from './url-policy.ts';
import { loggedFailure } from '../db/failures.ts';

/** Deliveries claimed per statement, at most. */
const CLAIM_BATCH = 100;
/** Decrypted secrets kept, ready to sign with, by their sealed form. */
const SECRET_CACHE_MAX = 10_000;

export interface WorkerDependencies {
  sql: Sql;
  box: SecretBox;
  policy: UrlPolicy;
  delivery: DeliveryConfig;
  logger: Logger;
  metrics: Metrics;
  /** Starts listening on DELIVERIES_CHANNEL (delivery-notifier.ts). */
  listen: (onNotify: () => void) => Promise<Listener>;
}

/** The event as every attempt sends it: the same bytes each time, and what the feed shows. */
export function deliveryBody(delivery: Pick<ClaimedDelivery, 'eventId' | 'type' | 'createdAt' | 'data'>): string {
  return JSON.stringify({ id: delivery.eventId, type: delivery.type, createdAt: isoOf(delivery.createdAt), data: delivery.data });
}

/** A claim outlives its attempt by this much, so a live worker always settles before another may claim. */
export function leaseMs(timeoutMs: number): number {
  return timeoutMs + Math.max(1000, timeoutMs);
}

export class DeliveryWorker {
  readonly #deps: WorkerDependencies;
  readonly #sender: WebhookSender;
  readonly #secrets = new Map<string, SigningKey | null>();
  #listener: Listener | undefined;
  #loop: Promise<void> | undefined;
  #stopped = false;
  #inFlight = 0;
  /** Attempts under way, by endpoint (those with none are left out). */
  /** Attempts under way, by endpoint and by owner (the API key that registered the endpoint). */
  readonly #busy = new Tally<string>();
  readonly #busyOwners = new Tally<string>();
  #poked = false;
  #wake: (() => void) | undefined;
  #toSettle: Settled[] = [];
  #settling: Promise<void> | undefined;
  #idle: (() => void) | undefined;
  /** Since when claims fail (the database cannot be reached): logged once when it starts and once when it ends. */
  #failingSince: number | undefined;
  /** Since when outcomes cannot be recorded: claims wait until they are (see #run); logged like claims. */
  #unrecordedSince: number | undefined;
  #settleRetry: NodeJS.Timeout | undefined;

  constructor(deps: WorkerDependencies) {
    this.#deps = deps;
    this.#sender = new WebhookSender({
      policy: deps.policy,
      timeoutMs: deps.delivery.timeoutMs,
      connectionsPerOrigin: deps.delivery.concurrency,
    });
  }

  async start(): Promise<void> {
    this.#listener = await this.#deps.listen(() => this.#poke());
    this.#loop = this.#run();
  }

  /**
   * Stops claiming, lets the attempts under way finish and settles them: the try under way, then one
   * more for what it did not hold, each within the database's bounds. Outcomes still unrecorded then
   * are given up; their claims lapse and their deliveries are sent again, as after a crash.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#poke();
    await this.#loop;
    if (this.#inFlight > 0) await new Promise<void>((resolve) => (this.#idle = resolve));
    await this.#settling;
    await this.#settle();
    clearTimeout(this.#settleRetry);
    if (this.#toSettle.length > 0) {
      this.#deps.logger.warn(
        { outcomes: this.#toSettle.length },
        'stopping with webhook attempts unrecorded; their deliveries are sent again once their claims lapse',
      );
    }
    await this.#listener?.close();
    await this.#sender.close();
  }

  #poke(): void {
    this.#poked = true;
    this.#wake?.();
  }

  /** Waits for a notification, a finished attempt or the poll interval, whichever comes first. */
  async #pause(): Promise<void> {
    if (this.#poked) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, this.#deps.delivery.pollMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
    });
    this.#wake = undefined;
  }

  async #run(): Promise<void> {
    const { sql, delivery, logger } = this.#deps;
    while (!this.#stopped) {
      this.#poked = false;
      // Outcomes that could not be recorded are recorded before anything is claimed: their claims'
      // leases may have lapsed meanwhile, and a claim would take those deliveries and send them again.
      if (this.#unrecordedSince !== undefined) {
        await this.#settle();
        if (this.#unrecordedSince !== undefined) {
          await this.#pause();
          continue;
        }
      }
      const room = Math.min(CLAIM_BATCH, delivery.concurrency - this.#inFlight);
      // Claims wait until a quarter of the places are free (or none is busy): fewer, larger claims.
      if (room > 0 && (this.#inFlight === 0 || room >= Math.ceil(delivery.concurrency / 4))) {
        let claimed: ClaimedDelivery[];
        try {
          claimed = await claimDeliveries(sql, room, leaseMs(delivery.timeoutMs), {
            perEndpoint: delivery.endpointConcurrency,
            busy: this.#busy,
            perOwner: delivery.ownerConcurrency,
            busyOwners: this.#busyOwners,
          });
        } catch (error) {
          if (this.#failingSince === undefined) {
            this.#failingSince = Date.now();
            logger.warn(loggedFailure(error), 'could not claim webhook deliveries; trying again');
          }
          await this.#pause();
          continue;
        }
        if (this.#failingSince !== undefined) {
          logger.info({ downMs: Date.now() - this.#failingSince }, 'claiming webhook deliveries again');
          this.#failingSince = undefined;
        }
        for (const claim of claimed) void this.#attempt(claim);
        // A full batch: more may be due at once.
        if (claimed.length === room) continue;
      }
      await this.#pause();
    }
  }

  /** The key a sealed secret signs with; null when it does not open (sealed under an earlier WEBHOOK_SECRET_KEY). */
  #signingKey(sealed: string, endpointId: string): SigningKey | null {
    let key = this.#secrets.get(sealed);
    if (key === undefined) {
      if (this.#secrets.size >= SECRET_CACHE_MAX) this.#secrets.clear();
      try {
        key = signingKey(this.#deps.box.open(sealed, endpointId));
      } catch {
        key = null;
      }
      this.#secrets.set(sealed, key);
    }
    return key;
  }

  /** Sends one attempt, signed; what came back, and the signature header sent. */
  async #send(claim: ClaimedDelivery, startedAt: Date, span: Span): Promise<{ result: AttemptResult; signature: string }> {
    try {
      const body = deliveryBody(claim);
      const current = this.#signingKey(claim.secret, claim.endpointId);
      if (!current) throw new Error('the signing secret does not open with WEBHOOK_SECRET_KEY; rotate it');
      // An old secret that does not open signs nothing; the current one still does.
      const previous = claim.previousSecret ? this.#signingKey(claim.previousSecret, claim.endpointId) : null;
      const keys = previous ? [current, previous] : [current];
      const signed = signedHeaders(keys, claim.eventId, body, Math.floor(startedAt.getTime() / 1000));
      const headers = {
        ...signed,
        'x-portico-event-id': claim.eventId,
        'x-portico-event-type': claim.type,
        'x-portico-delivery-attempt': String(claim.number),
        ...outgoingHeaders(span),
      };
      return { result: await this.#sender.send(claim.url, headers, body), signature: signed[SIGNATURE_HEADER]! };
    } catch (error) {
      // Not the receiver's doing (a secret that does not open): nothing is sent, the attempt fails
      // and is retried on the schedule, and the cause is logged.
      this.#deps.logger.error({ err: error, eventId: claim.eventId, endpointId: claim.endpointId }, 'could not prepare a webhook delivery');
      const result: AttemptResult = {
        ok: false,
        statusCode: null,
        error: 'the delivery could not be prepared',
        responseBody: null,
        durationMs: 0,
        gone: false,
        notSent: true,
      };
      return { result, signature: '' };
    }
  }

  async #attempt(claim: ClaimedDelivery): Promise<void> {
    this.#inFlight++;
    this.#busy.add(claim.endpointId);
    this.#busyOwners.add(claim.ownerKeyId);
    const { delivery, logger, sql } = this.#deps;
    const startedAt = new Date();
    const span = startAttemptSpan(claim);
    const { result, signature } = await this.#send(claim, startedAt, span);
    endAttemptSpan(span, result);
    const wait = result.ok || result.gone ? undefined : nextWaitMs(delivery.retryScheduleMs, claim.attempt, result.retryAfterMs);
    const state = result.ok ? 'succeeded' : wait === undefined ? 'dead' : 'failed';
    this.#deps.metrics.attempted(
      result.ok ? 'succeeded' : result.notSent ? 'not_sent' : result.statusCode === null ? 'no_response' : 'http_status',
      claim.endpointId,
      claim.createdAt,
    );
    if (result.gone) {
      await disableGoneEndpoint(sql, claim.endpointId, startedAt).catch((error: unknown) =>
        logger.warn({ err: error }, 'could not disable an endpoint that answered 410'),
      );
    }
    if (state === 'dead') {
      this.#deps.metrics.webhookDeadLettered.inc();
      // An event a receiver will not get unless someone re-sends it: a warning, as an operator filters them.
      logger.warn({ eventId: claim.eventId, endpointId: claim.endpointId, error: result.error }, 'webhook delivery dead-lettered');
    }
    this.#toSettle.push({
      eventId: claim.eventId,
      endpointId: claim.endpointId,
      number: claim.number,
      startedAt,
      durationMs: result.durationMs,
      statusCode: result.statusCode,
      error: result.error,
      responseBody: result.responseBody,
      signature,
      state,
      nextAttemptAt: wait === undefined ? null : new Date(Date.now() + wait),
    });
    void this.#settle();
    this.#inFlight--;
    this.#busy.remove(claim.endpointId);
    this.#busyOwners.remove(claim.ownerKeyId);
    if (this.#inFlight === 0) this.#idle?.();
    this.#poke();
  }

  /**
   * Writes the outcomes gathered so far in one statement; those that arrive meanwhile go in the next,
   * which starts when this one has recorded its own. One try at a time, shared by every caller: each
   * ended attempt asks for one, and a try per caller after a failure made a stop wait the database's
   * bounds once for every attempt that had ended.
   */
  #settle(): Promise<void> {
    if (this.#settling) return this.#settling;
    if (this.#toSettle.length === 0) return Promise.resolve();
    const batch = this.#toSettle;
    this.#toSettle = [];
    this.#settling = settleDeliveries(this.#deps.sql, batch)
      .then(() => {
        if (this.#unrecordedSince === undefined) return;
        this.#deps.logger.info({ downMs: Date.now() - this.#unrecordedSince }, 'recording webhook attempts again');
        this.#unrecordedSince = undefined;
      })
      .catch((error: unknown) => {
        // Kept for the next try; if the database stays away past the lease, another worker (not this
        // one, which claims nothing until they are recorded) may send them again.
        if (this.#unrecordedSince === undefined) {
          this.#unrecordedSince = Date.now();
          this.#deps.logger.warn({ err: error, outcomes: batch.length }, 'could not record webhook attempts; trying again');
        }
        this.#toSettle.unshift(...batch);
        if (this.#settleRetry === undefined) {
          this.#settleRetry = setTimeout(() => {
            this.#settleRetry = undefined;
            void this.#settle();
          }, this.#deps.delivery.pollMs).unref();
        }
      })
      .finally(() => {
        this.#settling = undefined;
        // Outcomes that came in meanwhile, unless the database failed this try (a retry is set for that).
        if (this.#toSettle.length > 0 && this.#unrecordedSince === undefined) void this.#settle();
        // Recorded outcomes release their claims: an immediate retry is due now, not at the next poll.
        this.#poke();
      });
    return this.#settling;
  }
}
