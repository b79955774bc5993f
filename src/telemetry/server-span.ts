// A request's server span, when tracing is on: it continues the caller's trace (`traceparent`), holds
// everything the request does, and is named by its route once the route is known (the REST route's
// template, or /graphql), never by the raw path, whose ids would make every name unique.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { GRAPHQL_PATH } from '../paths.ts';
import type { RequestContext } from '../request-context.ts';
import { incomingContext, rootTracer } from './trace-context.ts';

export function serveTraced(req: IncomingMessage, res: ServerResponse, request: RequestContext, serve: () => void): void {
  const method = req.method ?? 'GET';
  const parent = incomingContext(req.headers);
  // The attributes come once the span is known to record: the samplers OTEL_TRACES_SAMPLER names
  // decide by trace id and parent alone, and an unsampled request (nine in ten at 10%) then builds
  // and checks none of them.
  const span = rootTracer().startSpan(method, { kind: SpanKind.SERVER }, parent);
  if (!span.isRecording()) {
    // Unsampled: the request runs as if tracing were off, so what it calls makes no spans and costs
    // nothing. Its trace id (the caller's, or the one drawn for it) still names it in the logs.
    request.traceId = span.spanContext().traceId;
    serve();
    return;
  }
  request.traceId = span.spanContext().traceId;
  span.setAttributes({
    'http.request.method': method,
    'url.path': req.url?.split('?')[0] ?? '',
    'url.scheme': 'http',
    'user_agent.original': req.headers['user-agent'] ?? '',
    'portico.request_id': request.requestId,
  });
  res.once('close', () => {
    const route = request.route ?? (request.face === 'graphql' ? GRAPHQL_PATH : undefined);
    if (route) {
      span.setAttribute('http.route', route);
      span.updateName(`${method} ${route}`);
    }
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
  context.with(trace.setSpan(parent, span), serve);
}
