import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';

describe('configuration', () => {
  it('has working defaults for development', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 4000,
      host: '127.0.0.1',
      databaseUrl: undefined,
      production: false,
      logLevel: 'info',
      graphiql: true,
    });
    expect(config.dataDir).toMatch(/\.data$/);
  });

  it.each([
    [{ PORT: 'abc' }, /PORT must be a whole number from 0 to 65535 \(got "abc"\)/],
    [{ PORT: '70000' }, /PORT/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of/],
    [{ LOG_FORMAT: 'xml' }, /LOG_FORMAT must be one of json, pretty/],
    [{ PUBLIC_URL: 'api.example.com' }, /PUBLIC_URL must be the absolute http\(s\) URL/],
    [{ PUBLIC_URL: 'https://api.example.com/?x=1' }, /PUBLIC_URL must be the absolute http\(s\) URL/],
    [
      { PUBLIC_URL: 'https://api.example.com/portico' },
      /PUBLIC_URL must be an origin, without a path \(got "https:\/\/api.example.com\/portico"\)/,
    ],
    [{ DATABASE_URL: 'mysql://x@y/z' }, /DATABASE_URL must start with postgres:\/\//],
    [{ DATABASE_URL: 'not a url' }, /DATABASE_URL is not a valid URL/],
    [{ CURSOR_SECRET: 'short' }, /CURSOR_SECRET must be at least 32 characters/],
    [{ API_KEY_PEPPER: 'short' }, /API_KEY_PEPPER must be at least 32 characters/],
    [{ GRAPHIQL: 'maybe' }, /GRAPHIQL must be true or false/],
    [{ RATE_LIMIT: '0' }, /RATE_LIMIT must be a whole number from 1 to/],
    [{ RATE_LIMIT_WINDOW_MS: '1m' }, /RATE_LIMIT_WINDOW_MS must be a whole number/],
    [{ REDIS_URL: 'http://cache:6379' }, /REDIS_URL must start with redis:\/\/ or rediss:\/\//],
    [{ REDIS_URL: 'not a url' }, /REDIS_URL is not a valid URL/],
    [{ REDIS_URL: 'redis://:pw@cache:6379/abc' }, /REDIS_URL's database must be a number \(the \/0 of redis:\/\/host:6379\/0\), not "abc"/],
    [{ DATABASE_URL: 'postgres://u:p%zz@db:5432/x' }, /DATABASE_URL has a malformed %-escape in its password/],
    [{ DATABASE_URL: 'postgres://u%zz:p@db:5432/x' }, /DATABASE_URL has a malformed %-escape in its user name/],
    [{ DATABASE_URL: 'postgres://u:p@db:5432/d%zzb' }, /DATABASE_URL has a malformed %-escape in its database name/],
    [
      { DATABASE_URL: 'postgres://u:p@db:5432' },
      /DATABASE_URL must name its database \(the \/database of postgres:\/\/user:password@host:5432\/database\)/,
    ],
    [{ DATABASE_URL: 'postgres://' }, /DATABASE_URL must name its database/],
    [{ REDIS_URL: 'redis://:p%zz@cache:6379' }, /REDIS_URL has a malformed %-escape in its password/],
    [{ REQUEST_TIMEOUT_MS: '5' }, /REQUEST_TIMEOUT_MS must be a whole number from 100/],
    [{ CORS_ORIGINS: 'https://app.example.com/path' }, /CORS_ORIGINS must be a comma-separated list of origins/],
    [{ CORS_ORIGINS: '*' }, /CORS_ORIGINS must be a comma-separated list of origins/],
    [{ JWT_MAX_AGE: '24' }, /JWT_MAX_AGE must be a duration like 15m, 24h or 7d, from 60s to 30d \(got "24"\)/],
    [{ JWT_MAX_AGE: '31d' }, /JWT_MAX_AGE must be a duration/],
    [{ NODE_ENV: 'prod' }, /NODE_ENV must be one of production, development, test \(got "prod"\)/],
    [{ JWT_ALGORITHM: 'none' }, /JWT_ALGORITHM must be one of RS256, .*EdDSA \(got "none"\)/],
    [{ JWT_ALGORITHM: 'HS256' }, /JWT_ALGORITHM must be one of RS256/],
    [{ METRICS_PORT: 'x' }, /METRICS_PORT must be a whole number from 0 to 65535/],
    [{ METRICS_TOKEN: 'short' }, /METRICS_TOKEN must be at least 32 characters/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, /OTEL_EXPORTER_OTLP_ENDPOINT/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_SAMPLER: 'sometimes' }, /OTEL_TRACES_SAMPLER must be one of/],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_SAMPLER_ARG: '1.5' },
      /OTEL_TRACES_SAMPLER_ARG must be a sampling ratio from 0 to 1/,
    ],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'zipkin' }, /OTEL_TRACES_EXPORTER must be otlp or none/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', TRACE_RESOLVERS: 'some' }, /TRACE_RESOLVERS must be one of root, all, none/],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
      /OTEL_EXPORTER_OTLP_PROTOCOL must be one of http\/protobuf, http\/json/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TIMEOUT: '10s' },
      /OTEL_EXPORTER_OTLP_TIMEOUT must be a whole number from 1/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '0' },
      /OTEL_EXPORTER_OTLP_TRACES_TIMEOUT must be a whole number from 1/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_RESOURCE_ATTRIBUTES: 'team=core,secret-less' },
      /OTEL_RESOURCE_ATTRIBUTES must be comma-separated key=value pairs .* \(entry 2 is not\)/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_RESOURCE_ATTRIBUTES: 'team=%E0%A4%A' },
      /OTEL_RESOURCE_ATTRIBUTES must be comma-separated key=value pairs/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_BSP_SCHEDULE_DELAY: '5s' },
      /OTEL_BSP_SCHEDULE_DELAY must be a whole number/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_BSP_MAX_QUEUE_SIZE: '0' },
      /OTEL_BSP_MAX_QUEUE_SIZE must be a whole number from 1/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_PROPAGATORS: 'tracecontext,b3' },
      /OTEL_PROPAGATORS must be a list of tracecontext, baggage .* or none alone \(got "tracecontext,b3"\)/,
    ],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_PROPAGATORS: 'none,tracecontext' }, /OTEL_PROPAGATORS must be/],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '512' },
      /OTEL_BSP_MAX_EXPORT_BATCH_SIZE must be a whole number from 1 to 100 /,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_HEADERS: 'x-team=core,authorization' },
      /OTEL_EXPORTER_OTLP_HEADERS must be comma-separated name=value pairs .* \(entry 2 is not\)/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'bad header=1' },
      /OTEL_EXPORTER_OTLP_TRACES_HEADERS must be comma-separated name=value pairs .* \(entry 1 is not\)/,
    ],
    // A value that would break the request line: a line break, percent-encoded.
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%0D%0Ax' },
      /OTEL_EXPORTER_OTLP_HEADERS must be comma-separated name=value pairs/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_COMPRESSION: 'zip' },
      /OTEL_EXPORTER_OTLP_COMPRESSION must be one of gzip, none/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: 'br' },
      /OTEL_EXPORTER_OTLP_TRACES_COMPRESSION must be one of gzip, none/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector:4318', OTEL_EXPORTER_OTLP_CERTIFICATE: '/nonexistent/ca.pem' },
      /OTEL_EXPORTER_OTLP_CERTIFICATE names a file that cannot be read \(\/nonexistent\/ca.pem: ENOENT\)/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector:4318', OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY: '/nonexistent/key.pem' },
      /OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY names a file that cannot be read/,
    ],
  ])('refuses %j with a message naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it.each([
    { DATABASE_URL: 'mysql://user:hunter2secret@db/x' },
    { REDIS_URL: 'http://:hunter2secret@cache:6379' },
    { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer hunter2secret%ZZ' },
  ])('never echoes a password in its errors (%#)', (env) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).not.toThrow(/hunter2secret/);
  });

  it('traces only when an OTLP endpoint is set, with the standard variables', () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing).toEqual({
      serviceName: 'portico',
      resourceAttributes: {},
      sampler: 'parentbased_always_on',
      ratio: 1,
      protocol: 'http/protobuf',
      resolvers: 'root',
      batch: { scheduledDelayMillis: 5000, exportTimeoutMillis: 30_000, maxQueueSize: 2048, maxExportBatchSize: 512 },
      exportTimeoutMs: 10_000,
      exportHeaders: {},
      compression: 'none',
      exportTls: {},
      propagation: 'tracecontext',
    });
    expect(
      loadConfig({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector:4318/v1/traces',
        OTEL_SERVICE_NAME: 'api-eu',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.1',
        TRACE_RESOLVERS: 'all',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=production, service.namespace=shop,',
        OTEL_BSP_SCHEDULE_DELAY: '1000',
        OTEL_BSP_EXPORT_TIMEOUT: '10000',
        OTEL_BSP_MAX_QUEUE_SIZE: '100',
        OTEL_EXPORTER_OTLP_TIMEOUT: '5000',
        OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '2500',
        OTEL_PROPAGATORS: 'none',
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc, x-team=core',
        OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-team=traces',
        OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
      }).tracing,
    ).toEqual({
      serviceName: 'api-eu',
      resourceAttributes: { 'deployment.environment.name': 'production', 'service.namespace': 'shop' },
      sampler: 'parentbased_traceidratio',
      ratio: 0.1,
      protocol: 'http/json',
      resolvers: 'all',
      // A batch is never larger than the queue.
      batch: { scheduledDelayMillis: 1000, exportTimeoutMillis: 10_000, maxQueueSize: 100, maxExportBatchSize: 100 },
      // The traces-only variable wins.
      exportTimeoutMs: 2500,
      // Values percent-decoded; the traces-only variable wins, name by name.
      exportHeaders: { authorization: 'Bearer abc', 'x-team': 'traces' },
      compression: 'gzip',
      exportTls: {},
      propagation: 'none',
    });
    // W3C trace context is the one propagator; baggage, in the specification's default, carries nothing.
    const propagation = (OTEL_PROPAGATORS: string) =>
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_PROPAGATORS }).tracing?.propagation;
    expect(['tracecontext,baggage', ' TraceContext ', 'baggage', 'none', ''].map(propagation)).toEqual([
      'tracecontext',
      'tracecontext',
      'none',
      'none',
      'tracecontext',
    ]);
    // With no OTEL_SERVICE_NAME, the resource attributes may name the service.
    expect(
      loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_RESOURCE_ATTRIBUTES: 'service.name=api%20eu' }).tracing
        ?.serviceName,
    ).toBe('api eu');
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }).tracing).toBeUndefined();
  });

  it('reads the collector’s TLS files at start: the traces-only variable wins, as the others do', async () => {
    const folder = await fs.mkdtemp(path.join(os.tmpdir(), 'portico-otlp-tls-'));
    try {
      const file = async (name: string, text: string) => {
        await fs.writeFile(path.join(folder, name), text);
        return path.join(folder, name);
      };
      const tls = loadConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector:4318',
        OTEL_EXPORTER_OTLP_CERTIFICATE: await file('ca.pem', 'shared ca'),
        OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: await file('traces-ca.pem', 'traces ca'),
        OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: await file('client.pem', 'client certificate'),
        OTEL_EXPORTER_OTLP_CLIENT_KEY: await file('client-key.pem', 'client key'),
      }).tracing?.exportTls;
      expect({ ca: tls?.ca?.toString(), cert: tls?.cert?.toString(), key: tls?.key?.toString() }).toEqual({
        ca: 'traces ca',
        cert: 'client certificate',
        key: 'client key',
      });
    } finally {
      await fs.rm(folder, { recursive: true, force: true });
    }
  });

  it('serves metrics only when METRICS_PORT or METRICS_TOKEN says where', () => {
    expect(loadConfig({}).metrics).toEqual({ port: undefined, token: undefined });
    expect(loadConfig({ METRICS_PORT: '9464' }).metrics).toEqual({ port: 9464, token: undefined });
  });

  it('bounds user token lifetimes to 24 h unless JWT_MAX_AGE says otherwise', () => {
    expect(loadConfig({}).jwt.maxAgeSec).toBe(86_400);
    expect(loadConfig({ JWT_MAX_AGE: '15m' }).jwt.maxAgeSec).toBe(900);
  });

  it('limits each key to 600 operations a minute and each address to 60 without a valid key, counted in memory unless REDIS_URL is set', () => {
    expect(loadConfig({}).rateLimit).toEqual({ max: 600, unidentifiedMax: 60, windowMs: 60_000, redisUrl: undefined });
    expect(
      loadConfig({ RATE_LIMIT: '50', RATE_LIMIT_UNIDENTIFIED: '5', RATE_LIMIT_WINDOW_MS: '1000', REDIS_URL: 'redis://cache:6379/2' })
        .rateLimit,
    ).toEqual({ max: 50, unidentifiedMax: 5, windowMs: 1000, redisUrl: 'redis://cache:6379/2' });
  });

  it("pins DATABASE_URL's sslmode to what node-postgres makes of it today, unless libpq's meanings are asked for", () => {
    const url = (DATABASE_URL: string) => loadConfig({ DATABASE_URL }).databaseUrl;
    for (const mode of ['require', 'prefer', 'verify-ca']) {
      expect(url(`postgres://u:p@db:5432/x?sslmode=${mode}&application_name=a`)).toBe(
        'postgres://u:p@db:5432/x?sslmode=verify-full&application_name=a',
      );
    }
    for (const kept of [
      'postgres://u:p@db:5432/x?sslmode=verify-full',
      'postgres://u:p@db:5432/x?sslmode=disable',
      'postgres://u:p@db:5432/x?uselibpqcompat=true&sslmode=require',
      'postgres://u:p@db:5432/x?application_name=sslmode=require',
    ]) {
      expect(url(kept)).toBe(kept);
    }
  });

  it('bounds every wait on PostgreSQL: 5 s for a connection, 5 s for a statement', () => {
    expect(loadConfig({})).toMatchObject({ databaseConnectTimeoutMs: 5000, statementTimeoutMs: 5000 });
    expect(loadConfig({ DB_CONNECT_TIMEOUT_MS: '1500' }).databaseConnectTimeoutMs).toBe(1500);
    expect(() => loadConfig({ DB_CONNECT_TIMEOUT_MS: '0' })).toThrow(/DB_CONNECT_TIMEOUT_MS must be a whole number from 100/);
  });

  it('names every setting production is missing in one message', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(
      'NODE_ENV=production needs DATABASE_URL (production runs no embedded PostgreSQL), CURSOR_SECRET, API_KEY_PEPPER, WEBHOOK_SECRET_KEY, ' +
        'JWT_JWKS_URL or JWT_PUBLIC_KEY (or JWT_SECRET), JWT_ISSUER and JWT_AUDIENCE; generate each secret',
    );
  });

  it('turns on production policies with NODE_ENV=production', () => {
    const secrets = {
      DATABASE_URL: 'postgres://portico:secret@db.internal:5432/portico',
      CURSOR_SECRET: 'x'.repeat(40),
      API_KEY_PEPPER: 'y'.repeat(40),
      WEBHOOK_SECRET_KEY: 'w'.repeat(40),
      JWT_JWKS_URL: 'https://id.example.com/.well-known/jwks.json',
      JWT_ISSUER: 'https://id.example.com/',
      JWT_AUDIENCE: 'portico',
    };
    const config = loadConfig({ NODE_ENV: 'production', ...secrets });
    expect(config.production).toBe(true);
    expect(config.graphiql).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', ...secrets, GRAPHIQL: 'true' }).graphiql).toBe(true);
    expect(() => loadConfig({ ...secrets, NODE_ENV: 'production', JWT_ISSUER: '' })).toThrow(/^NODE_ENV=production needs JWT_ISSUER;/);
    // The key set that says whom tokens speak for is not fetched in plain HTTP across a network.
    expect(() => loadConfig({ ...secrets, NODE_ENV: 'production', JWT_JWKS_URL: 'http://id.example.com/jwks.json' })).toThrow(
      /^JWT_JWKS_URL must be an https URL in production/,
    );
    for (const local of ['http://localhost:8080/jwks.json', 'http://127.0.0.1:8080/jwks.json', 'http://[::1]:8080/jwks.json']) {
      expect(loadConfig({ ...secrets, NODE_ENV: 'production', JWT_JWKS_URL: local }).jwt.jwksUrl).toBe(local);
    }
    expect(loadConfig({ ...secrets, JWT_JWKS_URL: 'http://id.example.com/jwks.json' }).jwt.jwksUrl).toBe('http://id.example.com/jwks.json');
    expect(() => loadConfig({ ...secrets, NODE_ENV: 'production', WEBHOOK_SECRET_KEY: '' })).toThrow(
      /^NODE_ENV=production needs WEBHOOK_SECRET_KEY;/,
    );
    // Development listens on the loopback only (its first start prints a key with every scope); production everywhere.
    expect([loadConfig({}).host, config.host, loadConfig({ HOST: '::' }).host]).toEqual(['127.0.0.1', '0.0.0.0', '::']);
    // Endpoint URLs must use https in production.
    expect([config.webhooks.allowHttp, loadConfig({}).webhooks.allowHttp]).toEqual([false, true]);
    expect(() => loadConfig({ ...secrets, JWT_SECRET: 'z'.repeat(40) })).toThrow(/only one of/);
  });
});

describe('DATABASE_URL sslmode', () => {
  it('refuses a value node-postgres would silently read as a request for TLS, naming the ones it reads', () => {
    for (const mode of ['disabled', 'bogus', 'REQUIRE']) {
      expect(() => loadConfig({ DATABASE_URL: `postgres://u:p@db.internal:5432/portico?sslmode=${mode}` })).toThrow(
        `DATABASE_URL's sslmode must be one of disable, prefer, require, verify-ca, verify-full, no-verify (got "${mode}").`,
      );
    }
    expect(loadConfig({ DATABASE_URL: 'postgres://u:p@db.internal:5432/portico?sslmode=disable' }).databaseUrl).toContain(
      'sslmode=disable',
    );
  });
});
