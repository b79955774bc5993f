// GraphQL in traces, when tracing is on: a span for the operation (envelop's OpenTelemetry plugin,
// without the document, variables or result: they may hold personal data) below the request's
// server span, and below it a span per root field (TRACE_RESOLVERS=root), per field with a resolver
// of its own (`all`), or none. A resolver runs inside its span, so the statements it sends are its
// children. Arguments are not recorded, for the same reason as variables. The libraries load only
// when tracing is on; tracing is per process, like the provider it reports to.
import { SpanKind, SpanStatusCode, context as otelContext, trace, type Context, type Span } from '@opentelemetry/api';
import { assertSchema, isObjectType, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import type { TracingConfig } from '../config.ts';
import { TRACER_NAME } from '../telemetry/trace-context.ts';
import { fromLibrary, type ServerPlugin } from './server-context.ts';

/** Fields whose resolver is already wrapped (a schema is prepared once per server, maybe more). */
const traced = new WeakSet<object>();

function failed(span: Span, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  span.recordException(error instanceof Error ? error : message);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/** Wraps the resolvers `which` selects so that each call runs inside a span of its own, under `parentOf(context)`. */
function traceResolvers(schema: GraphQLSchema, which: 'root' | 'all', parentOf: (graphqlContext: unknown) => Context): void {
  const tracer = trace.getTracer(TRACER_NAME);
  const roots = new Set<unknown>([schema.getQueryType(), schema.getMutationType()]);
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__') || (which === 'root' && !roots.has(type))) continue;
    for (const field of Object.values(type.getFields())) {
      const resolve: GraphQLFieldResolver<unknown, unknown> | undefined = field.resolve;
      // A field without a resolver of its own reads a property: nothing worth a span.
      if (!resolve || traced.has(field)) continue;
      traced.add(field);
      const name = `${type.name}.${field.name}`;
      field.resolve = (source, args, graphqlContext, info) => {
        const parent = parentOf(graphqlContext);
        const span = tracer.startSpan(name, { attributes: { 'graphql.field.name': field.name, 'graphql.field.type': type.name } }, parent);
        const settle = (result: unknown) => {
          if (result instanceof Error) failed(span, result);
          span.end();
          return result;
        };
        try {
          const result = otelContext.with(trace.setSpan(parent, span), () => resolve(source, args, graphqlContext, info));
          if (!(result instanceof Promise)) return settle(result);
          return result.then(settle, (error: unknown) => {
            failed(span, error);
            span.end();
            throw error;
          });
        } catch (error) {
          failed(span, error);
          span.end();
          throw error;
        }
      };
    }
  }
}

/** The plugins for `config` (none when tracing is off). */
export async function useGraphQLTracing(config: TracingConfig | undefined): Promise<ServerPlugin[]> {
  if (!config) return [];
  const { getCurrentOtelContext, useOpenTelemetry } = await import('@envelop/opentelemetry');
  const operations = fromLibrary(
    useOpenTelemetry(
      { resolvers: false, document: false, variables: false, result: false },
      trace.getTracerProvider(),
      SpanKind.INTERNAL,
      {},
      TRACER_NAME,
    ),
  );
  if (config.resolvers === 'none') return [operations];
  const which = config.resolvers;
  const resolvers: ServerPlugin = {
    onSchemaChange({ schema }) {
      // envelop types the schema `any`, to fit every graphql-js version.
      traceResolvers(assertSchema(schema), which, getCurrentOtelContext);
    },
  };
  return [operations, resolvers];
}
