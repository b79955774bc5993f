// Counts each executed request against its API key, on both faces: REST routes run through the
// same execution, so a REST call and the GraphQL query behind it count as the same operation.
import type { Plugin } from 'graphql-yoga';
import type { GraphQLContext } from '../graphql/context.ts';
import type { UsageRecorder } from '../services/api-key-usage.ts';
import { rootFields } from './root-fields.ts';

export function useUsageCounting(recorder: UsageRecorder): Plugin<GraphQLContext> {
  return {
    onExecute({ args }) {
      const run = rootFields(args.document, args.operationName);
      const auth = (args.contextValue as Partial<GraphQLContext>).auth;
      if (!run || !auth) return;
      const root = run.operation.operation === 'mutation' ? 'Mutation' : 'Query';
      const fields = run.fields.map((field) => `${root}.${field.name.value}`);
      recorder.record(auth.key.id, [...new Set(fields)].sort().join('+') || root, auth.clientIp);
    },
  };
}
