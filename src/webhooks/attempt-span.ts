// One span per delivery attempt, when tracing is on: a trace of its own (the attempt happens later,
// often in another process, and may be one of several), linked to the request that wrote the event,
// and carried to the receiver in `traceparent` (the worker sends trace-context.ts's outgoingHeaders,
// none with OTEL_PROPAGATORS=none) so that a traced receiver continues it. Tracing off, these are
// the OpenTelemetry API's no-ops.
import { SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
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

export function endAttemptSpan(span: Span, result: AttemptResult): void {
  if (result.statusCode !== null) span.setAttribute('http.response.status_code', result.statusCode);
  if (!result.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: result.error ?? 'not delivered' });
  span.end();
}
