// Bounds the request target (path and query string), on both faces, before anything reads it: a
// GraphQL GET carries its document in the URL, and nothing useful needs more than this.
import type { Plugin } from 'graphql-yoga';
import { refuse, type Face } from './deny.ts';

/** Longest path plus query string accepted, in characters; longer ones get 414. */
export const MAX_URL_LENGTH = 8 * 1024;

export function useUrlLimit(graphqlPath: string): Plugin {
  return {
    onRequest({ request, url, endResponse }) {
      const length = url.pathname.length + url.search.length;
      if (length <= MAX_URL_LENGTH) return;
      const face: Face = url.pathname === graphqlPath ? 'graphql' : 'rest';
      const remedy = face === 'graphql' ? 'send the document in a POST body instead' : 'send fewer or shorter parameters';
      endResponse(
        refuse(face, request, {
          kind: 'uri-too-long',
          detail: `The URL must be at most ${MAX_URL_LENGTH} characters (it has ${length}); ${remedy}.`,
        }),
      );
    },
  };
}
