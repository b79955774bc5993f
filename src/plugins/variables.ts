// Variables are coerced once, by graphql-js, before anything runs: a request whose variables do not
// fit their types is refused with GraphQL's standard messages (graphql-jit, which runs the document,
// words them its own way), and the limits weigh the values execution will see.
import {
  GraphQLError,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  getOperationAST,
  getVariableValues,
  visit,
  type ArgumentNode,
  type DocumentNode,
  type GraphQLSchema,
} from 'graphql';
import { withoutSuggestions } from '../graphql/suggestions.ts';
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
  const coerced = getVariableValues(args.schema, operation?.variableDefinitions ?? [], args.variableValues ?? {}, { maxErrors: 50 });
  const result = (!coerced.errors && nullConditions(args.document, coerced.coerced)) || coerced;
  coercions.set(key, { for: { schema: args.schema, document: args.document, operationName: args.operationName }, result });
  return result;
}

/** Each document's `@skip(if: $v)` and `@include(if: $v)` arguments, found once (documents are cached by yoga). */
const conditionsOf = new WeakMap<DocumentNode, readonly ArgumentNode[]>();

/**
 * A nullable Boolean variable with a default may stand where `if: Boolean!` is asked; sent as null,
 * graphql-js refuses it (the spec's CoerceArgumentValues), where graphql-jit, which runs the document,
 * would quietly read null as false (`@skip`) or true (`@include`) and leave the field out either way.
 */
function nullConditions(document: DocumentNode, coerced: Record<string, unknown>): Coerced | undefined {
  let conditions = conditionsOf.get(document);
  if (conditions === undefined) {
    const found: ArgumentNode[] = [];
    visit(document, {
      Directive(node) {
        if (node.name.value !== GraphQLSkipDirective.name && node.name.value !== GraphQLIncludeDirective.name) return;
        const condition = node.arguments?.find((argument) => argument.name.value === 'if' && argument.value.kind === Kind.VARIABLE);
        if (condition) found.push(condition);
      },
    });
    conditionsOf.set(document, (conditions = found));
  }
  // Most documents have no condition: nothing to allocate for them.
  if (conditions.length === 0) return undefined;
  const refused = conditions.filter((condition) => condition.value.kind === Kind.VARIABLE && coerced[condition.value.name.value] === null);
  if (refused.length === 0) return undefined;
  return {
    errors: refused.map(
      (condition) => new GraphQLError('Argument "if" of non-null type "Boolean!" must not be null.', { nodes: [condition] }),
    ),
  };
}

/** Refuses variables that do not fit their types; in production, their errors suggest no names. */
export function useVariableCoercion(production: boolean): ServerPlugin {
  const told = production ? withoutSuggestions : (error: GraphQLError) => error;
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const result = coercedVariables(executionArgs(args));
      // Stopping here skips the masking after execution, so the errors get their codes now.
      if ('errors' in result) setResultAndStopExecution({ errors: result.errors.map((error) => maskError(told(error))) });
    },
  };
}
