// Entry point: `node src/main.ts [all|api|worker]`. Starts the API, the webhook delivery worker, or
// both (the default) on the database, and shuts down cleanly on SIGINT/SIGTERM: stop accepting, drain
// in-flight requests and deliveries, close the pool, stop embedded PostgreSQL, send the last spans.
// First, so that V8's settings are in force before anything else loads.
import './heap-settings.ts';
import os from 'node:os';
import { createApp } from './server.ts';
import { armFailpoints, stopAt } from './failpoints.ts';
import { CursorCodec } from './pagination/cursor.ts';
import { resolveSecret } from './secrets.ts';
import { UsageRecorder } from './services/api-key-usage.ts';
import { purgeExpiredIdempotencyKeys } from './services/idempotency.ts';
import { purgeOldEvents } from './services/events.ts';
import { startPurges } from './services/purges.ts';
import { disableEndpointsOfDeadKeys } from './services/webhook-endpoints.ts';
import { userTokenVerifier } from './services/user-tokens.ts';
import { webhookSettings, type WebhookSettings } from './services/webhook-endpoints.ts';
import { ApiKeyVerifier } from './services/api-key-verifier.ts';
import { API_KEYS_CHANNEL, createFirstDevelopmentKey } from './services/api-keys.ts';
import { listen } from './db/notifications.ts';
import { sqlOf, type Sql } from './db/sql.ts';
import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import type { Logger } from './log.ts';
import { DeliveryWorker } from './webhooks/worker.ts';
import { DELIVERIES_CHANNEL } from './webhooks/delivery-notifier.ts';
import { openRateLimitCounter } from './rate-limit/open.ts';
import { Metrics } from './telemetry/metrics.ts';
import { metricsServed, startMetricsServer } from './telemetry/metrics-endpoint.ts';
import { outboxFigures } from './webhooks/deliveries.ts';
import { METRICS_PATH } from './paths.ts';
import { exitWithStartupFailure, start } from './startup.ts';
import { collectStartupGarbage } from './startup-garbage.ts';

const ROLES = ['all', 'api', 'worker'] as const;
const USAGE = `usage: node src/main.ts [${ROLES.join('|')}] (npm start, npm run api, npm run worker); configured by environment variables (see the README)`;
const [role = 'all', ...extra] = process.argv.slice(2);
if (process.argv.slice(2).some((arg) => arg === '--help' || arg === '-h')) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
if (!(ROLES as readonly string[]).includes(role) || extra.length > 0) {
  const wrong = extra.length > 0 ? `unexpected argument "${extra[0]}"` : `unknown role "${role}"; use one of: ${ROLES.join(', ')}`;
  process.stderr.write(`portico: ${wrong}.\n${USAGE}\n`);
  process.exit(2);
}

let shuttingDown = false;
let stop: () => Promise<void> = async () => undefined;
/**
 * Settles when the start has ended: a stop asked for during it waits for it. Otherwise a part started
 * after the signal (the API, the worker) would serve on with nothing to stop it, holding pooled
 * connections the pool's close waits for; and an exit in the middle of the first start left an
 * embedded PostgreSQL running, or a data folder initialised without its credentials, which no later
 * start could open. Each step of the start is bounded, and a second signal exits at once.
 */
let endStart: () => void = () => undefined;
const startEnded = new Promise<void>((resolve) => (endStart = resolve));
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (shuttingDown) {
      process.stderr.write('portico: second signal, exiting at once.\n');
      // As a shell reports a process the signal ended: 130 for SIGINT, 143 for SIGTERM.
      process.exit(128 + os.constants.signals[signal]);
    }
    shuttingDown = true;
    startEnded
      .then(() => stop())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          process.stderr.write(`portico: error while shutting down: ${String(error)}\n`);
          process.exit(1);
        },
      );
  });
}

