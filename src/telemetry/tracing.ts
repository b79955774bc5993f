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

let provider: TracerProvider | undefined;

/**
 * Installs tracing for this process: the provider, context across async calls, W3C propagation, and
 * the instrumentations of pg and ioredis. `exporter` replaces the OTLP exporter (tests keep spans in
 * memory), exporting each span as it ends.
 */
export function startTracing(config: TracingConfig, exporter?: SpanExporter): void {
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName, 'service.version': VERSION }),
    sampler: samplerOf(config),
    spanProcessors: [exporter ? new SimpleSpanProcessor({ exporter }) : new BatchSpanProcessor({ exporter: new OTLPTraceExporter() })],
  });
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  // Only statements and commands made for something traced: no root spans for background polling.
  registerInstrumentations({
    instrumentations: [new PgInstrumentation({ requireParentSpan: true }), new IORedisInstrumentation({ requireParentSpan: true })],
  });
}

/** Sends the spans still buffered, then stops: the last thing a stopping process does. */
export async function stopTracing(): Promise<void> {
  await provider?.shutdown();
  provider = undefined;
}
