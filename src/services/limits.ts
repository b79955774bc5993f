// Page sizes: every list is bounded, and asking for more than the maximum is an input error
// rather than a silent clamp, so clients never mistake a clamped page for the end of a list.
// One size policy for every paged list (`first`, `limit`), on GraphQL and REST alike.
export const PAGE_SIZE = { default: 20, max: 100 } as const;
/** Numbered pages beyond this are refused: deep offsets cost a scan of everything before them. */
export const PAGE_NUMBER_MAX = 10_000;
/** `orders(userId)` has no size argument: it returns at most this many, newest first. */
export const ORDERS_BY_USER_MAX = 100;
/** `nodes(ids)` takes at most this many ids: a page's worth. */
export const NODES_MAX = PAGE_SIZE.max;

export const NAME_MAX_LENGTH = 200;
export const EMAIL_MAX_LENGTH = 254;
/** Order totals are GraphQL `Int`s (32-bit signed), in minor currency units. */
export const TOTAL_MAX = 2_147_483_647;
