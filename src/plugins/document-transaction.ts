// A GraphQL mutation document whose answer could report nothing done after a write runs in one
// transaction, committed only when the answer reports something done. Every mutation field is
// non-null, and so are the fields below it: a refusal after a write (a second mutation refused, a
// field selected below the first that the key may not read or whose argument is refused) nulls the
// whole `data`, and a client would otherwise never learn what was written (its retry then writes
// again, or meets its own user's email as taken). A lone mutation selecting only what its write
// returns cannot be refused after it, and runs without a transaction of its own (a creation is then
// one statement). With an Idempotency-Key the key's transaction does the same (plugins/idempotency.ts).
import {
  Kind,
  OperationTypeNode,
  getArgumentValues,
  getNamedType,
  isLeafType,
  isObjectType,
  type ExecutionArgs,
  type ExecutionResult,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import { isId } from '../db/ids.ts';
import type { EntityManager } from '../db/orm.ts';
import { runPrepared, type StatementRunner } from '../db/prepared.ts';
import { LOCK_USERS } from '../db/user-locks.ts';
import { maskError } from './error-masking.ts';
import { rootFields, type RootFields } from './root-fields.ts';
import { executionArgs, type ServerPlugin } from './server-context.ts';

/** Whether a result reports nothing done: no root field has a value. */
export function reportsNothingDone(result: ExecutionResult | undefined): boolean {
  return !result?.data || Object.values(result.data).every((value) => value === null);
}

export function useDocumentTransactions(base: EntityManager): ServerPlugin {
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const context = args.contextValue;
      const { document, operationName, schema } = executionArgs(args);
      const root = rootFields(document, operationName);
      if (root?.operation.operation !== OperationTypeNode.MUTATION) return;
      const several = root.fields.length > 1;
      if (several) context.severalMutations = true;
      const keyed = context.idempotency?.write;
      if (keyed) {
        // The key's transaction is the document's: its users are locked there.
        if (several)
          setExecuteFn(async (execution: ExecutionArgs) => {
            // A failure here (a deadlock, the database gone) fails the request as a whole, as one in
            // execution would; the key's write keeps nothing of it.
            await lockUsersNamed(keyed.statements, usersNamed(schema, root, execution.variableValues));
            // Envelop types execution's answer loosely; without @defer or @stream it is one result.
            // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion
            return (await executeFn(execution)) as ExecutionResult;
          });
        return;
      }
      if (!mayFailAfterWriting(schema, document, root)) return;
      setExecuteFn(async (execution: ExecutionArgs) => {
        const transaction = base.fork();
        await transaction.begin();
        context.documentTransaction = transaction;
        let result: ExecutionResult;
        try {
          if (several) await lockUsersNamed(transaction, usersNamed(schema, root, execution.variableValues));
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

/**
 * The users a document's mutations name in their arguments (any value that is a user id, however
 * deep), sorted: the users it may change. An argument execution will refuse names none.
 */
function usersNamed(schema: GraphQLSchema, root: RootFields, variables: ExecutionArgs['variableValues']): string[] {
  const mutations = schema.getMutationType()?.getFields() ?? {};
  const users = new Set<string>();
  const collect = (value: unknown): void => {
    if (typeof value === 'string') {
      if (isId('user', value)) users.add(value);
    } else if (Array.isArray(value)) value.forEach(collect);
    else if (typeof value === 'object' && value !== null) Object.values(value).forEach(collect);
  };
  for (const node of root.fields) {
    const field = mutations[node.name.value];
    if (!field) continue;
    try {
      collect(getArgumentValues(field, node, variables ?? undefined));
    } catch {
      // Refused by execution itself, with the error it deserves.
    }
  }
  return [...users].sort();
}

/** Takes the users' locks in the transaction `runner` runs in (none to take: no statement). */
async function lockUsersNamed(runner: StatementRunner, users: string[]): Promise<void> {
  if (users.length > 0) await runPrepared(runner, LOCK_USERS, [users]);
}

/** Root fields are cached per document and operation, so each is judged once. */
const judged = new WeakMap<RootFields, boolean>();

function mayFailAfterWriting(schema: GraphQLSchema, document: ExecutionArgs['document'], root: RootFields): boolean {
  let judgement = judged.get(root);
  if (judgement === undefined) {
    const [only, ...others] = root.fields;
    const mutation = schema.getMutationType();
    const field = only && mutation?.getFields()[only.name.value];
    judgement = others.length > 0 || !field || !readsOnlyWhatItReturns(schema, document, field, only.selectionSet);
    judged.set(root, judgement);
  }
  return judgement;
}

/**
 * Whether a selection below a mutation reads only the values its write returned, so that nothing
 * in it can be refused once the write is done: leaf fields and exposed objects, with no argument,
 * no scope of their own and no directive (a `@skip(if: $v)` could be refused for a null `$v`).
 * A field with a resolver of its own, an argument or a scope (`user`, `orders(limit:)`) may fail.
 */
function readsOnlyWhatItReturns(
  schema: GraphQLSchema,
  document: ExecutionArgs['document'],
  field: GraphQLField<unknown, unknown>,
  selectionSet: SelectionSetNode | undefined,
): boolean {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const plain = (candidate: GraphQLField<unknown, unknown>): boolean =>
    candidate.args.length === 0 && !(candidate.extensions as PothosFieldExtensions).pothosOptions?.authScopes;
  // Each fragment is looked at once per type it is spread on: the walk stops at the first field that
  // may fail, so one already looked at (or being looked at, in a cycle validation refuses) passed.
  // Walking every path made a few kilobytes of fragments spreading each other millions of fields.
  const looked = new Set<string>();
  const selects = (type: GraphQLObjectType, set: SelectionSetNode): boolean =>
    set.selections.every((selection) => {
      if (selection.directives?.length) return false;
      if (selection.kind === Kind.INLINE_FRAGMENT) return selects(type, selection.selectionSet);
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(selection.name.value);
        if (!fragment) return false;
        const at = `${type.name} ${fragment.name.value}`;
        if (looked.has(at)) return true;
        looked.add(at);
        return selects(type, fragment.selectionSet);
      }
      if (selection.name.value === '__typename') return true;
      const below = type.getFields()[selection.name.value];
      if (!below || !plain(below)) return false;
      const named = getNamedType(below.type);
      if (isLeafType(named)) return true;
      return (
        isObjectType(named) &&
        (below.extensions as PothosFieldExtensions).pothosExposedField !== undefined &&
        selection.selectionSet !== undefined &&
        selects(named, selection.selectionSet)
      );
    });
  const named = getNamedType(field.type);
  if (isLeafType(named)) return true;
  return isObjectType(named) && selectionSet !== undefined && selects(named, selectionSet);
}

/** What Pothos leaves on a field it built: its options (with the scopes they require) and, for `t.expose…`, the property read. */
interface PothosFieldExtensions {
  pothosOptions?: { authScopes?: unknown };
  pothosExposedField?: string;
}
