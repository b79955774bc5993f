// A GraphQL POST in a media type yoga cannot read (text/plain, say) gets 415 with an error that says
// what to send, in the GraphQL face's format, rather than yoga's empty 415; a request by a method
// GraphQL is not served by (PUT, DELETE …) gets 405 naming the two it is.
import { refuse } from '../refusals.ts';
import type { ServerPlugin } from './server-context.ts';

export function useGraphQLMediaTypes(): ServerPlugin {
  return {
    onRequestParse({ request, requestParser, endResponse }) {
      if (requestParser) return;
      if (request.method !== 'GET' && request.method !== 'POST') {
        endResponse(
          refuse(request, {
            kind: 'method-not-allowed',
            detail: `GraphQL is served by GET (queries) and POST, not ${request.method}.`,
            headers: { allow: 'GET, POST' },
          }),
        );
        return;
      }
      const sent = request.headers.get('content-type')?.split(';')[0]?.trim();
      endResponse(
        refuse(request, {
          kind: 'unsupported-media-type',
          detail:
            `Send GraphQL requests as POST with Content-Type: application/json, or as GET with query parameters` +
            `${sent ? ` (not ${sent})` : ''}.`,
        }),
      );
    },
  };
}
