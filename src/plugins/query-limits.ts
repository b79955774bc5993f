// Limits on the shape and cost of GraphQL documents, checked before anything runs: depth, aliases,
// tokens and directives by graphql-armor (tokens while parsing, the rest while validating), and cost
// here, at execution start, where variable values are known. A rejected document never reaches a
// resolver, so it never reaches the database.
import type { Metrics } from '../telemetry/metrics.ts';
import { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import {
  Kind,
  OperationTypeNode,
  getArgumentValues,
  getNamedType,
  getOperationAST,
  isCompositeType,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLCompositeType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import type { QueryLimits } from '../config.ts';
import { QueryTooComplexError } from '../errors.ts';
import { PAGE_SIZE, ORDERS_BY_USER_MAX } from '../services/limits.ts';
import { coercedVariables } from './variables.ts';
import { included } from './root-fields.ts';
import { executionArgs, fromLibrary, type ServerPlugin } from './server-context.ts';

/** Fields whose size is fixed rather than chosen by an argument. */
const FIXED_SIZES: ReadonlyMap<string, number> = new Map([['Query.orders', ORDERS_BY_USER_MAX]]);
/** Arguments that choose how many items a list field returns: a page's size, forwards or backwards. */
const SIZE_ARGUMENTS = ['first', 'last', 'limit'];
/** Arguments listing what a field looks up (`nodes(ids:)`): it returns as many items as they name. */
const LOOKUP_ARGUMENTS = ['ids'];

/**
 * The page size a field asks for (or would get by default), at most the largest any list allows: a
 * larger one is refused as invalid input by its resolver before any work, so it is not weighed as if
 * it would run.
 */
function sizeOf(given: unknown): number {
  return typeof given === 'number' ? Math.min(Math.max(given, 0), PAGE_SIZE.max) : PAGE_SIZE.default;
}

/**
 * How many items a field returns, as its arguments ask: the larger of `first` and `last` or its
 * `limit`, or the field's default page; as many as a look-up's ids; otherwise its fixed size or 1.
 */
function fieldSize(
  field: GraphQLField<unknown, unknown>,
  parent: GraphQLCompositeType,
  selection: FieldNode,
  variables: Record<string, unknown>,
): number {
  const paged = field.args.some((arg) => SIZE_ARGUMENTS.includes(arg.name));
  const lookup = field.args.find((arg) => LOOKUP_ARGUMENTS.includes(arg.name));
  if (!paged && !lookup) return FIXED_SIZES.get(`${parent.name}.${field.name}`) ?? 1;
  const values = getArgumentValues(field, selection, variables);
  if (lookup) {
    const ids = values[lookup.name];
    return Array.isArray(ids) ? ids.length : 1;
  }
  let size: number | undefined;
  for (const name of SIZE_ARGUMENTS) {
    const given = values[name];
    if (typeof given === 'number') size = Math.max(size ?? 0, given);
  }
  return sizeOf(size);
}

/**
 * Each field costs 1; a paged field (one that takes `first`, `last` or `limit`) multiplies what is
 * selected below it by its page size, and a look-up by the ids it names, so
 * `users(first: 100) { edges { node { orders(limit: 100) { id } } } }` costs what it really costs: 1 + 100 × (1 + 1 + (1 + 100 × 1)) = 10,301. Arguments are read as
 * execution will read them: `variables` are the coerced values, defaults applied.
 *
 * A fragment spread more than once in one selection counts once, as execution collects it once; and
 * each field is weighed once, however many spreads reach it. Weighing therefore grows with the
 * document, not with the paths its spreads make: a few kilobytes of fragments spreading each other
 * hundreds of times (millions of paths) weigh in a millisecond, where walking every path held the
 * process for seconds.
 */
export function queryCost(
  schema: GraphQLSchema,
  parent: GraphQLCompositeType,
  selectionSet: SelectionSetNode,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  variables: Record<string, unknown>,
): number {
  // Without fragments no field is reached twice, and there is nothing to remember.
  const weighing: Weighing = { schema, fragments, variables, fieldCosts: fragments.size > 0 ? new Map() : undefined };
  return selectionCost(weighing, parent, selectionSet, fragments.size > 0 ? new Set() : undefined);
}

interface Weighing {
  schema: GraphQLSchema;
  fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  variables: Record<string, unknown>;
  /** Each field's cost once weighed: spreads reach the same field again. */
  fieldCosts: Map<FieldNode, number> | undefined;
}

/** What one selection costs: its fields and those its fragments bring, each fragment once (`spread` holds those met). */
function selectionCost(weighing: Weighing, type: GraphQLCompositeType, set: SelectionSetNode, spread: Set<string> | undefined): number {
  let cost = 0;
  for (const selection of set.selections) {
    // What `@skip` or `@include` leaves out with these variables runs nothing, and costs nothing.
    if (!included(selection, weighing.variables)) continue;
    if (selection.kind === Kind.FIELD) {
      cost += fieldCost(weighing, type, selection);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const condition = selection.typeCondition ? weighing.schema.getType(selection.typeCondition.name.value) : type;
      if (isCompositeType(condition)) cost += selectionCost(weighing, condition, selection.selectionSet, spread);
    } else if (spread && !spread.has(selection.name.value)) {
      spread.add(selection.name.value);
      const fragment = weighing.fragments.get(selection.name.value);
      const condition = fragment && weighing.schema.getType(fragment.typeCondition.name.value);
      if (fragment && isCompositeType(condition)) cost += selectionCost(weighing, condition, fragment.selectionSet, spread);
    }
  }
  return cost;
}

function fieldCost(weighing: Weighing, type: GraphQLCompositeType, selection: FieldNode): number {
  const known = weighing.fieldCosts?.get(selection);
  if (known !== undefined) return known;
  // Set first: a field found again below itself (a fragment cycle, which validation refuses) adds nothing.
  weighing.fieldCosts?.set(selection, 0);
  const name = selection.name.value;
  const field = 'getFields' in type ? type.getFields()[name] : undefined;
  if (name.startsWith('__') || !field) return 0;
  const child = getNamedType(field.type);
  const below =
    selection.selectionSet && isCompositeType(child)
      ? selectionCost(weighing, child, selection.selectionSet, weighing.fieldCosts && new Set())
      : 0;
  const cost = 1 + fieldSize(field, type, selection, weighing.variables) * below;
  weighing.fieldCosts?.set(selection, cost);
  return cost;
}

/**
 * The cost of the operation a request runs, with its variables coerced exactly as execution will
 * coerce them (defaults included); undefined when the variables do not coerce, since such a request
 * is refused before anything runs (variables.ts).
 */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  rawVariables: Record<string, unknown> | null | undefined,
): number | undefined {
  const coerced = coercedVariables({ schema, document, operationName, variableValues: rawVariables });
  return 'errors' in coerced ? undefined : costWith(schema, document, operationName, coerced.coerced);
}

function costWith(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown>,
): number | undefined {
  const operation = getOperationAST(document, operationName);
  const root = operation?.operation === OperationTypeNode.MUTATION ? schema.getMutationType() : schema.getQueryType();
  if (!operation || !root) return undefined;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  return queryCost(schema, root, operation.selectionSet, fragments, variables);
}

/**
 * How many fields `document` holds once every fragment spread is written out where it is spread (a
 * fragment spread twice in one selection once, as execution collects it), each fragment's count
 * made once: linear in the document, where the count itself may be exponential (fragments that each
 * spread all those before them double it at each step). graphql-jit compiles a document before
 * running it, walking what it expands to, synchronously: a kilobyte of such fragments held the event
 * loop for minutes. Counting stops past `cap`.
 */
export function expandedFieldCount(document: DocumentNode, cap: number): number {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const counted = new Map<string, number>();
  const counting = new Set<string>();
  const count = (selectionSet: SelectionSetNode): number => {
    let total = 0;
    const spread = new Set<string>();
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) total += 1 + (selection.selectionSet ? count(selection.selectionSet) : 0);
      else if (selection.kind === Kind.INLINE_FRAGMENT) total += count(selection.selectionSet);
      else if (!spread.has(selection.name.value)) {
        const name = selection.name.value;
        spread.add(name);
        let fragment = counted.get(name);
        // A cycle (which validation refuses) counts nothing more; an unknown fragment, likewise.
        if (fragment === undefined && !counting.has(name)) {
          const definition = fragments.get(name);
          counting.add(name);
          fragment = definition ? count(definition.selectionSet) : 0;
          counting.delete(name);
          counted.set(name, fragment);
        }
        total += fragment ?? 0;
      }
      if (total > cap) return total;
    }
    return total;
  };
  let total = 0;
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) total += count(definition.selectionSet);
    if (total > cap) break;
  }
  return total;
}

