// For wrappers of node-postgres's `client.query` that must send a statement of their own before the
// caller's: `query` answers a promise, or calls the callback given last and answers nothing, and a
// caller using either must hear of a failure of the statement sent first.

/** `client.query` with every overload passed through untyped. */
export type Query = (...args: unknown[]) => unknown;

/** Runs the caller's query once `first` succeeded; its failure goes to the caller, in the form it asked. */
export function queryAfter(first: Promise<unknown>, query: Query, args: unknown[]): unknown {
  const last = args.at(-1);
  if (typeof last !== 'function') return first.then(() => query(...args));
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- node-postgres's callbacks take the error first
  const callback = last as (error: unknown) => void;
  first.then(
    () => query(...args),
    (error: unknown) => callback(error),
  );
  return undefined;
}
