// A GraphQL POST in a media type yoga cannot read (text/plain, say) gets 415 with an error that says
// what to send, in the GraphQL face's format, rather than yoga's empty 415.
import { refuse } from '../refusals.ts';
import type { ServerPlugin } from './server-context.ts';

export function useGraphQLMediaTypes(): ServerPlugin {
  return {
    onRequestParse({ request, requestParser, endResponse }) {
      if (requestParser) return;
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