export function useQueryLimits(limits: QueryLimits, metrics: Metrics): ServerPlugin[] {
  const refused = (limit: string) => [() => metrics.documentRefusals.inc({ limit })];
  const armor = EnvelopArmorPlugin({
    // Depth is of fields: a fragment (spread or inline) adds none, so a document built of nested
    // fragments, as Relay clients write them, counts as the same fields written out.
    maxDepth: { n: limits.maxDepth, exposeLimits: true, ignoreIntrospection: true, flattenFragments: true, onReject: refused('depth') },
    maxAliases: { n: limits.maxAliases, exposeLimits: true, onReject: refused('aliases') },
    maxTokens: { n: limits.maxTokens, exposeLimits: true, onReject: refused('tokens') },
    maxDirectives: { n: limits.maxDirectives, exposeLimits: true, onReject: refused('directives') },
    // Cost is weighed below, with page sizes and variables; armor's own cost model knows neither.
    costLimit: { enabled: false },
    // Production hides suggestions ("Did you mean …?") from every message, where armor's hides those
    // of fields in validation alone (graphql/suggestions.ts).
    blockFieldSuggestion: { enabled: false },
  });
  const cost: ServerPlugin = {
    onExecute({ args }) {
      const execution = executionArgs(args);
      const coerced = coercedVariables(execution);
      const total =
        'errors' in coerced ? undefined : costWith(execution.schema, execution.document, execution.operationName, coerced.coerced);
      if (total !== undefined && total > limits.maxCost) {
        metrics.documentRefusals.inc({ limit: 'cost' });
        throw new QueryTooComplexError(`Query cost limit of ${limits.maxCost} exceeded, found ${total}.`);
      }
    },
  };
  // A value or selection nested some thousands deep exhausts the stack of graphql-js's recursive
  // parser inside a document well under the token limit: a limit reached, not a fault of the service.
  // And fragments spreading each other can make a small document a vast one (expandedFieldCount).
  // Wraps the parser armor set (its plugins come right after it, before this one); parsed documents
  // are cached, so each is counted once.
  const nesting: ServerPlugin = {
    onParse({ parseFn, setParseFn }) {
      setParseFn((source, options): DocumentNode => {
        let document: DocumentNode;
        try {
          // envelop types a parser's result `any`; it is graphql-js's parse, through armor's.
          // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- see above
          document = parseFn(source, options) as DocumentNode;
        } catch (error) {
          if (!(error instanceof RangeError)) throw error;
          metrics.documentRefusals.inc({ limit: 'nesting' });
          throw new QueryTooComplexError('Nesting limit exceeded: the document nests values or selections too deeply to be read.');
        }
        // Written out, a document may hold no more fields than the token limit lets one hold as written.
        const expanded = expandedFieldCount(document, limits.maxTokens);
        if (expanded > limits.maxTokens) {
          metrics.documentRefusals.inc({ limit: 'expansion' });
          throw new QueryTooComplexError(
            `Expansion limit of ${limits.maxTokens} fields exceeded: written out where they are spread, the document's fragments hold more than that.`,
          );
        }
        return document;
      });
    },
  };
  // graphql-js stops checking that repeated fields merge past a bound of its own, and words its
  // refusal as this error alone (error-masking.ts gives it a message); counted as the others are.
  // One function for every request: nothing is made per request for what is almost never found.
  const countMerging = ({ result }: { result: readonly unknown[] }) => {
    if (result.some((error) => error instanceof Error && error.message === VALIDATION_ABORTED)) {
      metrics.documentRefusals.inc({ limit: 'merging' });
    }
  };
  const merging: ServerPlugin = { onValidate: () => countMerging };
  return [fromLibrary(armor), nesting, merging, cost];
}

/** graphql-js's one error when it stops validating a document whose repeated fields it will not compare all. */
export const VALIDATION_ABORTED = 'Validation aborted.';
