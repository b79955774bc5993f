// Counts each executed request against its API key, on both faces: REST routes run through the
// same execution, so a REST call and the GraphQL query behind it count as the same operation. A
// replayed write is no second use.
import type { UsageRecorder } from '../services/api-key-usage.ts';
import { fieldsRun, rootFields, type RootFields } from './root-fields.ts';
import { executionArgs, type ServerPlugin } from './server-context.ts';
import { OperationTypeNode } from 'graphql';

/** What an operation is counted as: its distinct root fields, sorted (`Query.user+Query.users`). */
const labels = new WeakMap<RootFields, string>();

function labelOf(run: RootFields): string {
  let label = labels.get(run);
  if (label === undefined) {
    const root = run.operation.operation === OperationTypeNode.MUTATION ? 'Mutation' : 'Query';
    label = [...new Set(run.fields.map((field) => `${root}.${field.name.value}`))].sort().join('+') || root;
    labels.set(run, label);
  }
  return label;
}

export function useUsageCounting(recorder: UsageRecorder): ServerPlugin {
  return {
    onExecute({ args }) {
      const { document, operationName, variableValues } = executionArgs(args);
      const root = rootFields(document, operationName);
      const { auth } = args.contextValue;
      if (!root || !auth) return;
      const run = fieldsRun(root, variableValues);
      const count = () => recorder.record(auth.key.id, labelOf(run), auth.clientIp);
      // A write under an Idempotency-Key counts once its answer is its own, not a replay (plugins/idempotency.ts).
      const idempotent = args.contextValue.idempotency;
      if (idempotent?.write) idempotent.onOwnOutcome = count;
      else count();
    },
  };
}
