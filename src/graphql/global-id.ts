// Relay global object identification without new ids: a TypeID already names what it identifies
// (`usr_…` a User, `ord_…` an Order) and is unique across types, so it is the global id as it is.
// Clients keep the ids they have; `node(id:)` reads the type from the prefix.
import { ID_PREFIXES, idParts } from '../db/ids.ts';
import { ValidationError } from '../errors.ts';

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

export function decodeGlobalID(globalID: string): { typename: string; id: string } {
  const typename = NODE_TYPES.get(idParts(globalID)?.prefix ?? '');
  if (!typename) throw ValidationError.field('id', `${JSON.stringify(globalID.slice(0, 64))} is not the id of a node: expected ${KNOWN}`);
  return { typename, id: globalID };
}
