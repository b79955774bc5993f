// OpenTelemetry traces, on only when an OTLP endpoint is configured (config.ts); the SDK is loaded
// only then (what the rest of the service uses is trace-context.ts, on the API alone). Started by the
// entry point before the rest of the service is imported: the PostgreSQL and Redis instrumentations patch
// `pg` and `ioredis` as they load, through the import hook registered here, so a module that loaded
// earlier would go untraced. Spans go to the collector in batches (OTLP over HTTP, the exporter reading
// the standard OTEL_EXPORTER_OTLP_* variables); W3C `traceparent` is read from requests and written
// into webhook deliveries.
import { register } from 'node:module';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
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
import { TRACER_NAME, setRootTracer } from './trace-context.ts';
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

/** The packages the instrumentations below patch. */
const INSTRUMENTED = ['pg', 'pg-pool', 'ioredis'];

let providers: TracerProvider[] = [];

/**
 * Installs tracing for this process: the providers, context across async calls, W3C propagation, and
 * the instrumentations of pg and ioredis. `exporter` replaces the OTLP exporter (tests keep spans in
 * memory), exporting each span as it ends.
 *
 * Two providers share one exporter. The configured sampler decides only where a trace starts here
 * (rootTracer: a request's server span, a delivery attempt). Every other span follows its parent and
 * is never made without one; and an unsampled request runs with no span active, so the
 * instrumentations skip its statements instead of building spans nobody records.
 */
export function startTracing(config: TracingConfig, exporter?: SpanExporter): void {
  // Only the instrumented packages go through the hook: every module it wraps pays for it on each
  // access to its exports.
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, { data: { include: INSTRUMENTED } });
  const resource = resourceFromAttributes({ 'service.name': config.serviceName, 'service.version': VERSION });
  const spanProcessors = [exporter ? new SimpleSpanProcessor({ exporter }) : new BatchSpanProcessor({ exporter: new OTLPTraceExporter() })];
  const roots = new TracerProvider({ resource, sampler: samplerOf(config), spanProcessors });
  const followers = new TracerProvider({ resource, sampler: new ParentBasedSampler({ root: new AlwaysOffSampler() }), spanProcessors });
  providers = [roots, followers];
  trace.setGlobalTracerProvider(followers);
  setRootTracer(roots.getTracer(TRACER_NAME));
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  // Only statements and commands made for something traced: no root spans for background polling.
  // Taking a pooled connection is no span of its own.
  registerInstrumentations({
    instrumentations: [
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
}

/** Sends the spans still buffered, then stops: the last thing a stopping process does. */
export async function stopTracing(): Promise<void> {
  // Both share the span processor: shutting it down once sends what is buffered.
  await Promise.all(providers.map((provider) => provider.shutdown()));
  providers = [];
}
