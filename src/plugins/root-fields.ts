// The root fields an operation runs, as usage counting and rate limiting both see them: the chosen
// operation's top-level fields, including those reached through inline fragments and fragment spreads.
// `__typename` is no operation (it reads nothing), so it is neither counted nor billed.
import {
  Kind,
  getOperationAST,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';

export interface RootFields {
  operation: OperationDefinitionNode;
  fields: FieldNode[];
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
  const collect = (selectionSet: SelectionSetNode, seen: ReadonlySet<string>): FieldNode[] =>
    selectionSet.selections.flatMap((selection) => {
      if (selection.kind === Kind.FIELD) return selection.name.value === '__typename' ? [] : [selection];
      if (selection.kind === Kind.INLINE_FRAGMENT) return collect(selection.selectionSet, seen);
      const fragment = fragments.get(selection.name.value);
      // A fragment spread within itself is a cycle, which validation refuses anyway.
      if (!fragment || seen.has(fragment.name.value)) return [];
      return collect(fragment.selectionSet, new Set([...seen, fragment.name.value]));
    });
  return { operation, fields: collect(operation.selectionSet, new Set()) };
}
