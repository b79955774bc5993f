// Variables are coerced once, by graphql-js, before anything runs: a request whose variables do not
// fit their types is refused with GraphQL's standard messages (graphql-jit, which runs the document,
// words them its own way), and the limits weigh the values execution will see.
import { getOperationAST, getVariableValues, type DocumentNode, type GraphQLError, type GraphQLSchema } from 'graphql';
import { maskError } from './error-masking.ts';
import { executionArgs, type ServerPlugin } from './server-context.ts';

interface ExecutionInput {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName?: string | null;
  variableValues?: Record<string, unknown> | null;
}

type Coerced = { coerced: Record<string, unknown> } | { errors: readonly GraphQLError[] };

/** What a coercion was made for: the execution's schema, document and operation. */
interface CoercedFor {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName: string | null | undefined;
}

/**
 * Coercions made, by the variables object (or, without variables, the execution's arguments): the REST
 * adapter coerces a route's variables before it runs the route, and execution then finds them done.
 * An entry holds nothing that leads back to its key: V8's young-generation collector keeps alive an
 * entry whose value reaches its key, so such an entry would keep the whole request (through the
 * execution's arguments, its context, its rows, its response) until the next full collection.
 */
const coercions = new WeakMap<object, { for: CoercedFor; result: Coerced }>();

/** The request's variables as execution will see them (defaults applied), or why they do not fit. */
export function coercedVariables(args: ExecutionInput): Coerced {
  const key = args.variableValues ?? args;
  const done = coercions.get(key);
  if (done && done.for.schema === args.schema && done.for.document === args.document && done.for.operationName == args.operationName) {
    return done.result;
  }
  const operation = getOperationAST(args.document, args.operationName);
  const result = getVariableValues(args.schema, operation?.variableDefinitions ?? [], args.variableValues ?? {}, { maxErrors: 50 });
  coercions.set(key, { for: { schema: args.schema, document: args.document, operationName: args.operationName }, result });
  return result;
}

export function useVariableCoercion(): ServerPlugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const result = coercedVariables(executionArgs(args));
      // Stopping here skips the masking after execution, so the errors get their codes now.
      if ('errors' in result) setResultAndStopExecution({ errors: result.errors.map((error) => maskError(error)) });
    },
  };
}
