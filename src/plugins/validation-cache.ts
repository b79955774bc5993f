// Validation results cached by document, in place of yoga's validation cache. Yoga's builds its key
// from the names of every validation rule the request runs (graphql-js's 27 and graphql-armor's),
// mapped and joined into one string on every request, then looked up in an LRU: about 1.8% of a
// `user(id)` request's CPU in a profile, for a key that never changes here. Every request is
// validated against the one schema with the same rules (the plugins that add rules add fixed ones,
// from configuration read at start), so the document alone decides the result. Yoga's parser cache
// (bounded) hands back the same document object for the same text, and an entry here goes with its
// document.
import type { ServerPlugin } from './server-context.ts';

export function useValidationCache(): ServerPlugin {
  const results = new WeakMap<object, readonly Error[]>();
  return {
    onValidate({ params: { documentAST }, setResult }) {
      // envelop types the document `any`.
      const document: unknown = documentAST;
      if (typeof document !== 'object' || document === null) return;
      const cached = results.get(document);
      if (cached) {
        setResult(cached);
        return;
      }
      return ({ result }) => {
        results.set(document, result);
      };
    },
  };
}
