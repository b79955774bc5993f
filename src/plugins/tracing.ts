// GraphQL in traces, when tracing is on: a span for the operation below the request's server span,
// and below it a span per root field (TRACE_RESOLVERS=root), per field with a resolver of its own
// (`all`), or none. A resolver runs inside its span, so the statements it sends are its children.
// Documents, variables, arguments and results are not recorded, nor are error messages (an error is
// recorded by its code): they may hold personal data. An
// unsampled request has no recording span active, and then nothing here does any work at all.
import { SpanStatusCode, context as otelContext, trace, type Context, type Span } from '@opentelemetry/api';
import { assertSchema, getOperationAST, isObjectType, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import type { TracingConfig } from '../config.ts';
import { requestContext } from '../request-context.ts';
import { TRACER_NAME } from '../telemetry/trace-context.ts';
import { maskError } from './error-masking.ts';
import { executionArgs, type ServerPlugin } from './server-context.ts';

/** Fields whose resolver is already wrapped (a schema is prepared once per server, maybe more). */
const traced = new WeakSet<object>();

/** The operation span's context, by the execution's GraphQL context: where its resolvers' spans go. */
const operationContexts = new WeakMap<object, Context>();

/** The operation span's context of an execution, when it is being traced. */
function operationContextOf(graphqlContext: unknown): Context | undefined {
  return typeof graphqlContext === 'object' && graphqlContext !== null ? operationContexts.get(graphqlContext) : undefined;
}

/**
 * What a span says of an error: its code (`CONFLICT`, `NOT_FOUND` …), never its message, which may
 * quote what the client sent (an email already taken) and so carry personal data.
 */
function codeOf(error: unknown): string {
  return String(maskError(error).extensions.code);
}

/** The code of a result's first error, if it has any (one result: no @defer or @stream). */
function firstError(result: unknown): string | undefined {
  if (typeof result !== 'object' || result === null || !('errors' in result)) return undefined;
  const errors: unknown = result.errors;
  if (!Array.isArray(errors) || errors.length === 0) return undefined;
  return codeOf(errors[0]);
}

function failed(span: Span, error: unknown): void {
  const code = codeOf(error);
  span.recordException({ name: error instanceof Error ? error.name : 'Error', message: code });
  span.setStatus({ code: SpanStatusCode.ERROR, message: code });
}

/** Wraps the resolvers `which` selects so that each call, in a recorded trace, runs inside a span of its own. */
function traceResolvers(schema: GraphQLSchema, which: 'root' | 'all'): void {
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
      field.resolve = (source, args, graphqlContext: unknown, info) => {
        const parent = operationContextOf(graphqlContext);
        if (!parent) return resolve(source, args, graphqlContext, info);
        const span = tracer.startSpan(name, { attributes: { 'graphql.field.name': field.name, 'graphql.field.type': type.name } }, parent);
        const settle = (result: unknown) => {
          if (result instanceof Error) failed(span, result);
          span.end();
          return result;
        };
        const fail = (error: unknown): never => {
          failed(span, error);
          span.end();
          throw error;
        };
        let result: unknown;
        try {
          result = otelContext.with(trace.setSpan(parent, span), () => resolve(source, args, graphqlContext, info));
        } catch (error) {
          return fail(error);
        }
        return result instanceof Promise ? result.then(settle, fail) : settle(result);
      };
    }
  }
}

/** The plugins for `config` (none when tracing is off). */
export function useGraphQLTracing(config: TracingConfig | undefined): ServerPlugin[] {
  if (!config) return [];
  const tracer = trace.getTracer(TRACER_NAME);
  const operations: ServerPlugin = {
    onExecute({ args }) {
      const parent = otelContext.active();
      if (!trace.getSpan(parent)?.isRecording()) return;
      const { document, operationName, contextValue } = executionArgs(args);
      const operation = getOperationAST(document, operationName);
      const type = operation?.operation ?? 'query';
      // The name the client gave; a REST route's operation has one the adapter made up
      // (`createOrder_mutation`), which would split one operation's spans under two names.
      const name = requestContext.getStore()?.face === 'rest' ? undefined : operation?.name?.value;
      const span = tracer.startSpan(
        name ? `${type} ${name}` : type,
        {
          attributes: { 'graphql.operation.type': type, ...(name ? { 'graphql.operation.name': name } : {}) },
        },
        parent,
      );
      const graphqlContext: unknown = contextValue;
      if (typeof graphqlContext === 'object' && graphqlContext !== null) operationContexts.set(graphqlContext, trace.setSpan(parent, span));
      return {
        onExecuteDone({ result }: { result: unknown }) {
          const error = firstError(result);
          if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
          span.end();
        },
      };
    },
  };
  if (config.resolvers === 'none') return [operations];
  const which = config.resolvers;
  const resolvers: ServerPlugin = {
    onSchemaChange({ schema }) {
      // envelop types the schema `any`, to fit every graphql-js version.
      traceResolvers(assertSchema(schema), which);
    },
  };
  return [operations, resolvers];
}
