// Composes the HTTP server: probes, then yoga with its plugins. Every request runs inside a request
// context (its id reaches every log line) and is logged once when it ends, answered or abandoned.
import { inTurn } from './http/pipelining.ts';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import net, { Socket, type AddressInfo } from 'node:net';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { useGraphQlJit } from '@envelop/graphql-jit';
import { createYoga } from 'graphql-yoga';
import type { Config } from './config.ts';
import type { DatabaseAvailability } from './db/availability.ts';
import type { EntityManager, MikroORM } from './db/orm.ts';
import type { Sql } from './db/sql.ts';
import type { GraphQLContext } from './graphql/context.ts';
import { createLoaders } from './graphql/loaders.ts';
import { schema } from './graphql/schema.ts';
import type { Logger } from './log.ts';
import type { CursorCodec } from './pagination/cursor.ts';
import type { FailOpenCounter } from './rate-limit/fail-open.ts';
import type { UsageRecorder } from './services/api-key-usage.ts';
import type { ApiKeyVerifier } from './services/api-key-verifier.ts';
import type { UserTokenVerifier } from './services/user-tokens.ts';
import type { WebhookSettings } from './services/webhook-endpoints.ts';
import { renderGraphiQL, useGraphiQLAssets } from './plugins/graphiql-assets.ts';
import { scrubbedUrl, useApiKeys } from './plugins/api-key.ts';
import { logLevelOf, maskError, useErrorLocations, useValidationErrorCodes, useWholeRequestDenials } from './plugins/error-masking.ts';
import { useDocumentTransactions } from './plugins/document-transaction.ts';
import { useOperationNameCheck } from './plugins/operation-name.ts';
import { usePersistedQueryRefusal } from './plugins/persisted-queries.ts';
import { useConditionalWrites } from './plugins/preconditions.ts';
import { useVaryOrigin } from './plugins/vary-origin.ts';
import { fromLibrary, type ServerContext, type ServerPlugin } from './plugins/server-context.ts';
import { useGraphQLTracing } from './plugins/tracing.ts';
import { answerClientError, answerConnect, SERVED_METHODS } from './http/client-errors.ts';
import { armDeadline } from './http/deadline.ts';
import { answerProbe } from './http/probes.ts';
import { asksAboutServer, targetProblem } from './http/request-target.ts';
import { listenOn } from './net/listen.ts';
import { allowHeader, refusalParts } from './refusals.ts';
import { useBodyLimit } from './plugins/body-limit.ts';
import { limitConnectionsPerClient } from './http/connection-limits.ts';
import { usePostBodies } from './plugins/post-bodies.ts';
import { useScopeCacheRelease } from './plugins/scope-cache.ts';
import { chainHooks } from './plugins/hook-chain.ts';
import { useVariableCoercion } from './plugins/variables.ts';
import { useGraphQLMediaTypes } from './plugins/media-types.ts';
import { useGetParameterChecks } from './plugins/get-parameters.ts';
import { useKnownOperationTypes } from './plugins/operation-types.ts';
import { useUrlLimit } from './plugins/url-limit.ts';
import { useOptions } from './plugins/options.ts';
import { useQueryLimits } from './plugins/query-limits.ts';
import { useRateLimits } from './plugins/rate-limit.ts';
import { useUsageCounting } from './plugins/usage.ts';
import { useIdempotency, useIdempotencyKeyCheck } from './plugins/idempotency.ts';
import { useUserTokens } from './plugins/user-token.ts';
import { useRest } from './rest/adapter.ts';
import { unroutedLabels } from './rest/routes.ts';
import { GRAPHQL_PATH } from './paths.ts';
import { MAX_BODY_BYTES, MAX_HEADER_BYTES } from './request-limits.ts';
import { useApiDocs } from './rest/docs.ts';
import { useOpenApiDocument } from './rest/openapi.ts';
import { useServiceIndex } from './plugins/service-index.ts';
import { requestContext, requestIdFrom, type RequestContext } from './request-context.ts';
import type { Metrics } from './telemetry/metrics.ts';
import { usePhaseMetrics } from './plugins/phase-metrics.ts';
import { useValidationCache } from './plugins/validation-cache.ts';
import { answerMetrics, metricsOnServicePort } from './telemetry/metrics-endpoint.ts';
import { useOperationLabels } from './plugins/operation-label.ts';
import { serveTraced } from './telemetry/server-span.ts';
import { VERSION } from './version.ts';
import { DeliveryNotifier } from './webhooks/delivery-notifier.ts';

