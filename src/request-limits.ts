// Bounds on what a request may bring, wherever it is read: Node's HTTP shell, the plugins and the
// REST adapter all check against these.

/**
 * Longest path plus query string accepted, in characters; longer ones get 414. A GraphQL GET carries
 * its document in the URL, and nothing useful needs more than this.
 */
export const MAX_URL_LENGTH = 8 * 1024;

/** Largest request body accepted on either face, in bytes; larger ones get 413. */
export const MAX_BODY_BYTES = 64 * 1024;

/**
 * Deepest nesting of arrays and objects accepted in a REST body. Ours are flat; the bound keeps a
 * hostile body from exhausting the stack of whatever walks it next (JSON.stringify, GraphQL's coercion).
 */
export const MAX_BODY_DEPTH = 32;

/** Largest request line plus headers accepted, in bytes (Node's own default); larger ones get 431. */
export const MAX_HEADER_BYTES = 16 * 1024;
