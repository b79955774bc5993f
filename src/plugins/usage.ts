// Counts each executed request against its API key, on both faces: REST routes run through the
// same execution, so a REST call and the GraphQL query behind it count as the same operation.
import { Kind, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GraphQLContext } from '../graphql/context.ts';
import type { UsageRecorder } from '../services/api-key-usage.ts';

export function useUsageCounting(recorder: UsageRecorder): Plugin<GraphQLContext> {
  return {
    onExecute({ args }) {
      const operation = getOperationAST(args.document, args.operationName);
      const auth = (args.contextValue as Partial<GraphQLContext>).auth;
      if (!operation || !auth) return;
      const root = operation.operation === 'mutation' ? 'Mutation' : 'Query';
      const fields = operation.selectionSet.selections.flatMap((selection) =>
        selection.kind === Kind.FIELD ? [`${root}.${selection.name.value}`] : [],
      );
      recorder.record(auth.key.id, [...new Set(fields)].sort().join('+') || root, auth.clientIp);
    },
  };
}
