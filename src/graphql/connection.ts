// A page as a Relay connection. A list paged forwards only reports `hasPreviousPage: false`, as the
// Relay spec allows. The page's cursors are computed only when selected.
import type { Page } from '../services/users.ts';

export function connectionOf<T>(page: Page<T>) {
  return {
    edges: page.items,
    pageInfo: {
      hasNextPage: page.hasNextPage,
      hasPreviousPage: page.hasPreviousPage ?? false,
      get startCursor() {
        return page.items[0]?.cursor ?? null;
      },
      get endCursor() {
        return page.items.at(-1)?.cursor ?? null;
      },
    },
  };
}
