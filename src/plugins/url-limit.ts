// Bounds the request target (path and query string), on both faces, before anything reads it: a
// GraphQL GET carries its document in the URL, and nothing useful needs more than this.
import { faceOf, refuse } from '../refusals.ts';
import { MAX_URL_LENGTH } from '../request-limits.ts';
import type { ServerPlugin } from './server-context.ts';

export function useUrlLimit(): ServerPlugin {
  return {
    onRequest({ request, url, endResponse }) {
      const length = url.pathname.length + url.search.length;
      if (length <= MAX_URL_LENGTH) return;
      const remedy = faceOf(url.pathname) === 'graphql' ? 'send the document in a POST body instead' : 'send fewer or shorter parameters';
      endResponse(
        refuse(request, {
          kind: 'uri-too-long',
          detail: `The URL must be at most ${MAX_URL_LENGTH} characters (it has ${length}); ${remedy}.`,
        }),
      );
    },
  };
}
