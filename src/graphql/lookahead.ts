// What a query asks below a field, read before its resolver fetches anything: the arguments given
// to the fields at a path of its selection (through aliases, inline fragments and named fragments),
// as execution will see them, and whether a field is selected at all. A list resolver can then
// fetch a child list in the same statement, and skip work for what nobody asked.
import { Kind, getArgumentValues, type FieldNode, type GraphQLField, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

function fieldsNamed(selectionSet: SelectionSetNode | undefined, name: string, info: GraphQLResolveInfo, out: FieldNode[]): void {
  for (const selection of selectionSet?.selections ?? []) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value === name) out.push(selection);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      fieldsNamed(selection.selectionSet, name, info, out);
    } else {
      const fragment = Object.hasOwn(info.fragments, selection.name.value) ? info.fragments[selection.name.value] : undefined;
      fieldsNamed(fragment?.selectionSet, name, info, out);
    }
  }
}

/** Every selection of the field reached by following `path` (field names) down from the resolving field. */
function fieldNodesAt(info: GraphQLResolveInfo, path: readonly string[]): FieldNode[] {
  let level: FieldNode[] = [...info.fieldNodes];
  for (const name of path) {
    const next: FieldNode[] = [];
    for (const node of level) fieldsNamed(node.selectionSet, name, info, next);
    level = next;
  }
  return level;
}

/** Whether the query selects the field at `path` below the resolving field (e.g. `['pageInfo', 'hasPreviousPage']`). */
export function selectsBelow(info: GraphQLResolveInfo, path: readonly string[]): boolean {
  return fieldNodesAt(info, path).length > 0;
}

/**
 * The arguments of every selection of `field` found by following `path` (field names) down from
 * the resolving field, e.g. `['edges', 'node']` then `orders`. Directives (`@skip`, `@include`) are
 * not evaluated: a prefetch for a skipped field costs a little, never correctness.
 */
export function argumentsBelow(
  info: GraphQLResolveInfo,
  path: readonly string[],
  field: GraphQLField<unknown, unknown>,
): Record<string, unknown>[] {
  return fieldNodesAt(info, [...path, field.name]).map((node) => getArgumentValues(field, node, info.variableValues));
}