export interface AppDependencies {
  config: Config;
  logger: Logger;
  orm: MikroORM;
  /** Plain reads on the ORM's pool. */
  sql: Sql;
  /** Whether PostgreSQL can be reached, as the pool experiences it. */
  database: DatabaseAvailability;
  cursors: CursorCodec;
  apiKeys: ApiKeyVerifier;
  usage: UsageRecorder;
  userTokens: UserTokenVerifier;
  rateLimits: FailOpenCounter;
  webhooks: WebhookSettings;
  metrics: Metrics;
}

export interface App {
  server: http.Server;
  /** Starts listening; resolves with the bound address. */
  listen(port?: number, host?: string): Promise<AddressInfo>;
  /** Stops accepting, lets in-flight requests finish within the grace period, then cuts the rest. */
  close(): Promise<void>;
}

/**
 * The headers GraphiQL opens with: a placeholder to replace with a key. Browsers refuse header values
 * outside ISO-8859-1, so it is plain ASCII; sent as it is, it earns the service's own 401.
 */
export const GRAPHIQL_HEADERS = '{\n  "x-api-key": "paste-your-api-key-here"\n}';

/** /ready answers within this, whatever the pool does. */
const READINESS_CHECK_MS = 1500;
/** What `OPTIONS *` answers: every method some path of the service is served by. */
const SERVER_METHODS = allowHeader(SERVED_METHODS);

/** How often a shutdown closes the kept-alive connections idle then (a tenth of the grace, at most this). */
const IDLE_SWEEP_MAX_MS = 1000;

