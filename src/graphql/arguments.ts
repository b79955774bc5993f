// The wording of arguments many fields share, from the bounds the services enforce, so that every
// argument is described once (tools show an argument's description beside it, apart from its field's).
import { PAGE_SIZE } from '../services/limits.ts';

export const ARGUMENTS = {
  first: `Items after \`after\`: 1 to ${PAGE_SIZE.max}, default ${PAGE_SIZE.default}.`,
  after: "The `endCursor` (or an edge's `cursor`) to go on after.",
  last: `Items before \`before\`: 1 to ${PAGE_SIZE.max}; not with \`first\`.`,
  before: "The `startCursor` (or an edge's `cursor`) to go back from.",
  limit: `Items per page: 1 to ${PAGE_SIZE.max}, default ${PAGE_SIZE.default}.`,
  cursor: '`nextCursor` of the previous page; none for the first page.',
} as const;

/** The id a field looks up, of the kind it names. */
export const idOf = (what: string) => `The id of the ${what}.`;
