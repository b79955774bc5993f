// A real server on a free port against a fresh database, spoken to over HTTP like any client would.
import { SignJWT } from 'jose';
import { loadConfig, type Config } from '../../src/config.ts';
import { DatabaseAvailability } from '../../src/db/availability.ts';
import { probeDatabase } from '../../src/db/connections.ts';
import { databaseBounds } from '../../src/db/database.ts';
import { openOrm, type MikroORM } from '../../src/db/orm.ts';
import { sqlOf } from '../../src/db/sql.ts';
import { CursorCodec } from '../../src/pagination/cursor.ts';
import { createApp } from '../../src/server.ts';
import { openRateLimitCounter } from '../../src/rate-limit/open.ts';
import { UsageRecorder } from '../../src/services/api-key-usage.ts';
import type { JwksTiming } from '../../src/services/jwks.ts';
import { userTokenVerifier } from '../../src/services/user-tokens.ts';
import { webhookSettings } from '../../src/services/webhook-endpoints.ts';
import type { Resolve } from '../../src/webhooks/url-policy.ts';
import { ApiKeyVerifier } from '../../src/services/api-key-verifier.ts';
import { API_KEYS_CHANNEL, SCOPES, createApiKey, type KeySettings } from '../../src/services/api-keys.ts';
import { listen } from '../../src/db/notifications.ts';
import { Metrics } from '../../src/telemetry/metrics.ts';
import { metricsServed } from '../../src/telemetry/metrics-endpoint.ts';
import { outboxFigures } from '../../src/webhooks/deliveries.ts';
import { auditLog, usedCredential } from './credentials.ts';
import { createTestDatabase } from './database.ts';
import { captureLogs } from './captured-logs.ts';

export interface GraphQLResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: {
    data?: T | null;
    errors?: {
      message: string;
      path?: string[];
      extensions: { code: string; type?: string; errors?: { field: string; message: string }[] };
    }[];
  };
}

export interface TestServer {
  url: string;
  databaseUrl: string;
  /** A key with every scope; `gql` and `fetch` send it unless told otherwise. */
  apiKey: string;
  /** `fetch` against the server with the API key (headers given win, so a test can send another or none). */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  usage: UsageRecorder;
  /** Issues a key with these settings and returns its secret. */
  createKey(settings: Partial<KeySettings>): Promise<string>;
  orm: MikroORM;
  /** The server's metrics, which a test worker on it shares (one process, as `npm start` runs them). */
  metrics: Metrics;
  /** Every SQL statement the server ran, in order. */
  statements: string[];
  /** Every log line the server wrote, parsed. */
  logs: Record<string, unknown>[];
  gql<T = Record<string, unknown>>(
    query: string,
    variables?: Record<string, unknown>,
    headers?: Record<string, string>,
  ): Promise<GraphQLResponse<T>>;
  close(): Promise<void>;
}

export const TEST_CURSOR_SECRET = 'test-cursor-secret-that-is-long-enough-0123456789';
export const TEST_WEBHOOK_SECRET_KEY = 'test-webhook-secret-key-that-is-long-enough-0123456789';
export const TEST_PEPPER = 'test-api-key-pepper-that-is-long-enough-0123456789';
/** Signs HS256 user tokens in tests (issuer `portico-dev`, audience `portico`: the development defaults). */
export const TEST_JWT_SECRET = 'test-jwt-secret-that-is-long-enough-0123456789';

/** A valid user token for `userId`, as the development identity settings expect; registered as a credential. */
export async function testUserToken(userId: string): Promise<string> {
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(userId)
    .setIssuer('portico-dev')
    .setAudience('portico')
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(TEST_JWT_SECRET));
  return usedCredential(token);
}

export interface TestServerOptions {
  /** Serve another server's database (a second instance of the same deployment) instead of a fresh one. */
  sharing?: TestServer;
  /** Reach PostgreSQL through this (a fault-injecting proxy); `databaseUrl` stays the direct one. */
  databaseVia?: { proxiedUrl(url: string): string };
  /** How webhook URLs' host names are resolved (one that takes its time, say); the system's resolver if absent. */
  resolveHosts?: Resolve;
  /** When the identity provider's keys are fetched (JWT_JWKS_URL); the service's own timing if absent. */
  jwksTiming?: JwksTiming;
}

/** Every running test server's key verifier, by database: a key a test creates verifies on all of them at once. */
const verifiers = new Map<string, Set<ApiKeyVerifier>>();

