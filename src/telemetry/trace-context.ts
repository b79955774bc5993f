// What the service needs of traces, on the OpenTelemetry API alone: without an SDK installed
// (tracing off) every call here is a no-op of the API, and the SDK is never loaded (tracing.ts).
import { ROOT_CONTEXT, context, propagation, trace, type Context, type Link, type Span, type Tracer } from '@opentelemetry/api';

/** The name the service's own spans are made under. */
export const TRACER_NAME = 'portico';

let roots: Tracer | undefined;
/** Whether trace context crosses the wire (OTEL_PROPAGATORS); what is stored with events always keeps it. */
let onTheWire = true;

/**
 * The tracer of the spans that start traces here (a request's server span, a delivery attempt): it
 * applies the configured sampler. Every other span follows its parent and is not made without one
 * (tracing.ts), so an unsampled request costs its statements nothing.
 */
export function rootTracer(): Tracer {
  return roots ?? trace.getTracer(TRACER_NAME);
}

export function setRootTracer(tracer: Tracer): void {
  roots = tracer;
}

export function setTraceContextOnTheWire(on: boolean): void {
  onTheWire = on;
}

/** The W3C `traceparent` of the span active now, to store with what it caused; null when no trace is active. */
export function currentTraceparent(): string | null {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/** A link to the span a stored `traceparent` names (the request that wrote an event), for work done later on its behalf. */
export function linkTo(traceparent: string | null): Link[] {
  if (!traceparent) return [];
  const linked = trace.getSpanContext(propagation.extract(context.active(), { traceparent }));
  return linked ? [{ context: linked }] : [];
}

/**
 * The context a request's headers carry (`traceparent`, `tracestate`), for its server span to
 * continue; none when trace context does not cross the wire.
 */
export function incomingContext(headers: Record<string, string | string[] | undefined>): Context {
  return onTheWire ? propagation.extract(context.active(), headers) : context.active();
}

/** The headers that carry `span` to the one an outgoing request reaches (`traceparent`); none when trace context does not cross the wire, or tracing is off. */
export function outgoingHeaders(span: Span): Record<string, string> {
  const carrier: Record<string, string> = {};
  if (onTheWire) propagation.inject(trace.setSpan(ROOT_CONTEXT, span), carrier);
  return carrier;
}
