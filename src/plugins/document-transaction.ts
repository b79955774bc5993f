// A GraphQL document with several mutations runs them in one transaction, committed only when the
// answer reports something done: a document whose second mutation is refused keeps nothing of its
// first. Every mutation field is non-null, so such a refusal nulls the whole `data`, and a client
// would otherwise never learn what the first one wrote (a retry then meets its own user's email as
// taken). With an Idempotency-Key the key's transaction does the same (plugins/idempotency.ts).
import { OperationTypeNode, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { EntityManager } from '../db/orm.ts';
import { maskError } from './error-masking.ts';
import { rootFields } from './root-fields.ts';
import { executionArgs, type ServerPlugin } from './server-context.ts';

/** Whether a result reports nothing done: no root field has a value. */
export function reportsNothingDone(result: ExecutionResult | undefined): boolean {
  return !result?.data || Object.values(result.data).every((value) => value === null);
}

export function useDocumentTransactions(base: EntityManager): ServerPlugin {
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const context = args.contextValue;
      if (context.idempotency?.write) return;
      const { document, operationName } = executionArgs(args);
      const root = rootFields(document, operationName);
      if (root?.operation.operation !== OperationTypeNode.MUTATION || root.fields.length < 2) return;
      setExecuteFn(async (execution: ExecutionArgs) => {
        const transaction = base.fork();
        await transaction.begin();
        context.documentTransaction = transaction;
        let result: ExecutionResult;
        try {
          // Envelop types execution's answer loosely; without @defer or @stream it is one result.
          // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion
          result = (await executeFn(execution)) as ExecutionResult;
        } catch (error) {
          await transaction.rollback().catch(() => undefined);
          throw error;
        }
        if (reportsNothingDone(result)) {
          // A rollback fails only on a dead connection, and then PostgreSQL has rolled back already.
          await transaction.rollback().catch(() => undefined);
          return result;
        }
        try {
          await transaction.commit();
        } catch (error) {
          return { data: null, errors: [maskError(error)] };
        }
        return result;
      });
    },
  };
}
