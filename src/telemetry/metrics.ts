// Every Prometheus metric the service exposes, in one registry per process: names, help, labels and
// buckets live here; the parts that see an event count it, and figures that are state (pool, rate
// limit store, outbox) are read when Prometheus scrapes. Every label takes a bounded set of values:
// no key ids, user ids, URLs or operation names a client chose.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Which face a request came in on; `other` is probes, documents and paths nothing serves. */
export type Face = 'graphql' | 'rest' | 'other';

/** GraphQL's phases, each a histogram by operation type (plugins/phase-metrics.ts times them). */
export interface PhaseHistograms {
  parse: Histogram<'operationType'>;
  validate: Histogram<'operationType'>;
  execute: Histogram<'operationType'>;
}

/** Request latency, in seconds: from a cache-warm read (a few ms) to the request deadline. */
const REQUEST_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** From an event's write to its delivery: immediate (ms) through the retry schedule (minutes to an hour). */
const DELIVERY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 1800, 3600, 7200];

/** Endpoints named in `portico_webhook_endpoint_failures_total`; failures at any further endpoint count as `other`. */
export const ENDPOINT_LABELS_MAX = 100;

/** What the outbox holds, read from the database at scrape time. */
export interface OutboxFigures {
  pending: number;
  oldestPendingAgeSeconds: number;
  dead: number;
}

export interface MetricSources {
  /** The database pool (node-postgres): connections open, idle, and requests waiting for one. */
  pool?: { totalCount: number; idleCount: number; waitingCount: number };
  database?: () => { available: boolean; outages: number };
  rateLimitStore?: () => { degraded: boolean };
  outbox?: () => Promise<OutboxFigures>;
}

export class Metrics {
  readonly registry = new Registry();
  readonly #sources: MetricSources = {};
  readonly #endpoints = new Set<string>();

