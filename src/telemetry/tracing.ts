// OpenTelemetry traces, on only when an OTLP endpoint is configured (config.ts); the SDK is loaded
// only then, by main.ts (what the rest of the service uses is trace-context.ts, on the API alone).
// The PostgreSQL and Redis instrumentations patch the installed `pg`, `pg-pool` and `ioredis`
// classes; main.ts starts tracing before the first connection, which binds its own `query`. Spans go
// to the collector in batches over OTLP/HTTP (protobuf, or JSON; the exporter reads the endpoint
// from the standard OTEL_EXPORTER_OTLP_* variables, which config.ts checks, and gets its time-out,
// headers, compression, TLS files and batching from config.ts); W3C `traceparent` is read from
// requests and written into webhook deliveries, unless OTEL_PROPAGATORS=none (trace-context.ts).
import { existsSync, readFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import path from 'node:path';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { InstrumentationModuleDefinition } from '@opentelemetry/instrumentation';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import type { TracingConfig } from '../config.ts';
import type { Logger } from '../log.ts';
import { reportingReachability } from './collector-reachability.ts';
import { withoutLiterals } from './statement-text.ts';
import { TRACER_NAME, setRootTracer, setTraceContextOnTheWire } from './trace-context.ts';
import { VERSION } from '../version.ts';

function samplerOf(config: TracingConfig): Sampler {
  const ratio = new TraceIdRatioBasedSampler(config.ratio);
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/**
 * Packages left as they are. The pool's patch makes a span per connection taken (which we turn off)
 * and counts connections for OpenTelemetry metrics (which we do not export: pool figures are
 * Prometheus metrics of our own), on every request, traced or not.
 */
const UNPATCHED = new Set(['pg-pool']);

/**
 * Applies each instrumentation's patches to the installed package itself: the classes' prototypes,
 * which the service's imports share. No import hook (a hook wraps every module it sees, costs about
 * 75 MB of memory and must be in place before the first import); `enabled: false` keeps the
 * instrumentations from installing one.
 */
function instrumentInstalled(instrumentations: { getModuleDefinitions(): InstrumentationModuleDefinition[] }[]): void {
  const require = createRequire(import.meta.url);
  for (const instrumentation of instrumentations) {
    for (const definition of instrumentation.getModuleDefinitions()) {
      if (UNPATCHED.has(definition.name)) continue;
      definition.patch?.(require(definition.name), packageVersion(require.resolve(definition.name), definition.name));
    }
  }
}

/** The version of the package `name` whose entry file is `entry` (not every package exports its package.json). */
function packageVersion(entry: string, name: string): string | undefined {
  for (let folder = path.dirname(entry); folder !== path.dirname(folder); folder = path.dirname(folder)) {
    const file = path.join(folder, 'package.json');
    if (!existsSync(file)) continue;
    const manifest: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (typeof manifest === 'object' && manifest !== null && 'name' in manifest && manifest.name === name && 'version' in manifest) {
      return String(manifest.version);
    }
  }
  return undefined;
}

/**
 * Makes instrumentations without leaving a hook on `require`. The instrumentation package puts
 * require-in-the-middle on `require` and `process.getBuiltinModule` when the first instrumentation
 * is made, enabled or not, and nothing takes it off: from then on every call of either goes through
 * it, and @whatwg-node/server calls getBuiltinModule on every request. The patches are applied to
 * the installed packages directly (instrumentInstalled), so nothing needs the hook.
 */
function withoutRequireHook<T>(make: () => T): T {
  const require = Module.prototype.require;
  const { getBuiltinModule } = process;
  try {
    return make();
  } finally {
    Module.prototype.require = require;
    process.getBuiltinModule = getBuiltinModule;
  }
}

type ConnectCallback = (...args: unknown[]) => unknown;

/**
 * Makes the pool call back into the context that asked for a connection. `pool.query` sends its
 * statement from the pool's connect callback; when the request had to wait for a connection, that
 * callback runs from the one that freed it, in whatever context that was, so the statement went into
 * another request's trace or into none. The pool's own instrumentation binds it too, with the rest
 * of its patch (UNPATCHED); this is that binding alone.
 */
function connectInCallersContext(): void {
  const require = createRequire(import.meta.url);
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- pg-pool's class, whose `connect` takes a node-style callback or none
  const Pool = require('pg-pool') as { prototype: { connect(this: unknown, callback?: ConnectCallback): unknown } };
  const connect = Pool.prototype.connect;
  Pool.prototype.connect = function (callback) {
    if (typeof callback !== 'function') return connect.call(this, callback);
    const caller = context.active();
    // A closure, not context.bind: that one also redefines the bound function's `length`, on every call.
    return connect.call(this, (...args: unknown[]) => context.with(caller, callback, undefined, ...args));
  };
}

let providers: TracerProvider[] = [];

type ExporterOptions = NonNullable<ConstructorParameters<typeof ProtobufExporter>[0]>;

/**
 * What the exporter is told, all of it read and checked in config.ts: given here, it wins over the
 * exporter's own reading of the same variables, which drops what it cannot parse without a word.
 */
function exporterOptions(config: TracingConfig): ExporterOptions {
  return {
    timeoutMillis: config.exportTimeoutMs,
    headers: config.exportHeaders,
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- the exporter's string enum has exactly these two values, and its package is not one of ours to import
    compression: config.compression as ExporterOptions['compression'],
    // keepAlive as the exporter's own agent has it.
    httpAgentOptions: { keepAlive: true, ...config.exportTls },
  };
}

/** The longest a stopping process waits for its last spans to reach the collector. */
const FLUSH_ON_STOP_MS = 3000;

/**
 * Installs tracing for this process: the providers, context across async calls, W3C propagation, and
 * the instrumentations of pg and ioredis. `logger` hears when spans stop reaching the collector and
 * when they reach it again. `exporter` replaces the OTLP exporter (tests keep spans in memory),
 * exporting each span as it ends.
 *
 * Two providers share one exporter. The configured sampler decides only where a trace starts here
 * (rootTracer: a request's server span, a delivery attempt). Every other span follows its parent and
 * is never made without one; and an unsampled request runs with no span active, so the
 * instrumentations skip its statements instead of building spans nobody records.
 */
export function startTracing(config: TracingConfig, logger: Logger, exporter?: SpanExporter): void {
  // The operator's attributes may set the version (a build's own label); the name is decided in config.ts.
  const resource = resourceFromAttributes({ 'service.version': VERSION, ...config.resourceAttributes, 'service.name': config.serviceName });
  const spanProcessors = [
    exporter
      ? new SimpleSpanProcessor({ exporter })
      : new BatchSpanProcessor({
          ...config.batch,
          exporter: reportingReachability(
            config.protocol === 'http/json' ? new JsonExporter(exporterOptions(config)) : new ProtobufExporter(exporterOptions(config)),
            logger,
          ),
        }),
  ];
  const roots = new TracerProvider({ resource, sampler: samplerOf(config), spanProcessors });
  const followers = new TracerProvider({ resource, sampler: new ParentBasedSampler({ root: new AlwaysOffSampler() }), spanProcessors });
  providers = [roots, followers];
  trace.setGlobalTracerProvider(followers);
  setRootTracer(roots.getTracer(TRACER_NAME));
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  // The global propagator also writes and reads the `traceparent` stored with each event; whether
  // trace context crosses the wire is decided apart (trace-context.ts).
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  setTraceContextOnTheWire(config.propagation === 'tracecontext');
  // Only statements and commands made for something traced: no root spans for background polling.
  // Taking a pooled connection is no span of its own.
  instrumentInstalled(
    withoutRequireHook(() => [
      new PgInstrumentation({
        enabled: false,
        requireParentSpan: true,
        ignoreConnectSpans: true,
        // Values the ORM wrote into a statement's text stay out of the trace (statement-text.ts).
        // (The attribute the instrumentation writes the text in, by the semantic conventions' name.)
        requestHook: (span, { query }) => span.setAttribute('db.query.text', withoutLiterals(query.text)),
      }),
      new IORedisInstrumentation({ enabled: false, requireParentSpan: true }),
    ]),
  );
  connectInCallersContext();
}

/** Sends the spans still buffered, then stops: the last thing a stopping process does. */
export async function stopTracing(): Promise<void> {
  // Both share the span processor: shutting it down once sends what is buffered. A collector that
  // does not answer delays the stop by FLUSH_ON_STOP_MS at most; those spans are lost.
  const flushed = Promise.all(providers.map((provider) => provider.shutdown()));
  providers = [];
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, FLUSH_ON_STOP_MS)));
  await Promise.race([flushed.catch(() => undefined), late]).finally(() => clearTimeout(timer));
}
