// Names a GraphQL request's operation for its metrics: the root field it runs, or `multiple` when it
// runs several (every combination would be a label value of its own). Operation names are the
// client's choice and unbounded, so they are never used. REST requests are named by the adapter.
import { requestContext } from '../request-context.ts';
import { rootFields } from './root-fields.ts';
import { executionArgs, type ServerPlugin } from './server-context.ts';

export function useOperationLabels(): ServerPlugin {
  return {
    onExecute({ args }) {
      const request = requestContext.getStore();
      if (!request || request.face !== 'graphql') return;
      const { document, operationName } = executionArgs(args);
      const fields = new Set(rootFields(document, operationName)?.fields.map((field) => field.name.value));
      const [only] = fields;
      // No root field but `__typename`: nothing runs.
      request.operation = fields.size > 1 ? 'multiple' : (only ?? 'none');
    },
  };
}