  readonly httpRequests = new Counter({
    name: 'portico_http_requests_total',
    help: 'HTTP requests answered (or abandoned by the client), by face, operation (GraphQL root field or REST route id) and status class.',
    labelNames: ['face', 'operation', 'status_class'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'portico_http_request_duration_seconds',
    help: 'Time from a request arriving to its response being sent, by face and operation.',
    labelNames: ['face', 'operation'] as const,
    buckets: REQUEST_BUCKETS,
    registers: [this.registry],
  });

  readonly httpInFlight = new Gauge({
    name: 'portico_http_requests_in_flight',
    help: 'Requests being handled now.',
    registers: [this.registry],
  });

  /**
   * GraphQL's phases, in the series yoga's Prometheus plugin exposes: its names, help, prom-client's
   * default buckets (the plugin's) and its one label; timed by plugins/phase-metrics.ts.
   */
  readonly graphqlPhases: PhaseHistograms = {
    parse: this.#phase('graphql_envelop_phase_parse', 'Time spent on running GraphQL "parse" function'),
    validate: this.#phase('graphql_envelop_phase_validate', 'Time spent on running GraphQL "validate" function'),
    execute: this.#phase('graphql_envelop_phase_execute', 'Time spent on running the GraphQL "execute" function'),
  };

  readonly connectionsRefused = new Counter({
    name: 'portico_http_connections_refused_total',
    help: 'Connections closed as they opened because their client already held MAX_CONNECTIONS_PER_CLIENT open.',
    registers: [this.registry],
  });

  readonly documentRefusals = new Counter({
    name: 'portico_graphql_document_refusals_total',
    help: 'GraphQL documents refused before running, by the limit they exceeded (depth, aliases, tokens, directives, nesting, merging, cost).',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });

  readonly rateLimitDecisions = new Counter({
    name: 'portico_rate_limit_decisions_total',
    help: 'Rate limit decisions by policy (per-key for API keys, per-address for requests without a valid key) and outcome (admitted, refused, unmetered while the store is unreachable).',
    labelNames: ['policy', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly dbStatementTimeouts = new Counter({
    name: 'portico_db_statement_timeouts_total',
    help: 'Requests stopped because a database statement ran past DB_STATEMENT_TIMEOUT_MS.',
    registers: [this.registry],
  });

  readonly webhookAttempts = new Counter({
    name: 'portico_webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome: succeeded (a 2xx in time), http_status (any other answer), no_response (time-out, connection refused or reset, address refused), not_sent (the signing secret does not open, or the URL is refused).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly webhookDeadLettered = new Counter({
    name: 'portico_webhook_dead_lettered_total',
    help: 'Deliveries moved to the dead-letter queue after their last scheduled attempt failed.',
    registers: [this.registry],
  });

  readonly webhookDeliveryLatency = new Histogram({
    name: 'portico_webhook_delivery_latency_seconds',
    help: "Time from an event's write to its successful delivery to an endpoint, retries included.",
    buckets: DELIVERY_BUCKETS,
    registers: [this.registry],
  });

  readonly webhookEndpointFailures = new Counter({
    name: 'portico_webhook_endpoint_failures_total',
    help: `Failed delivery attempts by endpoint id; the first ${ENDPOINT_LABELS_MAX} endpoints to fail are named, the rest count as "other".`,
    labelNames: ['endpoint'] as const,
    registers: [this.registry],
  });

  /**
   * `served`: whether /metrics is served (metricsServed). When it is not, nothing is kept per
   * request (counts, latencies, GraphQL phases; the HTTP shell and the server ask) and Node's default
   * metrics are not gathered: metrics nobody can read cost nothing, as tracing does when off.
   */
  readonly served: boolean;

  constructor(served = true) {
    this.served = served;
    if (served) collectDefaultMetrics({ register: this.registry });
    const sources = this.#sources;
    new Gauge({
      name: 'portico_db_pool_connections',
      help: 'Database connections in the pool, by state (idle, or in use by a request or write).',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const { pool } = sources;
        if (!pool) return;
        this.set({ state: 'idle' }, pool.idleCount);
        this.set({ state: 'in_use' }, pool.totalCount - pool.idleCount);
      },
    });
    new Gauge({
      name: 'portico_db_pool_waiting_requests',
      help: 'Requests waiting for a database connection.',
      registers: [this.registry],
      collect() {
        if (sources.pool) this.set(sources.pool.waitingCount);
      },
    });
    new Gauge({
      name: 'portico_db_available',
      help: '1 while the database can be reached, 0 during an outage.',
      registers: [this.registry],
      collect() {
        const database = sources.database?.();
        if (database) this.set(database.available ? 1 : 0);
      },
    });
    new Counter({
      name: 'portico_db_outages_total',
      help: 'Episodes of the database being unreachable, since the process started.',
      registers: [this.registry],
      collect() {
        const database = sources.database?.();
        if (database) setCounter(this, database.outages);
      },
    });
    new Gauge({
      name: 'portico_rate_limit_store_degraded',
      help: '1 while the rate limit store (Redis) cannot be reached and requests go through unmetered.',
      registers: [this.registry],
      collect() {
        const store = sources.rateLimitStore?.();
        if (store) this.set(store.degraded ? 1 : 0);
      },
    });
    // One read of the outbox serves the three gauges of a scrape; exposition() starts a new scrape.
    const readOutbox = () => (this.#outboxRead ??= outboxNow(sources));
    const outboxGauge = (name: string, help: string, pick: (figures: OutboxFigures) => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        async collect() {
          const figures = await readOutbox();
          // Unread, the gauge is NaN (a gauge without labels always has a sample): a figure from
          // before the database went away would stand still exactly while the backlog grows.
          this.set(figures ? pick(figures) : Number.NaN);
        },
      });
    outboxGauge(
      'portico_webhook_deliveries_pending',
      'Deliveries waiting for an attempt or a retry (deployment-wide, read from the database).',
      (f) => f.pending,
    );
    outboxGauge(
      'portico_webhook_oldest_pending_age_seconds',
      'Age of the oldest delivery still waiting (deployment-wide; 0 when none waits).',
      (f) => f.oldestPendingAgeSeconds,
    );
    outboxGauge('portico_webhook_deliveries_dead', 'Deliveries in the dead-letter queue (deployment-wide).', (f) => f.dead);
  }

  /** Where the state figures come from; a process sets those it has (an API-only process has no outbox reader of its own). */
  measure(sources: MetricSources): void {
    Object.assign(this.#sources, sources);
  }

  #phase(name: string, help: string) {
    return new Histogram({ name, help, labelNames: ['operationType'] as const, registers: [this.registry] });
  }

  /**
   * A request ended (answered, or abandoned by its client): counted once, by what it turned out to
   * be; `status` undefined when no answer was sent (the client went away first, or the shutdown cut it).
   */
  requestEnded(
    labels: { face?: Face; operation?: string; statementTimedOut?: boolean },
    status: number | undefined,
    seconds: number,
  ): void {
    const face = labels.face ?? 'other';
    const operation = labels.operation ?? 'none';
    this.httpRequests.inc({ face, operation, status_class: status === undefined ? 'none' : `${Math.floor(status / 100)}xx` });
    this.httpDuration.observe({ face, operation }, seconds);
    if (labels.statementTimedOut) this.dbStatementTimeouts.inc();
  }

  /** A delivery attempt's outcome, for the attempt counters and, on success, the write-to-delivery latency. */
  attempted(outcome: 'succeeded' | 'http_status' | 'no_response' | 'not_sent', endpointId: string, eventCreatedAtMs: number): void {
    this.webhookAttempts.inc({ outcome });
    if (outcome === 'succeeded') {
      this.webhookDeliveryLatency.observe(Math.max(0, Date.now() - eventCreatedAtMs) / 1000);
      return;
    }
    if (this.#endpoints.size < ENDPOINT_LABELS_MAX) this.#endpoints.add(endpointId);
    this.webhookEndpointFailures.inc({ endpoint: this.#endpoints.has(endpointId) ? endpointId : 'other' });
  }

  /** The exposition, in Prometheus text format. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    this.#outboxRead = undefined;
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  #outboxRead: Promise<OutboxFigures | undefined> | undefined;
}

/** How long a scrape waits for the outbox's figures. */
const OUTBOX_READ_MS = 1000;

/**
 * The outbox's figures, or undefined when they cannot be had: not asked for while the database is
 * known to be away (a scrape then answers at once), and not waited for past OUTBOX_READ_MS.
 */
async function outboxNow(sources: MetricSources): Promise<OutboxFigures | undefined> {
  if (!sources.outbox || sources.database?.().available === false) return undefined;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, OUTBOX_READ_MS, undefined)));
  try {
    return await Promise.race([sources.outbox(), late]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/** A counter that mirrors a running total kept elsewhere. */
function setCounter(counter: Counter, total: number): void {
  counter.reset();
  counter.inc(total);
}