try {
  const { config, logger, db } = await start({
    migrate: true,
    service: true,
    // Before the first connection: each connection binds its `query` when it opens (db/connections.ts),
    // so one opened earlier would never be traced. The SDK is loaded only when tracing is configured.
    beforeDatabase: async ({ tracing }, logger) => {
      if (tracing) (await import('./telemetry/tracing.ts')).startTracing(tracing, logger);
    },
  });
  armFailpoints(config.failpoints);
  stop = () => db.close();
  const sql = await sqlOf(db.orm);
  const webhooks = webhookSettings(
    config.webhooks,
    await resolveSecret(config.webhooks.secretKey, config.dataDir, 'webhook-secret-key'),
    config.databasePoolMax,
  );
  // The API and the worker stop together first: the API stops taking requests at once, whatever
  // webhook attempts the worker waits for (each may take WEBHOOK_TIMEOUT_MS), and the load balancer
  // sees it go. Then the rest in reverse order of starting, then the database.
  const serving: (() => Promise<void>)[] = [];
  const parts: (() => Promise<void>)[] = [];
  stop = async () => {
    logger.info('shutting down');
    await Promise.all(serving.map((part) => part()));
    for (const part of parts.reverse()) await part();
    await db.close();
    if (config.tracing) await (await import('./telemetry/tracing.ts')).stopTracing();
    logger.info('stopped');
    // Logs are written asynchronously; let the last lines out before the process exits.
    await new Promise<void>((resolve) => logger.flush(() => resolve()));
  };
  const purges = startPurges(
    [
      { what: 'expired idempotency records', run: (em) => purgeExpiredIdempotencyKeys(em) },
      { what: 'events past their retention', run: (em) => purgeOldEvents(em, config.webhooks.eventRetentionMs) },
      { what: 'webhook endpoints of expired keys', does: 'disabled', run: (em) => disableEndpointsOfDeadKeys(em) },
    ],
    () => db.orm.em.fork(),
    logger,
  );
  parts.push(() => purges.stop());
  const metrics = new Metrics(metricsServed(config.metrics));
  metrics.measure({
    pool: await db.orm.driver.getConnection().getNativeClient(),
    database: () => db.availability.stats,
    outbox: () => outboxFigures(sql),
  });
  if (config.metrics.port !== undefined) {
    const metricsServer = await startMetricsServer(metrics, { ...config.metrics, port: config.metrics.port }, config.host);
    parts.push(() => metricsServer.close());
    logger.info({ metricsPort: metricsServer.port }, `metrics on http://${config.host}:${metricsServer.port}${METRICS_PATH}`);
  }
  // A stop asked for by now opens no port and begins no deliveries it would have to wait for.
  if (role !== 'worker' && !shuttingDown) serving.push(await startApi(config, logger, db, sql, webhooks, metrics));
  if (role !== 'api' && !shuttingDown) {
    const worker = new DeliveryWorker({
      sql,
      box: webhooks.box,
      policy: webhooks.urlPolicy,
      delivery: config.webhooks.delivery,
      logger,
      metrics,
      listen: (onNotify) => listen(db.url, DELIVERIES_CHANNEL, onNotify, logger, { bounds: db.bounds }),
    });
    await worker.start();
    serving.push(() => worker.stop());
    logger.info({ concurrency: config.webhooks.delivery.concurrency }, 'webhook worker started');
  }
  await collectStartupGarbage();
} catch (error) {
  // A start that fails once a stop was asked for ends in that stop, which exits cleanly: no failure to report.
  if (!shuttingDown) {
    await stop().catch(() => undefined);
    exitWithStartupFailure(error);
  }
} finally {
  endStart();
}

/** The API: key verification, the HTTP server, and what they need; returns how to stop it. */
async function startApi(
  config: Config,
  logger: Logger,
  db: Database,
  sql: Sql,
  webhooks: WebhookSettings,
  metrics: Metrics,
): Promise<() => Promise<void>> {
  const cursors = new CursorCodec(await resolveSecret(config.cursorSecret, config.dataDir, 'cursor-secret'));
  const pepper = await resolveSecret(config.apiKeyPepper, config.dataDir, 'api-key-pepper');
  const apiKeys = new ApiKeyVerifier(() => db.orm.em.fork(), pepper, { ttlMs: config.apiKeyCacheMs, maxEntries: 10_000 });
  await apiKeys.start();
  // A key another instance (or the keys CLI) creates, rotates or revokes reaches this one at once.
  const keyChanges = await listen(db.url, API_KEYS_CHANNEL, (payload) => apiKeys.keysChanged(payload), logger, { bounds: db.bounds });
  const usage = new UsageRecorder(() => db.orm.em.fork(), logger, config.usageFlushMs);
  const userTokens = await userTokenVerifier(config.jwt, config.dataDir, logger);
  const rateLimits = await openRateLimitCounter(config.rateLimit, logger);
  metrics.measure({ rateLimitStore: () => rateLimits.stats });
  const app = createApp({
    config,
    logger,
    orm: db.orm,
    sql,
    database: db.availability,
    cursors,
    apiKeys,
    usage,
    userTokens,
    rateLimits,
    webhooks,
    metrics,
  });
  const stopApi = async () => {
    await usage.close();
    await rateLimits.close();
    await keyChanges.close();
    apiKeys.stop();
  };
  let address;
  try {
    address = await app.listen();
  } catch (error) {
    // Nothing is served: what was opened for serving closes quietly before the reason is told.
    await stopApi();
    throw error;
  }
  const shown = address.address === '0.0.0.0' || address.address === '::' ? 'localhost' : address.address;
  logger.info({ port: address.port }, `listening on http://${shown}:${address.port}/graphql`);
  await stopAt('stop-once-listening');
  // Made once the service listens: a start that fails before would make a key it never shows.
  const firstKey = config.production ? undefined : await createFirstDevelopmentKey(db.orm.em.fork(), pepper);
  if (firstKey) printFirstKey(firstKey.secret, `http://localhost:${address.port}`);
  return async () => {
    logger.info('draining requests');
    await app.close();
    await stopApi();
  };
}

/**
 * Shown once, on the terminal (stderr, not the JSON log on stdout): the key a fresh development
 * install created for itself, with a first request to paste.
 */
function printFirstKey(secret: string, base: string): void {
  process.stderr.write(`
No API keys existed, so this development instance created one with every scope.
It is shown only now; keep it (list and manage keys with \`npm run keys\`):

  ${secret}

Try it:

  curl -s ${base}/users -H 'x-api-key: ${secret}'
  curl -s ${base}/graphql -H 'x-api-key: ${secret}' -H 'content-type: application/json' \\
    -d '{"query": "{ users(first: 5) { edges { node { id name } } } }"}'

`);
}
