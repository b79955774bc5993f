// Every environment variable the service reads is parsed and validated here, once.
// Other modules receive a typed Config and never touch process.env.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseDuration } from './duration.ts';
import { normalizeCidr } from './net/cidr.ts';
import { FAILPOINTS, type Failpoint } from './failpoints.ts';
import { errnoOf, isOneOf } from './guards.ts';
import type { LogFormat } from './log.ts';

export const TRACE_SAMPLERS = [
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
  'always_on',
  'always_off',
  'traceidratio',
] as const;
export const TRACE_RESOLVERS = ['root', 'all', 'none'] as const;
export const TRACE_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export const TRACE_COMPRESSIONS = ['gzip', 'none'] as const;

export interface TracingConfig {
  /** OTEL_SERVICE_NAME, else `service.name` of OTEL_RESOURCE_ATTRIBUTES. */
  serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES: what every span says of where it comes from (`deployment.environment.name=production`). */
  resourceAttributes: Record<string, string>;
  /** OTEL_TRACES_SAMPLER and its ratio, OTEL_TRACES_SAMPLER_ARG (for the ratio samplers). */
  sampler: (typeof TRACE_SAMPLERS)[number];
  ratio: number;
  /** OTEL_EXPORTER_OTLP_TRACES_PROTOCOL / OTEL_EXPORTER_OTLP_PROTOCOL: protobuf (the specification's default) or JSON over HTTP. */
  protocol: (typeof TRACE_PROTOCOLS)[number];
  /** TRACE_RESOLVERS: a span per root field (default), per resolver of any field, or none. */
  resolvers: (typeof TRACE_RESOLVERS)[number];
  /** How finished spans are batched for the collector: the specification's OTEL_BSP_* variables. */
  batch: SpanBatching;
  /**
   * OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, else OTEL_EXPORTER_OTLP_TIMEOUT: the longest one attempt to
   * send a batch may take (the exporter retries a few times before it gives the batch up).
   */
  exportTimeoutMs: number;
  /**
   * OTEL_EXPORTER_OTLP_HEADERS with OTEL_EXPORTER_OTLP_TRACES_HEADERS over it, name by name: sent
   * with every export (a collector's credentials, typically). Values are never logged.
   */
  exportHeaders: Record<string, string>;
  /** OTEL_EXPORTER_OTLP_TRACES_COMPRESSION, else OTEL_EXPORTER_OTLP_COMPRESSION: how exports are encoded. */
  compression: (typeof TRACE_COMPRESSIONS)[number];
  /**
   * The files OTEL_EXPORTER_OTLP_CERTIFICATE (the collector's CA), OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE
   * and OTEL_EXPORTER_OTLP_CLIENT_KEY (for mutual TLS) name, each with a `_TRACES_` variant that wins.
   */
  exportTls: { ca?: Buffer; cert?: Buffer; key?: Buffer };
  /**
   * OTEL_PROPAGATORS: whether trace context crosses the wire, read from requests' `traceparent` and
   * written into webhook deliveries (`tracecontext`, the default), or neither (`none`).
   */
  propagation: 'tracecontext' | 'none';
}