export function createApp(dependencies: AppDependencies): App {
  const { config, logger, orm, sql, database, cursors, apiKeys, usage, userTokens, rateLimits, webhooks, metrics } = dependencies;
  const metricsHere = metricsOnServicePort(config.metrics);
  // Tracing off: no span is started, no context is switched.
  const traced = config.tracing !== undefined;
  const deliveries = new DeliveryNotifier(sql, logger);
  const unidentified = { counter: rateLimits, limit: config.rateLimit.unidentifiedMax, windowMs: config.rateLimit.windowMs, metrics };
  let draining = false;
  /** Set when the shutdown grace is over and the connections of requests still running are closed. */
  let cutting = false;
  /**
   * While shutting down, every answer says `Connection: close`: a client sending request after
   * request on a kept-alive connection has each one answered, then goes elsewhere, where closing its
   * connection between two of them would cut the one it was sending. Set as a request arrives, and
   * (for those that were running when the shutdown began) as yoga's answer goes out.
   */
  const closingAnswers: ServerPlugin = {
    onResponse({ response }) {
      if (draining) response.headers.set('connection', 'close');
    },
  };

  const keyBudgets = { counter: rateLimits, defaultLimit: config.rateLimit.max, windowMs: config.rateLimit.windowMs, metrics };
  const rateLimiting = useRateLimits(keyBudgets);
  const yoga = createYoga<ServerContext, GraphQLContext>({
    schema,
    graphqlEndpoint: GRAPHQL_PATH,
    landingPage: false,
    // The schema takes no uploads; a multipart body is refused with 415 like any other media type it cannot read.
    multipart: false,
    // Bounded by useBodyLimit instead: refused with 413 before parsing; documents are bounded further by the token limit.
    maxRequestBodySize: false,
    // Parsed documents stay cached by yoga; validation results are cached by useValidationCache.
    parserAndValidationCache: { validationCache: false },
    // Callers are backends; a browser app may call only from an origin listed in CORS_ORIGINS. Keys
    // travel in headers, never cookies, so credentials are not allowed.
    cors: (request) => {
      const origin = request.headers.get('origin');
      if (!origin || !config.corsOrigins.includes(origin)) return false;
      return {
        origin: [origin],
        credentials: false,
        methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
        // traceparent and tracestate: a browser app's own traces continue here (W3C Trace Context).
        allowedHeaders: [
          'content-type',
          'accept',
          'x-api-key',
          'authorization',
          'x-request-id',
          'x-graphql-yoga-csrf',
          'idempotency-key',
          'traceparent',
          'tracestate',
        ],
        exposedHeaders: [
          'ratelimit',
          'ratelimit-policy',
          'retry-after',
          'location',
          'x-request-id',
          'warning',
          'idempotent-replayed',
          'www-authenticate',
        ],
        maxAge: 600,
      };
    },
    // Yoga's built-in probe matches any URL that merely ends in its path; ours are exact (probes.ts).
    healthCheckEndpoint: `/.yoga-health-${randomUUID()}`,
    // The page is public; it sends the key the user types into its headers.
    graphiql: config.graphiql ? { title: 'Portico GraphiQL', headers: GRAPHIQL_HEADERS } : false,
    renderGraphiQL,
    maskedErrors: { maskError: (error) => maskError(error), isDev: false },
    logging: {
      debug: (...args) => logger.debug({ detail: args }, 'yoga'),
      info: (...args) => logger.info({ detail: args }, 'yoga'),
      warn: (...args) => logger.warn({ detail: args }, 'yoga'),
      // Yoga reports every error it masks here; the ones clients caused are not failures of ours.
      error: (error: unknown, ...rest) => {
        const level = logLevelOf(error);
        if (level === 'error') logger.error({ err: error, detail: rest }, 'unexpected error while handling a request');
        else logger[level]({ err: error }, 'request error');
      },
    },
    context: (initial) => {
      const { auth, rateLimit } = initial;
      // The API key plugin has run for every request that reaches execution.
      if (!auth) throw new Error('request reached execution without verified credentials');
      // Forked on first call: reads, the most of requests, need no unit of work. A function rather
      // than a getter: an accessor defined per request gives each context a hidden class of its own,
      // held in the old generation until a full collection, and through it the whole request.
      let em: EntityManager | undefined;
      const reads = sql.until(initial.deadline, () => initial.idempotency?.write?.statements ?? initial.documentTransaction);
      return {
        sql: reads,
        // A write with an Idempotency-Key runs in the key's transaction (plugins/idempotency.ts), and
        // several mutations in one document in theirs (plugins/document-transaction.ts).
        em: () => (em ??= initial.idempotency?.write?.em ?? initial.documentTransaction ?? orm.em.fork()),
        // A fork costs more than the statement it would run (MikroORM writes process.env on each).
        statements: () => initial.idempotency?.write?.statements ?? initial.documentTransaction ?? orm.em,
        cursors,
        loaders: createLoaders(reads),
        auth,
        rateLimit,
        webhooks,
      } satisfies GraphQLContext;
    },
    // The REST adapter answers every path the others leave (404 Problem Details), so it comes last.
    plugins: chainHooks(
      [
        useUrlLimit(),
        useOptions(config.graphiql),
        useVaryOrigin(config.corsOrigins),
        useGraphiQLAssets(config.graphiql),
        useServiceIndex(VERSION),
        useOpenApiDocument(VERSION, config.publicUrl, config.trustProxy),
        useApiDocs(),
        // Everything below needs a key; the endpoints above, and GraphiQL's page, are public.
        useApiKeys({
          verifier: apiKeys,
          trustProxy: config.trustProxy,
          logger,
          unidentified,
        }),
        useUserTokens({ verify: userTokens, budget: keyBudgets }),
        rateLimiting.tickets,
        useConditionalWrites(),
        // A browser can send a GET or a form post cross-site without a preflight; such requests must
        // carry a header no form can set. The API key header counts; a key in the URL does not.
        fromLibrary(useCSRFPrevention({ requestHeaders: ['x-api-key', 'x-graphql-yoga-csrf'] })),
        // Variables coerced (or refused with GraphQL's own words) before any limit weighs them.
        useVariableCoercion(config.production),
        ...useQueryLimits(config.queryLimits, metrics),
        // A write's Idempotency-Key checked before the budget is: a malformed one costs nothing.
        useIdempotencyKeyCheck(config.idempotency.required),
        // After the shape and cost limits, so a refused document costs nothing; before usage counting,
        // so a rate-limited request is not counted as an operation run.
        rateLimiting.decisions,
        useIdempotency({ em: orm.em, ...config.idempotency, logger, box: webhooks.box }),
        useUsageCounting(usage),
        useOperationLabels(),
        ...useGraphQLTracing(config.tracing),
        // GraphQL's phases timed, where metrics are served.
        ...(metrics.served ? [usePhaseMetrics(metrics.graphqlPhases)] : []),
        useValidationCache(),
        useKnownOperationTypes(),
        useValidationErrorCodes(config.production),
        useErrorLocations(),
        useWholeRequestDenials(),
        // Each document compiled once into a function that runs it: less work and garbage per field.
        fromLibrary(useGraphQlJit({}, { onError: (error) => logger.error({ err: error }, 'GraphQL document could not be compiled') })),
        // After graphql-jit, whose execution it wraps.
        useDocumentTransactions(orm.em),
        useGraphQLMediaTypes(),
        useGetParameterChecks(),
        useOperationNameCheck(),
        usePersistedQueryRefusal(),
        useScopeCacheRelease(),
        // Before the body limit, which wraps the parser this sets for a body of no declared length.
        usePostBodies(),
        useBodyLimit(MAX_BODY_BYTES),
        useRest({ logger }),
        // Last: its onResponse sees the answer that goes out, after any plugin put another in its place
        // (an idempotent write's recorded answer, say).
        closingAnswers,
      ],
      { logger },
    ),
  });

  const probes = {
    async notReadyReason() {
      if (draining) return 'shutting down';
      if (!database.available) return 'database unreachable';
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<string>((resolve) => {
        timer = setTimeout(resolve, READINESS_CHECK_MS, `database did not answer within ${READINESS_CHECK_MS} ms`);
      });
      const check = orm.checkConnection().then((result) => (result.ok ? undefined : 'database unreachable'));
      return Promise.race([check, late]).finally(() => clearTimeout(timer));
    },
    // The limiter fails open, so its store's health is a figure to watch, not a reason to take no traffic.
    details: () => ({ database: database.stats, rateLimits: { ...rateLimits.stats } }),
  };

  const server = http.createServer(
    {
      // Receiving a request (headers and body) is bounded by the same deadline (408). Node checks
      // that bound on a timer (every 30 s by default, far too late); a tenth of the deadline keeps it.
      maxHeaderSize: MAX_HEADER_BYTES,
      requestTimeout: config.requestTimeoutMs,
      headersTimeout: config.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.floor(config.requestTimeoutMs / 10))),
      // Node's 5 s closed idle connections a load balancer was about to reuse (ALB keeps its own 60 s):
      // the balancer's next request met a closed connection, a 502 for a client.
      keepAliveTimeout: config.keepAliveTimeoutMs,
      // Checked by targetProblem, which answers a missing Host in Problem Details, not an empty 400.
      requireHostHeader: false,
    },
    (req, res) => {
      const requestId = requestIdFrom(req.headers['x-request-id']);
      const started = performance.now();
      res.setHeader('x-request-id', requestId);
      // Every answer belongs to the key that asked for it. A shared cache may store a 200 or a 404 it
      // is told nothing about (RFC 9111 §4.2.2), and `x-api-key` is not `Authorization`, whose answers
      // caches keep to themselves; so each answer forbids storing unless it says otherwise (the public
      // assets, stored and revalidated by their ETag: headers an answer sets win over these).
      res.setHeader('cache-control', 'no-store');
      if (draining) res.setHeader('connection', 'close');
      const wrongTarget = targetProblem(req);
      // The face is known from the path; the REST adapter and GraphQL execution name the operation.
      const path = (req.url ?? '').split('?')[0]!;
      const context: RequestContext = { requestId, face: path === GRAPHQL_PATH ? 'graphql' : 'other' };
      // First of the listeners below, so that the metrics and the span (its only readers) see it: a
      // request refused before the REST adapter routed it (no valid key, a budget spent) is a REST
      // request all the same.
      if (metrics.served || traced) {
        res.once('close', () => {
          if (context.face === 'other') Object.assign(context, unroutedLabels(req.method ?? 'GET', path));
        });
      }
      // Once the response is out, the write behind it has committed (or rolled back, which a worker
      // woken for nothing shrugs off); a client that left early may leave its write to the workers' poll.
      res.once('close', () => {
        if (context.deliveriesQueued) deliveries.notify();
      });
      if (metrics.served) {
        metrics.httpInFlight.inc();
        res.once('close', () => {
          metrics.httpInFlight.dec();
          metrics.requestEnded(context, res.headersSent ? res.statusCode : undefined, (performance.now() - started) / 1000);
        });
      }
      // Logged once when the response is sent, or when the client went away before it was.
      // The line is built only when it will be written.
      if (logger.isLevelEnabled('info')) {
        res.once('close', () => {
          const durationMs = Math.round((performance.now() - started) * 10) / 10;
          const line = {
            requestId,
            traceId: context.traceId,
            method: req.method,
            url: scrubbedUrl(req.url ?? ''),
            // Node's statusCode is 200 until an answer sets it: one never sent has none.
            status: res.headersSent ? res.statusCode : null,
            durationMs,
          };
          logger.info(
            res.writableFinished ? line : { ...line, ...(cutting ? { cutAtShutdown: true } : { clientClosed: true }) },
            'request',
          );
        });
      }
      if (wrongTarget !== undefined && asksAboutServer(req)) {
        res.writeHead(204, { allow: SERVER_METHODS }).end();
        return;
      }
      if (wrongTarget !== undefined) {
        const answer = refusalParts(path, String(req.headers.accept ?? ''), {
          kind: 'invalid-input',
          detail: wrongTarget,
        });
        res
          .writeHead(answer.status, { ...answer.headers, 'content-length': Buffer.byteLength(answer.body), connection: 'close' })
          .end(answer.body);
        return;
      }
      const serve = () =>
        requestContext.run(context, () => {
          if (answerProbe(req, res, probes)) return;
          if (metricsHere && answerMetrics(req, res, metrics, config.metrics.token)) return;
          const deadline = armDeadline(req, res, { timeoutMs: config.requestTimeoutMs, logger });
          void yoga(req, res, { req, res, deadline });
        });
      inTurn(req, res, () => (traced ? serveTraced(req, res, context, serve) : serve()));
    },
  );
  limitConnectionsPerClient(server, {
    perClient: config.maxConnectionsPerClient,
    trustProxy: config.trustProxy,
    logger,
    refused: () => metrics.connectionsRefused.inc(),
  });
  // Node hands a net.Socket unless a custom transport is in use; there is none here.
  server.on('clientError', (error, socket) =>
    socket instanceof Socket ? answerClientError(error, socket, logger, metrics) : socket.destroy(),
  );
  server.on('connect', (_req, socket) => (socket instanceof Socket ? answerConnect(socket, logger, metrics) : socket.destroy()));

  return {
    server,
    listen(port = config.port, host = config.host) {
      return listenOn(server, port, host, 'PORT');
    },
    async close() {
      draining = true;
      // Node's http close would also close every idle connection now; the plain one only stops accepting.
      const closed = new Promise<void>((resolve) => net.Server.prototype.close.call(server, () => resolve()));
      // A connection idle now may carry a request already on its way: it is left open for a moment
      // (that request is answered with `Connection: close`), and the connections idle then are
      // closed, again and again until none is left.
      const sweep = setInterval(() => server.closeIdleConnections(), Math.min(IDLE_SWEEP_MAX_MS, config.shutdownGraceMs / 10)).unref();
      const grace = new Promise<'timeout'>((resolve) => setTimeout(resolve, config.shutdownGraceMs, 'timeout').unref());
      try {
        if ((await Promise.race([closed, grace])) === 'timeout') {
          logger.warn({ graceMs: config.shutdownGraceMs }, 'requests still running after the grace period; closing their connections');
          cutting = true;
          server.closeAllConnections();
          await closed;
        }
      } finally {
        clearInterval(sweep);
      }
    },
  };
}
