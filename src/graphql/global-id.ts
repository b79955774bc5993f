// Relay global object identification without new ids: a TypeID already names what it identifies
// (`usr_…` a User, `ord_…` an Order) and is unique across types, so it is the global id as it is.
// Clients keep the ids they have; `node(id:)` reads the type from the prefix.
import { ID_PREFIXES, idParts } from '../db/ids.ts';
import type { FieldError } from '../errors.ts';

/** The types that implement Node, by id prefix. */
const NODE_TYPES: ReadonlyMap<string, string> = new Map([
  [ID_PREFIXES.user, 'User'],
  [ID_PREFIXES.order, 'Order'],
]);

/** The names of the types that implement Node. */
export const NODE_TYPE_NAMES: readonly string[] = [...NODE_TYPES.values()];

const KNOWN = [...NODE_TYPES].map(([prefix, type]) => `${prefix}_… (${type})`).join(' or ');

export function encodeGlobalID(_typename: string, id: bigint | number | string): string {
  return String(id);
}

/** The type of an id that names no node: `node` and `nodes` refuse it, naming where it was (nodeIdProblems). */
const NOT_A_NODE = '';

/**
 * An id, with the type it names. One that names none is not refused here, where an argument's ids are
 * decoded one at a time and the first refusal would stop the rest, naming no place in the list.
 */
export function decodeGlobalID(globalID: string): { typename: string; id: string } {
  return { typename: NODE_TYPES.get(idParts(globalID)?.prefix ?? '') ?? NOT_A_NODE, id: globalID };
}

/** Each of `ids` (decoded) that names no node, with why, named by `fieldOf` its place; none when all do. */
export function nodeIdProblems(ids: readonly { typename: string; id: string }[], fieldOf: (index: number) => string): FieldError[] {
  return ids.flatMap(({ typename, id }, index) =>
    typename === NOT_A_NODE
      ? [{ field: fieldOf(index), message: `${JSON.stringify(id.slice(0, 64))} is not the id of a node: expected ${KNOWN}` }]
      : [],
  );
}
