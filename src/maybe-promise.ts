// Values that are there at once or later. The per-request paths answer synchronously where they can
// (an in-memory rate-limit counter, plugin hooks that return nothing) and make a promise only when
// something really waits: each promise costs an allocation and a trip through the microtask queue.

export type MaybePromise<T> = T | Promise<T>;

/** `then` applied to a value at once, or to a promise's value once it settles. */
export function whenSettled<T, R>(value: MaybePromise<T>, then: (value: T) => R): MaybePromise<R> {
  return value instanceof Promise ? value.then(then) : then(value);
}
