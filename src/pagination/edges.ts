// A page of a list and its edges, whose cursors are computed on first read: a query that selects
// none pays for none. The lazy cursor is a getter of a class, not of an object literal: V8 gives
// each literal with an accessor a dictionary and a fresh accessor, and under load those literals
// made most of the young generation survive its collections (the pauses grew several times over).
import type { CursorCodec } from './cursor.ts';
import { cursorOf, type Keyset } from './keyset.ts';

/** One item of a page; its cursor is made only when someone reads it. */
export interface Edge<T> {
  node: T;
  readonly cursor: string;
}

export interface Page<T> {
  items: Edge<T>[];
  hasNextPage: boolean;
  /** Lists paged forwards only leave it out: false, as the Relay spec allows. */
  hasPreviousPage?: boolean;
}

class LazyCursorEdge<T> implements Edge<T> {
  readonly node: T;
  readonly #keyset: Keyset<T>;
  readonly #cursors: CursorCodec;
  #cursor: string | undefined;

  constructor(node: T, keyset: Keyset<T>, cursors: CursorCodec) {
    this.node = node;
    this.#keyset = keyset;
    this.#cursors = cursors;
  }

  get cursor(): string {
    return (this.#cursor ??= cursorOf(this.#keyset, this.#cursors, this.node));
  }
}

export function edgesOf<T>(items: readonly T[], keyset: Keyset<T>, cursors: CursorCodec): Edge<T>[] {
  return items.map((node) => new LazyCursorEdge(node, keyset, cursors));
}
