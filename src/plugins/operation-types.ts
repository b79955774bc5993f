// graphql-js 16 validates a subscription against a schema that has none (the rule that refuses it
// comes with graphql-js 17), and execution then fails as if the service had: an INTERNAL error for
// a request the client got wrong. Refused while validating instead, as invalid input.
import { GraphQLError, type ValidationRule } from 'graphql';
import type { ServerPlugin } from './server-context.ts';

const knownOperationTypes: ValidationRule = (context) => ({
  OperationDefinition(node) {
    if (context.getSchema().getRootType(node.operation)) return;
    context.reportError(
      new GraphQLError(`This API has no ${node.operation} operations; it serves queries and mutations.`, { nodes: node }),
    );
  },
});

export function useKnownOperationTypes(): ServerPlugin {
  return {
    onValidate({ addValidationRule }) {
      addValidationRule(knownOperationTypes);
    },
  };
}
