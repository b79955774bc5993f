// Every answer of the API belongs to the key that asked for it. A shared cache may store a 200 or a
// 404 it is told nothing about (RFC 9111 §4.2.2), and `x-api-key` is not `Authorization`, whose
// answers caches keep to themselves; so each answer forbids storing unless it says otherwise (the
// public GraphiQL assets, which may be kept a day).
import type { ServerPlugin } from './server-context.ts';

export function useNoStore(): ServerPlugin {
  return {
    onResponse({ response }) {
      if (!response.headers.has('cache-control')) response.headers.set('cache-control', 'no-store');
    },
  };
}