/** The batch span processor's settings, named as its options are. */
export interface SpanBatching {
  /** OTEL_BSP_SCHEDULE_DELAY: the longest a finished span waits before its batch is sent. */
  scheduledDelayMillis: number;
  /** OTEL_BSP_EXPORT_TIMEOUT: the longest one export may take before it is abandoned. */
  exportTimeoutMillis: number;
  /** OTEL_BSP_MAX_QUEUE_SIZE: spans held waiting; beyond it new spans are dropped (memory stays bounded). */
  maxQueueSize: number;
  /** OTEL_BSP_MAX_EXPORT_BATCH_SIZE: spans per export; a full batch is sent at once. At most the queue size. */
  maxExportBatchSize: number;
}

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  port: number;
  host: string;
  /**
   * The absolute URL clients reach the service at (PUBLIC_URL), as the served OpenAPI document states
   * it; no trailing slash. Unset: the document names the address it was fetched from.
   */
  publicUrl: string | undefined;
  /** Unset: an embedded PostgreSQL is started in `<dataDir>/postgres`. */
  databaseUrl: string | undefined;
  databasePoolMax: number;
  /** Longest a single SQL statement may run before PostgreSQL cancels it (the request then gets 503). */
  statementTimeoutMs: number;
  /** Longest wait for a pooled database connection, opening one included (then 503). */
  databaseConnectTimeoutMs: number;
  production: boolean;
  /** OpenTelemetry traces (telemetry/tracing.ts), from the standard OTEL_* variables; undefined: off, at no cost. */
  tracing: TracingConfig | undefined;
  /** Where Prometheus scrapes (telemetry/metrics-endpoint.ts): METRICS_PORT, METRICS_TOKEN. */
  metrics: { port: number | undefined; token: string | undefined };
  logLevel: LogLevel;
  /** LOG_FORMAT; unset: readable on a terminal in development, JSON otherwise (decided at start). */
  logFormat: LogFormat | undefined;
  /** Unset outside production: generated once and kept in `<dataDir>/cursor-secret`. */
  cursorSecret: string | undefined;
  /** Keys API key hashes; unset outside production: generated once and kept in `<dataDir>/api-key-pepper`. */
  apiKeyPepper: string | undefined;
  dataDir: string;
  graphiql: boolean;
  shutdownGraceMs: number;
  /** Proxies whose X-Forwarded-For is believed (CIDRs); empty: the socket address is the client. */
  trustProxy: string[];
  /** How long a verified API key is reused before it is checked again (bounds revocation delay). */
  apiKeyCacheMs: number;
  /** How often counted API key usage is written to the database. */
  usageFlushMs: number;
  /** How user tokens (JWTs) are verified; see src/services/user-tokens.ts. */
  jwt: JwtConfig;
  /** Shape and cost limits of GraphQL documents (see the README's Limits section). */
  queryLimits: QueryLimits;
  rateLimit: RateLimitConfig;
  /** Longest a request may take from its arrival to its response; past it the client gets 503. */
  requestTimeoutMs: number;
  /**
   * How long a connection may stay open idle between requests. Longer than load balancers keep theirs
   * (60 s is common), so the service never closes one a balancer is about to reuse.
   */
  keepAliveTimeoutMs: number;
  /** Connections one client (IPv4 address, IPv6 /64; not a proxy in trustProxy) may hold open at once. */
  maxConnectionsPerClient: number;
  /** Browser origins allowed to call the API cross-origin (CORS); empty: none. */
  corsOrigins: string[];
  idempotency: IdempotencyConfig;
  webhooks: WebhookConfig;
  /** Faults the tests inject (PORTICO_FAILPOINTS); always empty in production. */
  failpoints: ReadonlySet<Failpoint>;
}

export interface IdempotencyConfig {
  /** How long the outcome of a write sent with an Idempotency-Key is kept and replayed. */
  ttlMs: number;
  /** Whether a POST (and a GraphQL mutation) without an Idempotency-Key is refused. */
  required: boolean;
}

export interface WebhookConfig {
  /** Encrypts endpoint signing secrets; unset outside production: generated once and kept in `<dataDir>/webhook-secret-key`. */
  secretKey: string | undefined;
  /** Host names and addresses exempt from the SSRF address checks (development and tests), lowercase. */
  allowedHosts: string[];
  /** Whether endpoint URLs may use plain http (outside production) or must use https. */
  allowHttp: boolean;
  /** Whether a refused endpoint URL's message names what its host resolved to (outside production). */
  revealAddresses: boolean;
  /** Endpoints one API key (with its rotated successors) may register. */
  maxEndpointsPerKey: number;
  /** How long events are kept, in the feed and for delivery. */
  eventRetentionMs: number;
  delivery: DeliveryConfig;
}

export interface DeliveryConfig {
  /** Waits before each attempt after the first; after the last, the delivery is dead-lettered. */
  retryScheduleMs: number[];
  /** Longest an attempt may take, connecting and reading the response included. */
  timeoutMs: number;
  /** Attempts one worker runs at once. */
  concurrency: number;
  /** Attempts one worker runs at once to one endpoint: a receiver that hangs holds this many of its places, not all. */
  endpointConcurrency: number;
  /**
   * Attempts one worker runs at once to the endpoints of one API key (their owner): one key's receivers
   * that hang, however many endpoints it registers, hold this many of its places, not all.
   */
  ownerConcurrency: number;
  /** How often a worker looks for due deliveries when no notification woke it. */
  pollMs: number;
}

export interface RateLimitConfig {
  /** Root fields an API key may run per window, unless the key sets its own limit. */
  max: number;
  /** Requests without a valid API key one client address may send per window. */
  unidentifiedMax: number;
  windowMs: number;
  /** Unset: counters live in this process's memory. Set: in Redis, shared by every instance. */
  redisUrl: string | undefined;
}

export interface QueryLimits {
  maxDepth: number;
  maxAliases: number;
  maxTokens: number;
  maxDirectives: number;
  maxCost: number;
}

