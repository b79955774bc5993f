// A GraphQL POST in a media type yoga cannot read (text/plain, say) gets 415 with an error that says
// what to send, in the GraphQL face's format, rather than yoga's empty 415.
import type { Plugin } from 'graphql-yoga';
import { refuse } from './deny.ts';

export function useGraphQLMediaTypes(): Plugin {
  return {
    onRequestParse({ request, requestParser, endResponse }) {
      if (requestParser) return;
      const sent = request.headers.get('content-type')?.split(';')[0]?.trim();
      endResponse(
        refuse('graphql', request, {
          kind: 'unsupported-media-type',
          detail:
            `Send GraphQL requests as POST with Content-Type: application/json, or as GET with query parameters` +
            `${sent ? ` (not ${sent})` : ''}.`,
        }),
      );
    },
  };
}
