// The floor of the stack the product is built on, measured beside it: graphql-yoga serving a Pothos
// schema (with the scope-auth and relay plugins) whose one field, `user(id)`, reads the user with
// the same single statement raw pg sends; and the envelop plugins the product must run on every
// request, as it configures them: graphql-armor's document limits and @envelop/rate-limiter (with a
// store that decides nothing, the cheapest there can be), which the stack prescribes, and yoga's
// Prometheus plugin timing GraphQL's phases, which the metrics require (Portico times the same
// series with hooks of its own, plugins/phase-metrics.ts, which cost less). None of Portico's own code
// runs: no keys, no usage counts, no cost walk, no logging, no Problem Details, and none of the ways
// Portico cuts those libraries' cost (the rate limiter shown only the operation's root fields, the
// cached document restored after it). What this server costs per request is what the stack costs
// before Portico adds anything.
//
// FLOOR_PLUGINS: a comma-separated list of armor, rate-limiter, prometheus, and the optional csrf
// (yoga's CSRF check) and jit (graphql-jit; the rate limiter hands execution a copy of the document
// each time, so jit compiles every request anew unless the cached document is put back, as Portico
// does); `none` for yoga and Pothos alone. Unset: armor, rate-limiter and prometheus.
// Usage: node bench/stack-floor-server.ts DATABASE_URL PORT POOL_MAX; prints "listening" when it serves.
import http from 'node:http';
import SchemaBuilder from '@pothos/core';
import RelayPlugin from '@pothos/plugin-relay';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { useGraphQlJit } from '@envelop/graphql-jit';
import { Store, useRateLimiter } from '@envelop/rate-limiter';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { usePrometheus, type PrometheusTracingPluginConfig } from '@graphql-yoga/plugin-prometheus';
import { createYoga, type Plugin } from 'graphql-yoga';
import pg from 'pg';
import { Registry } from 'prom-client';
import { loadConfig } from '../src/config.ts';

/** yoga's Prometheus plugin timing GraphQL's three phases alone, by operation type. */
function phaseMetricsOnly(registry: Registry): PrometheusTracingPluginConfig {
  return {
    registry,
    endpoint: false,
    metrics: {
      graphql_envelop_phase_parse: true,
      graphql_envelop_phase_validate: true,
      graphql_envelop_phase_execute: true,
      graphql_envelop_request: false,
      graphql_envelop_request_duration: false,
      graphql_envelop_request_time_summary: false,
      graphql_envelop_phase_context: false,
      graphql_envelop_error_result: false,
      graphql_envelop_deprecated_field: false,
      graphql_envelop_schema_change: false,
      graphql_envelop_phase_subscribe: false,
      graphql_yoga_http_duration: false,
    },
    labels: { operationName: false },
  };
}

const [url, port, poolMax] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: url, max: Number(poolMax) });
const chosen = new Set((process.env.FLOOR_PLUGINS ?? 'armor,rate-limiter,prometheus').split(',').map((name) => name.trim()));
/** Portico's default document limits. */
const limits = loadConfig({}).queryLimits;

interface UserRow {
  id: string;
  name: string;
  email: string;
}

const builder = new SchemaBuilder<{ AuthScopes: { scope: string } }>({
  plugins: [ScopeAuthPlugin, RelayPlugin],
  scopeAuth: { authScopes: () => ({ scope: () => true }) },
  relay: {},
});
const User = builder.objectRef<UserRow>('User').implement({
  fields: (t) => ({ id: t.exposeID('id'), name: t.exposeString('name'), email: t.exposeString('email') }),
});
builder.queryType({
  fields: (t) => ({
    user: t.field({
      type: User,
      nullable: true,
      authScopes: { scope: 'users:read' },
      args: { id: t.arg.id({ required: true }) },
      resolve: async (_root, args) =>
        (await pool.query<UserRow>('select id, name, email from users where id = $1', [String(args.id)])).rows[0] ?? null,
    }),
  }),
});

/** Decides nothing: every request fits. A lower bound on any store (Portico's counts atomically). */
class AdmitAll extends Store {
  getForIdentity(): readonly number[] {
    return [];
  }
  setForIdentity(): void {}
}

/** A library's plugin as a yoga plugin: yoga's plugin type is invariant in its context (see src/plugins/server-context.ts). */
const library = (plugin: object): Plugin => plugin;

/** Each library, built only when chosen. */
const available: Record<string, () => object> = {
  csrf: () => useCSRFPrevention({ requestHeaders: ['x-api-key', 'x-graphql-yoga-csrf'] }),
  armor: () =>
    EnvelopArmorPlugin({
      maxDepth: { n: limits.maxDepth, exposeLimits: true, ignoreIntrospection: true },
      maxAliases: { n: limits.maxAliases, exposeLimits: true },
      maxTokens: { n: limits.maxTokens, exposeLimits: true },
      maxDirectives: { n: limits.maxDirectives, exposeLimits: true },
      costLimit: { enabled: false },
      blockFieldSuggestion: { enabled: true },
    }),
  'rate-limiter': () =>
    useRateLimiter({
      identifyFn: () => 'bench',
      configByField: [
        { type: 'Query', field: '*', max: 1, readOnly: true },
        { type: 'Mutation', field: '*', max: 1, readOnly: true },
      ],
      store: new AdmitAll(),
    }),
  prometheus: () => usePrometheus(phaseMetricsOnly(new Registry())),
  jit: () => useGraphQlJit(),
};
const plugins = Object.entries(available).flatMap(([name, make]) => (chosen.has(name) ? [library(make())] : []));

// Yoga as Portico sets it up: no landing page, no multipart parser, no body-size stream.
const yoga = createYoga({
  schema: builder.toSchema(),
  landingPage: false,
  graphiql: false,
  multipart: false,
  maxRequestBodySize: false,
  plugins,
});

http.createServer((req, res) => void yoga(req, res)).listen(Number(port), '127.0.0.1', () => process.stdout.write('listening\n'));