export interface JwtConfig {
  /** HS256 secret; outside production, generated into `<dataDir>/jwt-secret` when no key source is set. */
  secret: string | undefined;
  jwksUrl: string | undefined;
  /** PEM (SPKI) public key, and the algorithm its tokens are signed with. */
  publicKey: string | undefined;
  publicKeyAlgorithm: string;
  issuer: string;
  audience: string;
  clockToleranceSec: number;
  /** Longest lifetime a token may have (`exp` − `iat`, or `exp` − now without `iat`). */
  maxAgeSec: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const NODE_ENVS = ['production', 'development', 'test'] as const;
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const LOG_FORMATS: readonly LogFormat[] = ['json', 'pretty'];

/** The largest budget a key may have (RATE_LIMIT, or a key's own): it fits PostgreSQL's integer. */
export const RATE_LIMIT_MAX = 1_000_000_000;

/** The asymmetric algorithms user tokens may be signed with: never `none`, never HS256 with a public key. */
export const JWT_ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384', 'EdDSA'] as const;

function jwtAlgorithm(env: Env): string {
  const raw = env.JWT_ALGORITHM?.trim() || 'RS256';
  if (isOneOf(JWT_ASYMMETRIC_ALGORITHMS, raw)) return raw;
  throw new ConfigError(`JWT_ALGORITHM must be one of ${JWT_ASYMMETRIC_ALGORITHMS.join(', ')} (got "${env.JWT_ALGORITHM}").`);
}

/** One of a list of words, lowercase; unset when the variable is. */
function oneOf<T extends string>(env: Env, name: string, values: readonly T[]): T | undefined {
  const raw = env[name]?.trim().toLowerCase();
  if (!raw) return undefined;
  if (isOneOf(values, raw)) return raw;
  throw new ConfigError(`${name} must be one of ${values.join(', ')} (got "${env[name]}").`);
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max} (got "${raw}").`);
  }
  return value;
}

/** A duration such as `90s`, `15m`, `24h` or `30d`, in milliseconds. */
function duration(env: Env, name: string, fallback: string, minMs: number, maxMs: number): number {
  const raw = env[name]?.trim() || fallback;
  const ms = parseDuration(raw);
  if (ms === undefined || ms < minMs || ms > maxMs) {
    throw new ConfigError(
      `${name} must be a duration like 15m, 24h or 7d, from ${minMs / 1000}s to ${maxMs / 86_400_000}d (got "${raw}").`,
    );
  }
  return ms;
}

/** Comma-separated durations (`0,1m,5m,30m`), each at most `maxMs`, at most `maxCount` of them. */
function durationList(env: Env, name: string, fallback: string, maxCount: number, maxMs: number): number[] {
  const raw = env[name]?.trim() || fallback;
  const values = raw.split(',').map((entry) => parseDuration(entry));
  if (values.length > maxCount || values.some((ms) => ms === undefined || ms > maxMs)) {
    throw new ConfigError(
      `${name} must be a comma-separated list of at most ${maxCount} durations like 0,1m,5m,30m, each at most ${maxMs / 86_400_000}d (got "${raw}").`,
    );
  }
  return values.filter((ms) => ms !== undefined);
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false (got "${env[name]}").`);
}

/** A server URL with one of the given schemes; it may hold a password, so the value is never echoed. */
function serverUrl(
  env: Env,
  name: string,
  schemes: readonly [string, string],
  example: string,
  { numberedDatabase = false, namedDatabase = false }: { numberedDatabase?: boolean; namedDatabase?: boolean } = {},
): string | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a valid URL; expected ${example}.`);
  }
  if (!schemes.includes(url.protocol.slice(0, -1))) {
    throw new ConfigError(`${name} must start with ${schemes[0]}:// or ${schemes[1]}:// (got "${url.protocol}//").`);
  }
  // The client decodes them only as it connects, where a bad escape is an error with a stack.
  for (const [part, what] of [
    [url.username, 'user name'],
    [url.password, 'password'],
    [url.pathname, 'database name'],
  ] as const) {
    try {
      decodeURIComponent(part);
    } catch {
      throw new ConfigError(`${name} has a malformed %-escape in its ${what}; write a % itself as %25.`);
    }
  }
  // Without one the ORM stops the start with a stack trace.
  if (namedDatabase && url.pathname.replace(/^\//, '') === '') {
    throw new ConfigError(`${name} must name its database (the /database of ${example}).`);
  }
  // The client would send `SELECT NaN`, refused with a stack trace.
  if (numberedDatabase && !/^\/?\d*$/.test(url.pathname)) {
    throw new ConfigError(`${name}'s database must be a number (the /0 of ${schemes[0]}://host:6379/0), not "${url.pathname.slice(1)}".`);
  }
  return raw;
}

