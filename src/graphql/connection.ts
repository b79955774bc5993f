// A page as a Relay connection. A list paged forwards only reports `hasPreviousPage: false`, as the
// Relay spec allows. The page's cursors are computed only when selected, by getters of a class (an
// object literal with getters costs the garbage collector dearly; see pagination/edges.ts).
import type { Edge, Page } from '../pagination/edges.ts';

class PageInfo<T> {
  readonly hasNextPage: boolean;
  readonly hasPreviousPage: boolean;
  readonly #items: Edge<T>[];

  constructor(page: Page<T>) {
    this.hasNextPage = page.hasNextPage;
    this.hasPreviousPage = page.hasPreviousPage ?? false;
    this.#items = page.items;
  }

  get startCursor(): string | null {
    return this.#items[0]?.cursor ?? null;
  }

  get endCursor(): string | null {
    return this.#items.at(-1)?.cursor ?? null;
  }
}

export function connectionOf<T>(page: Page<T>) {
  return { edges: page.items, pageInfo: new PageInfo(page) };
}
