// The root fields an operation runs, as usage counting and rate limiting both see them: the chosen
// operation's top-level fields, including those reached through inline fragments and fragment spreads.
// `__typename` is no operation (it reads nothing), so it is neither counted nor billed. A field that
// `@skip` or `@include` leaves out (on itself or on a fragment it is reached through) runs nothing,
// and `fieldsRun` leaves it out for the request's variables.
import {
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  getDirectiveValues,
  getOperationAST,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type FragmentSpreadNode,
  type InlineFragmentNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';

/** A selection that may carry `@skip` or `@include`. */
type Conditional = FieldNode | InlineFragmentNode | FragmentSpreadNode;

export interface RootFields {
  operation: OperationDefinitionNode;
  fields: FieldNode[];
  /** For each field whose running depends on `@skip`/`@include`, the selections on its way that carry them; absent when none does. */
  conditions?: Map<FieldNode, readonly Conditional[]>;
}

const hasCondition = (selection: Conditional) =>
  selection.directives?.some((directive) => directive.name.value === 'skip' || directive.name.value === 'include') ?? false;

/** Whether a selection runs with these variables; one whose condition cannot be read is left for execution to refuse. */
export function included(selection: Conditional, variables: Readonly<Record<string, unknown>> | undefined): boolean {
  if (!hasCondition(selection)) return true;
  try {
    if (getDirectiveValues(GraphQLSkipDirective, selection, variables)?.if === true) return false;
    return getDirectiveValues(GraphQLIncludeDirective, selection, variables)?.if !== false;
  } catch {
    return true;
  }
}

/** The root fields that run with the request's variables: `root` itself when no condition leaves one out. */
export function fieldsRun(root: RootFields, variables: Readonly<Record<string, unknown>> | null | undefined): RootFields {
  const { conditions } = root;
  if (!conditions) return root;
  const values = variables ?? undefined;
  const fields = root.fields.filter((field) => (conditions.get(field) ?? []).every((selection) => included(selection, values)));
  return fields.length === root.fields.length ? root : { operation: root.operation, fields };
}

/** Documents are cached by yoga, so the same object comes back for the same text: walk each once. */
const walked = new WeakMap<DocumentNode, Map<string, RootFields | undefined>>();

export function rootFields(document: DocumentNode, operationName: string | null | undefined): RootFields | undefined {
  let byName = walked.get(document);
  if (!byName) walked.set(document, (byName = new Map<string, RootFields | undefined>()));
  const name = operationName ?? '';
  if (!byName.has(name)) byName.set(name, walk(document, operationName));
  return byName.get(name);
}

function walk(document: DocumentNode, operationName: string | null | undefined): RootFields | undefined {
  const operation = getOperationAST(document, operationName);
  if (!operation) return undefined;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  // Each fragment once, however often it is spread, as execution collects it: walking every path
  // instead made a few kilobytes of fragments spreading each other hundreds of times millions of fields.
  // (Once per set of conditions on its way: spread under a condition and again without, it may run.)
  const spread = new Set<string>();
  const fields: FieldNode[] = [];
  const conditions = new Map<FieldNode, readonly Conditional[]>();
  const collect = (selectionSet: SelectionSetNode, on: readonly Conditional[]): void => {
    for (const selection of selectionSet.selections) {
      const way = hasCondition(selection) ? [...on, selection] : on;
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value === '__typename') continue;
        fields.push(selection);
        if (way.length > 0) conditions.set(selection, way);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        collect(selection.selectionSet, way);
      } else {
        const seen = way.length === 0 ? selection.name.value : `${selection.name.value}@${way.map((at) => at.loc?.start).join(',')}`;
        if (spread.has(seen)) continue;
        spread.add(seen);
        const fragment = fragments.get(selection.name.value);
        if (fragment) collect(fragment.selectionSet, way);
      }
    }
  };
  collect(operation.selectionSet, []);
  return { operation, fields, ...(conditions.size > 0 ? { conditions } : {}) };
}