export async function startTestServer(
  overrides: Partial<Config> = {},
  { sharing, databaseVia, resolveHosts, jwksTiming }: TestServerOptions = {},
): Promise<TestServer> {
  const database = sharing ? { url: sharing.databaseUrl, drop: () => Promise.resolve() } : await createTestDatabase();
  const serverUrl = databaseVia ? databaseVia.proxiedUrl(database.url) : database.url;
  const defaults = loadConfig({ LOG_LEVEL: 'debug' });
  // No key cache: revocations in tests take effect at once (the cache has its own tests). Rate
  // limits stay out of the way of suites that send many requests; their own tests set them.
  const config = {
    ...defaults,
    databaseUrl: database.url,
    shutdownGraceMs: 2000,
    apiKeyCacheMs: 0,
    rateLimit: { ...defaults.rateLimit, max: 1_000_000, unidentifiedMax: 1_000_000 },
    ...overrides,
  };
  const { logger, logs } = captureLogs('debug', auditLog);
  const statements: string[] = [];
  const bounds = databaseBounds(config);
  const availability = new DatabaseAvailability(logger, () => probeDatabase(serverUrl, bounds), 200);
  const poolMax = 5;
  const orm = await openOrm(serverUrl, { poolMax, bounds, availability, logger, onQuery: (sql) => statements.push(sql) });
  const apiKeys = new ApiKeyVerifier(() => orm.em.fork(), TEST_PEPPER, { ttlMs: config.apiKeyCacheMs, maxEntries: 1000 });
  await apiKeys.start();
  // As in production, key changes reach the verifier through notifications.
  const keyChanges = await listen(serverUrl, API_KEYS_CHANNEL, (payload) => apiKeys.keysChanged(payload), logger, { bounds });
  const peers = verifiers.get(database.url) ?? new Set();
  verifiers.set(database.url, peers.add(apiKeys));
  // Flushed by the tests themselves, so that they see exactly what one flush writes.
  const usage = new UsageRecorder(() => orm.em.fork(), logger, 0);
  const userTokens = await userTokenVerifier(
    { ...config.jwt, secret: config.jwt.secret ?? TEST_JWT_SECRET },
    config.dataDir,
    logger,
    jwksTiming,
  );
  const rateLimits = await openRateLimitCounter(config.rateLimit, logger);
  const sql = await sqlOf(orm, (text) => statements.push(text));
  // As main.ts measures them.
  const metrics = new Metrics(metricsServed(config.metrics));
  metrics.measure({
    pool: await orm.driver.getConnection().getNativeClient(),
    database: () => availability.stats,
    rateLimitStore: () => rateLimits.stats,
    outbox: () => outboxFigures(sql),
  });
  const app = createApp({
    config,
    logger,
    orm,
    sql,
    database: availability,
    cursors: new CursorCodec(TEST_CURSOR_SECRET),
    apiKeys,
    usage,
    userTokens,
    rateLimits,
    webhooks: { ...webhookSettings(config.webhooks, TEST_WEBHOOK_SECRET_KEY, poolMax), resolve: resolveHosts },
    metrics,
  });
  const address = await app.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${address.port}`;
  const createKey = async (settings: Partial<KeySettings>) => {
    const { secret } = await createApiKey(orm.em.fork(), TEST_PEPPER, 'test', { name: 'Test key', scopes: SCOPES, ...settings });
    // The notification is on its way; a test must not race it.
    await Promise.all([...peers].map((verifier) => verifier.topUp()));
    return usedCredential(secret);
  };
  const apiKey = await createKey({ name: 'Test suite' });
  const authorizedFetch = (path: string, init: RequestInit = {}) =>
    fetch(`${url}${path}`, { ...init, headers: { 'x-api-key': apiKey, ...(init.headers as Record<string, string> | undefined) } });

  return {
    url,
    databaseUrl: database.url,
    apiKey,
    fetch: authorizedFetch,
    createKey,
    usage,
    orm,
    statements,
    logs,
    metrics,
    async gql(query, variables, headers = {}) {
      const response = await authorizedFetch('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
        body: JSON.stringify({ query, variables }),
      });
      return { status: response.status, headers: response.headers, body: (await response.json()) as GraphQLResponse['body'] } as never;
    },
    async close() {
      await app.close();
      peers.delete(apiKeys);
      apiKeys.stop();
      await keyChanges.close();
      availability.close();
      await rateLimits.close();
      await orm.close();
      await database.drop();
    },
  };
}
