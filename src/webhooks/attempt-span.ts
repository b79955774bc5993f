// One span per delivery attempt, when tracing is on: a trace of its own (the attempt happens later,
// often in another process, and may be one of several), linked to the request that wrote the event,
// and carried to the receiver in `traceparent` so that a traced receiver continues it. Tracing off,
// these are the OpenTelemetry API's no-ops.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, propagation, trace, type Span } from '@opentelemetry/api';
import { linkTo, rootTracer } from '../telemetry/trace-context.ts';
import type { ClaimedDelivery } from './deliveries.ts';
import type { AttemptResult } from './sender.ts';

export function startAttemptSpan(claim: ClaimedDelivery): Span {
  return rootTracer().startSpan(`webhook ${claim.type}`, {
    kind: SpanKind.CLIENT,
    root: true,
    links: linkTo(claim.traceparent),
    attributes: {
      'http.request.method': 'POST',
      'portico.event.id': claim.eventId,
      'portico.event.type': claim.type,
      'portico.webhook.endpoint_id': claim.endpointId,
      'portico.webhook.attempt': claim.number,
    },
  });
}

/** The attempt's `traceparent` for the request to the receiver; none when tracing is off. */
export function traceHeaders(span: Span): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(ROOT_CONTEXT, span), carrier);
  return carrier;
}

export function endAttemptSpan(span: Span, result: AttemptResult): void {
  if (result.statusCode !== null) span.setAttribute('http.response.status_code', result.statusCode);
  if (!result.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: result.error ?? 'not delivered' });
  span.end();
}
