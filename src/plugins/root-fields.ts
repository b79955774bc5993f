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
  // Each fragment once, however often it is spread, as execution collects it: walking every path
  // instead made a few kilobytes of fragments spreading each other hundreds of times millions of fields.
  const spread = new Set<string>();
  const fields: FieldNode[] = [];
  const collect = (selectionSet: SelectionSetNode): void => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value !== '__typename') fields.push(selection);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        collect(selection.selectionSet);
      } else if (!spread.has(selection.name.value)) {
        spread.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment) collect(fragment.selectionSet);
      }
    }
  };
  collect(operation.selectionSet);
  return { operation, fields };
}
