// Pothos's scope-auth plugin keeps, per request, a cache of the scopes it evaluated in a WeakMap
// keyed by the GraphQL context, and the cache refers back to that context. V8's young-generation
// collector keeps such an entry (its value reaches its key) until the next full collection, and with
// it the whole request: its context, rows and response survive every young collection, are copied
// and promoted to the old generation, and make each pause several times longer. The cache serves one
// execution, so it is let go when the execution ends.
import { RequestCache } from '@pothos/plugin-scope-auth';
import type { ServerPlugin } from './server-context.ts';

export function useScopeCacheRelease(): ServerPlugin {
  return {
    onExecute() {
      return { onExecuteDone: ({ args }) => RequestCache.clearForContext(args.contextValue) };
    },
  };
}