/**
 * node-postgres 8 reads `sslmode=prefer`, `require` and `verify-ca` as `verify-full` (TLS, the
 * server's certificate checked against its name), printing a multi-line security warning to stderr
 * at the first connection, and its next major version will read them as libpq does (`require`:
 * TLS, no certificate check). They are written as `verify-full` here, so the meaning the README
 * promises holds across that upgrade and the start prints nothing but its own lines. A URL that asks
 * for libpq's meanings (`uselibpqcompat=true`) is left as it is.
 */
/** What node-postgres reads in `sslmode`; any other value it takes as a request for TLS, silently. */
const SSL_MODES = ['disable', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify'];

function withPinnedSslMode(url: string | undefined): string | undefined {
  if (url === undefined) return url;
  const mode = new URL(url).searchParams.get('sslmode');
  // `sslmode=disabled` was read as "TLS required", and the start then blamed the server for not offering it.
  if (mode !== null && !SSL_MODES.includes(mode)) {
    throw new ConfigError(`DATABASE_URL's sslmode must be one of ${SSL_MODES.join(', ')} (got "${mode}").`);
  }
  if (/[?&]uselibpqcompat=true(&|$)/i.test(url)) return url;
  return url.replace(/([?&]sslmode=)(prefer|require|verify-ca)(?=&|#|$)/i, '$1verify-full');
}

function originList(env: Env, name: string): string[] {
  const raw = env[name]?.trim();
  if (!raw) return [];
  return raw.split(',').map((entry) => {
    const origin = entry.trim();
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || parsed.origin !== origin || !/^https?:$/.test(parsed.protocol)) {
      throw new ConfigError(`${name} must be a comma-separated list of origins like https://app.example.com (got "${origin}").`);
    }
    return origin;
  });
}

/** Host names that stay on the machine: a key set fetched from one in plain HTTP crosses no network. */
const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

function jwtConfig(env: Env, missing: string[] | undefined, production: boolean): JwtConfig {
  const jwksUrl = env.JWT_JWKS_URL?.trim() || undefined;
  if (jwksUrl !== undefined && !/^https?:\/\//.test(jwksUrl))
    throw new ConfigError(`JWT_JWKS_URL must be an http(s) URL (got "${jwksUrl}").`);
  // The key set decides whom every token speaks for: anyone on the path of a plain-HTTP fetch could
  // hand the service keys of their own, and sign tokens for any user.
  if (production && jwksUrl?.startsWith('http://') && !LOOPBACK_HOST.test(new URL(jwksUrl).hostname)) {
    throw new ConfigError(
      `JWT_JWKS_URL must be an https URL in production (got "${jwksUrl}"); plain http is taken only from this machine (localhost).`,
    );
  }
  const publicKey = env.JWT_PUBLIC_KEY?.trim() || undefined;
  if (publicKey !== undefined && !publicKey.startsWith('-----BEGIN PUBLIC KEY-----')) {
    throw new ConfigError('JWT_PUBLIC_KEY must be a PEM public key starting with -----BEGIN PUBLIC KEY-----.');
  }
  const secret = env.JWT_SECRET?.trim() || undefined;
  if (secret !== undefined && secret.length < 32) throw new ConfigError('JWT_SECRET must be at least 32 characters long.');
  const sources = [jwksUrl, publicKey, secret].filter((value) => value !== undefined).length;
  if (sources > 1) throw new ConfigError('Set only one of JWT_JWKS_URL, JWT_PUBLIC_KEY and JWT_SECRET.');
  if (sources === 0) missing?.push('JWT_JWKS_URL or JWT_PUBLIC_KEY (or JWT_SECRET)');
  if (!env.JWT_ISSUER?.trim()) missing?.push('JWT_ISSUER');
  if (!env.JWT_AUDIENCE?.trim()) missing?.push('JWT_AUDIENCE');
  return {
    secret,
    jwksUrl,
    publicKey,
    publicKeyAlgorithm: jwtAlgorithm(env),
    issuer: env.JWT_ISSUER?.trim() || 'portico-dev',
    audience: env.JWT_AUDIENCE?.trim() || 'portico',
    clockToleranceSec: integer(env, 'JWT_CLOCK_TOLERANCE_S', 30, 0, 600),
    maxAgeSec: duration(env, 'JWT_MAX_AGE', '24h', 60_000, 30 * 86_400_000) / 1000,
  };
}

function cidrList(env: Env, name: string): string[] {
  const raw = env[name]?.trim();
  if (!raw) return [];
  return raw.split(',').map((entry) => {
    const cidr = normalizeCidr(entry);
    if (!cidr) throw new ConfigError(`${name} must be a comma-separated list of IP addresses or CIDRs (got "${entry.trim()}").`);
    return cidr;
  });
}

/**
 * PUBLIC_URL: an absolute http(s) URL without a path, a query or a fragment. The service answers at
 * the root of its host, and the links it sends (`Location`, those of `/` and `/docs`) start at `/`:
 * behind a proxy that serves it under a path, clients would follow them out of it.
 */
function publicUrl(env: Env): string | undefined {
  const raw = env.PUBLIC_URL?.trim();
  if (!raw) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  if (!url || !/^https?:$/.test(url.protocol) || url.search || url.hash || url.username) {
    throw new ConfigError(
      `PUBLIC_URL must be the absolute http(s) URL clients reach the service at, like https://api.example.com (got "${raw}").`,
    );
  }
  if (url.pathname !== '/') {
    throw new ConfigError(
      `PUBLIC_URL must be an origin, without a path (got "${raw}"): Portico answers at the root of its host, and the links it sends (Location, /docs) start at /; serve it at the root of a host of its own.`,
    );
  }
  return url.origin;
}

/** `a`, `a and b`, `a, b and c`. */
function listed(items: readonly string[]): string {
  return items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/** Host names or IP addresses (IPv6 in brackets or not), comma-separated; kept lowercase, IPv6 without brackets. */
function hostList(env: Env, name: string): string[] {
  const raw = env[name]?.trim();
  if (!raw) return [];
  return raw.split(',').map((entry) => {
    const host = entry
      .trim()
      .toLowerCase()
      .replace(/^\[(.*)\]$/, '$1');
    if (!/^[a-z0-9.:-]+$/.test(host)) {
      throw new ConfigError(`${name} must be a comma-separated list of host names or IP addresses (got "${entry.trim()}").`);
    }
    return host;
  });
}

/** A server-side secret; when production needs it and it is missing, its name joins `missing`. */
function secret(env: Env, name: string, missing: string[] | undefined): string | undefined {
  const value = env[name]?.trim() || undefined;
  if (value !== undefined && value.length < 32) {
    throw new ConfigError(`${name} must be at least 32 characters long; generate one with \`openssl rand -base64 48\`.`);
  }
  if (value === undefined) missing?.push(name);
  return value;
}

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = env.NODE_ENV?.trim() || 'development';
  // A misspelt production (`prod`) would otherwise run as development: generated secrets, GraphiQL,
  // and a first start that prints a key with every scope.
  if (!isOneOf(NODE_ENVS, nodeEnv)) throw new ConfigError(`NODE_ENV must be one of ${NODE_ENVS.join(', ')} (got "${env.NODE_ENV}").`);
  const production = nodeEnv === 'production';
  const concurrency = integer(env, 'WEBHOOK_CONCURRENCY', 64, 1, 10_000);

  const logLevel = env.LOG_LEVEL?.trim().toLowerCase() || 'info';
  if (!isOneOf(LOG_LEVELS, logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${env.LOG_LEVEL}").`);
  }

  // What production needs and development generates or defaults, gathered so that one message names
  // every one missing.
  const missing: string[] | undefined = production ? [] : undefined;
  const databaseUrl = withPinnedSslMode(
    serverUrl(env, 'DATABASE_URL', ['postgres', 'postgresql'], 'postgres://user:password@host:5432/database', {
      namedDatabase: true,
    }),
  );
  if (databaseUrl === undefined) missing?.push('DATABASE_URL (production runs no embedded PostgreSQL)');
  const cursorSecret = secret(env, 'CURSOR_SECRET', missing);
  const apiKeyPepper = secret(env, 'API_KEY_PEPPER', missing);
  const webhookSecretKey = secret(env, 'WEBHOOK_SECRET_KEY', missing);
  const jwt = jwtConfig(env, missing, production);
  if (missing && missing.length > 0) {
    throw new ConfigError(
      `NODE_ENV=production needs ${listed(missing)}; generate each secret (CURSOR_SECRET, API_KEY_PEPPER, WEBHOOK_SECRET_KEY: the same on every instance) with \`openssl rand -base64 48\`.`,
    );
  }

  const port = integer(env, 'PORT', 4000, 0, 65535);
  const metricsPort = env.METRICS_PORT?.trim() ? integer(env, 'METRICS_PORT', 0, 0, 65535) : undefined;
  if (metricsPort !== undefined && metricsPort !== 0 && metricsPort === port) {
    throw new ConfigError(`METRICS_PORT must differ from PORT (both ${port}).`);
  }

  return {
    port,
    publicUrl: publicUrl(env),
    // A development instance prints a key with every scope at its first start: not for the network.
    host: env.HOST?.trim() || (production ? '0.0.0.0' : '127.0.0.1'),
    databaseUrl,
    databasePoolMax: integer(env, 'DATABASE_POOL_MAX', 10, 1, 1000),
    statementTimeoutMs: integer(env, 'DB_STATEMENT_TIMEOUT_MS', 5000, 100, 600_000),
    databaseConnectTimeoutMs: integer(env, 'DB_CONNECT_TIMEOUT_MS', 5000, 100, 600_000),
    production,
    tracing: tracingConfig(env),
    metrics: {
      port: metricsPort,
      token: secret(env, 'METRICS_TOKEN', undefined),
    },
    logLevel,
    logFormat: oneOf(env, 'LOG_FORMAT', LOG_FORMATS),
    cursorSecret,
    apiKeyPepper,
    dataDir: path.resolve(env.DATA_DIR?.trim() || '.data'),
    graphiql: boolean(env, 'GRAPHIQL', !production),
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    trustProxy: cidrList(env, 'TRUST_PROXY'),
    apiKeyCacheMs: integer(env, 'API_KEY_CACHE_MS', 30_000, 0, 3_600_000),
    usageFlushMs: integer(env, 'USAGE_FLUSH_MS', 10_000, 100, 3_600_000),
    jwt,
    queryLimits: {
      maxDepth: integer(env, 'GRAPHQL_MAX_DEPTH', 10, 1, 100),
      maxAliases: integer(env, 'GRAPHQL_MAX_ALIASES', 15, 0, 1000),
      maxTokens: integer(env, 'GRAPHQL_MAX_TOKENS', 5000, 100, 100_000),
      maxDirectives: integer(env, 'GRAPHQL_MAX_DIRECTIVES', 10, 0, 1000),
      maxCost: integer(env, 'GRAPHQL_MAX_COST', 10_000, 1, 10_000_000),
    },
    rateLimit: {
      max: integer(env, 'RATE_LIMIT', 600, 1, RATE_LIMIT_MAX),
      unidentifiedMax: integer(env, 'RATE_LIMIT_UNIDENTIFIED', 60, 1, 1_000_000_000),
      windowMs: integer(env, 'RATE_LIMIT_WINDOW_MS', 60_000, 100, 86_400_000),
      redisUrl: serverUrl(env, 'REDIS_URL', ['redis', 'rediss'], 'redis://[:password@]host:6379[/db]', { numberedDatabase: true }),
    },
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 15_000, 100, 600_000),
    keepAliveTimeoutMs: integer(env, 'KEEP_ALIVE_TIMEOUT_MS', 65_000, 1000, 3_600_000),
    maxConnectionsPerClient: integer(env, 'MAX_CONNECTIONS_PER_CLIENT', 1024, 1, 1_000_000),
    corsOrigins: originList(env, 'CORS_ORIGINS'),
    idempotency: {
      ttlMs: duration(env, 'IDEMPOTENCY_TTL', '24h', 1000, 30 * 86_400_000),
      required: boolean(env, 'IDEMPOTENCY_REQUIRED', false),
    },
    webhooks: {
      secretKey: webhookSecretKey,
      allowedHosts: hostList(env, 'WEBHOOK_ALLOWED_HOSTS'),
      allowHttp: !production,
      revealAddresses: !production,
      maxEndpointsPerKey: integer(env, 'WEBHOOK_MAX_ENDPOINTS', 20, 1, 1000),
      eventRetentionMs: duration(env, 'EVENT_RETENTION', '30d', 60_000, 365 * 86_400_000),
      delivery: {
        retryScheduleMs: durationList(env, 'WEBHOOK_RETRY_SCHEDULE', '0,1m,5m,30m', 20, 7 * 86_400_000),
        timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
        concurrency,
        endpointConcurrency: integer(env, 'WEBHOOK_ENDPOINT_CONCURRENCY', 16, 1, 10_000),
        // Half the places by default: one key's endpoints never leave the others fewer than that.
        ownerConcurrency: integer(env, 'WEBHOOK_OWNER_CONCURRENCY', Math.max(1, Math.floor(concurrency / 2)), 1, 10_000),
        pollMs: integer(env, 'WEBHOOK_POLL_MS', 1000, 10, 600_000),
      },
    },
    failpoints: production ? new Set() : failpoints(env),
  };
}

/**
 * Tracing is on when an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT, or the traces-only
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, read by the exporter itself as the specification says) and
 * neither OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none turns it off.
 */
function tracingConfig(env: Env): TracingConfig | undefined {
  const example = 'http://collector:4318';
  const endpoint =
    serverUrl(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', ['http', 'https'], `${example}/v1/traces`) ??
    serverUrl(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', ['http', 'https'], example);
  if (endpoint === undefined || boolean(env, 'OTEL_SDK_DISABLED', false)) return undefined;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() || 'otlp';
  if (exporter === 'none') return undefined;
  if (exporter !== 'otlp') throw new ConfigError(`OTEL_TRACES_EXPORTER must be otlp or none (got "${env.OTEL_TRACES_EXPORTER}").`);
  const sampler = oneOf(env, 'OTEL_TRACES_SAMPLER', TRACE_SAMPLERS) ?? 'parentbased_always_on';
  const rawRatio = env.OTEL_TRACES_SAMPLER_ARG?.trim() || '1';
  const ratio = Number(rawRatio);
  if (!/^\d*\.?\d+$/.test(rawRatio) || ratio > 1) {
    throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a sampling ratio from 0 to 1, like 0.1 (got "${rawRatio}").`);
  }
  const resourceAttributes = resourceAttributesOf(env);
  return {
    serviceName: env.OTEL_SERVICE_NAME?.trim() || resourceAttributes['service.name'] || 'portico',
    resourceAttributes,
    protocol:
      oneOf(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', TRACE_PROTOCOLS) ??
      oneOf(env, 'OTEL_EXPORTER_OTLP_PROTOCOL', TRACE_PROTOCOLS) ??
      'http/protobuf',
    sampler,
    ratio,
    resolvers: oneOf(env, 'TRACE_RESOLVERS', TRACE_RESOLVERS) ?? 'root',
    batch: spanBatching(env),
    propagation: propagationOf(env),
    // Read here rather than by the exporter, which would ignore a malformed value without a word.
    exportTimeoutMs: integer(
      env,
      env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT?.trim() ? 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT' : 'OTEL_EXPORTER_OTLP_TIMEOUT',
      10_000,
      1,
      3_600_000,
    ),
    exportHeaders: exportHeadersOf(env),
    compression:
      oneOf(env, 'OTEL_EXPORTER_OTLP_TRACES_COMPRESSION', TRACE_COMPRESSIONS) ??
      oneOf(env, 'OTEL_EXPORTER_OTLP_COMPRESSION', TRACE_COMPRESSIONS) ??
      'none',
    exportTls: exportTlsOf(env),
  };
}

/** The propagators of OTEL_PROPAGATORS that Portico knows; the specification's default is `tracecontext,baggage`. */
const PROPAGATORS = ['tracecontext', 'baggage', 'none'] as const;

/**
 * OTEL_PROPAGATORS, a comma-separated list. Portico speaks W3C trace context alone. `baggage` is
 * accepted, as in the specification's default, and carries nothing: no call leaves a request on its
 * behalf (a webhook delivery is a trace of its own, later), so there is nothing to hand it to. `none`
 * stops callers' `traceparent` from being followed (a caller could otherwise have every one of its
 * requests recorded) and delivery attempts from sending theirs. Any other propagator (b3, jaeger…)
 * is refused rather than ignored.
 */
function propagationOf(env: Env): TracingConfig['propagation'] {
  const raw = env.OTEL_PROPAGATORS?.trim();
  const names = (raw || 'tracecontext,baggage').split(',').map((name) => name.trim().toLowerCase());
  if (!names.every((name) => isOneOf(PROPAGATORS, name)) || (names.includes('none') && names.length > 1)) {
    throw new ConfigError(
      `OTEL_PROPAGATORS must be a list of ${PROPAGATORS.slice(0, 2).join(', ')} (W3C trace context is the one Portico speaks), or none alone (got "${raw}").`,
    );
  }
  return names.includes('tracecontext') ? 'tracecontext' : 'none';
}

/**
 * A list as the specification writes OTEL_RESOURCE_ATTRIBUTES and OTEL_EXPORTER_OTLP_HEADERS:
 * comma-separated `key=value` pairs, values percent-encoded. A malformed list stops the start (the
 * specification's SDKs drop a bad entry with a warning, and every span, or every export, would then
 * lack what the operator meant it to carry). `accepts` decides each decoded pair; the values are not
 * echoed, since an operator may put anything there, credentials included.
 */
function keyValueList(
  env: Env,
  name: string,
  what: { pairs: string; example: string },
  accepts: (key: string, value: string) => boolean = () => true,
): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const [index, pair] of (env[name] ?? '').split(',').entries()) {
    if (pair.trim() === '') continue;
    const equals = pair.indexOf('=');
    const key = pair.slice(0, equals).trim();
    let value: string | undefined;
    try {
      value = decodeURIComponent(pair.slice(equals + 1).trim());
    } catch {
      value = undefined;
    }
    if (equals < 0 || key === '' || value === undefined || !accepts(key, value)) {
      throw new ConfigError(
        `${name} must be comma-separated ${what.pairs} pairs with percent-encoded values, like ${what.example} (entry ${index + 1} is not).`,
      );
    }
    pairs[key] = value;
  }
  return pairs;
}

/** OTEL_RESOURCE_ATTRIBUTES: what every span says of where it comes from. */
function resourceAttributesOf(env: Env): Record<string, string> {
  return keyValueList(env, 'OTEL_RESOURCE_ATTRIBUTES', { pairs: 'key=value', example: 'deployment.environment.name=production' });
}

/** An HTTP field name (RFC 9110's token), and a value Node will send: no control characters but tab, nothing past Latin-1. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * The headers every export carries. Read by the exporter itself, a malformed entry was dropped without
 * a word (the collector then refuses every export for want of its credentials), and a value Node
 * cannot send failed every export.
 */
function exportHeadersOf(env: Env): Record<string, string> {
  const headers = (name: string) =>
    keyValueList(
      env,
      name,
      { pairs: 'name=value', example: 'authorization=Bearer%20…' },
      (key, value) => HEADER_NAME.test(key) && HEADER_VALUE.test(value),
    );
  return { ...headers('OTEL_EXPORTER_OTLP_HEADERS'), ...headers('OTEL_EXPORTER_OTLP_TRACES_HEADERS') };
}

/** A file the exporter needs to reach the collector, read once at start; the traces-only variable wins. */
function exportFile(env: Env, suffix: string): Buffer | undefined {
  const name = env[`OTEL_EXPORTER_OTLP_TRACES_${suffix}`]?.trim() ? `OTEL_EXPORTER_OTLP_TRACES_${suffix}` : `OTEL_EXPORTER_OTLP_${suffix}`;
  const file = env[name]?.trim();
  if (!file) return undefined;
  try {
    return readFileSync(path.resolve(file));
  } catch (error) {
    // The exporter would go on without it, and every export would then fail its TLS handshake.
    throw new ConfigError(`${name} names a file that cannot be read (${file}: ${errnoOf(error) ?? 'unreadable'}).`);
  }
}

/** OTEL_EXPORTER_OTLP_CERTIFICATE, …_CLIENT_CERTIFICATE and …_CLIENT_KEY, each with its `_TRACES_` variant. */
function exportTlsOf(env: Env): TracingConfig['exportTls'] {
  const files = { ca: exportFile(env, 'CERTIFICATE'), cert: exportFile(env, 'CLIENT_CERTIFICATE'), key: exportFile(env, 'CLIENT_KEY') };
  return Object.fromEntries(Object.entries(files).filter(([, contents]) => contents !== undefined));
}

/** OTEL_BSP_*, with the specification's defaults; SDK 2 and later leave reading them to the application. */
function spanBatching(env: Env): SpanBatching {
  const hour = 3_600_000;
  const maxQueueSize = integer(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048, 1, 1_000_000);
  return {
    scheduledDelayMillis: integer(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000, 0, hour),
    exportTimeoutMillis: integer(env, 'OTEL_BSP_EXPORT_TIMEOUT', 30_000, 1, hour),
    maxQueueSize,
    maxExportBatchSize: integer(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', Math.min(512, maxQueueSize), 1, maxQueueSize),
  };
}

/** PORTICO_FAILPOINTS: a comma-separated list of FAILPOINTS, for tests. */
function failpoints(env: Env): ReadonlySet<Failpoint> {
  const names = (env.PORTICO_FAILPOINTS ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = names.filter((name) => !isOneOf(FAILPOINTS, name));
  if (unknown.length > 0)
    throw new ConfigError(`PORTICO_FAILPOINTS must list some of ${FAILPOINTS.join(', ')} (got "${unknown.join(', ')}").`);
  return new Set(names.filter((name) => isOneOf(FAILPOINTS, name)));
}
