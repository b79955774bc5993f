// A GraphQL POST in a media type yoga cannot read (text/plain, say, or JSON in another charset than
// UTF-8, or compressed) gets 415 with an error that says what to send, in the GraphQL face's format, rather than
// yoga's empty 415 (or its reading of the bytes as UTF-8 whatever they are); a request by a method
// GraphQL is not served by (PUT, DELETE …) gets 405 naming the two it is; and one whose Accept allows
// none of the media types GraphQL answers in gets 406 saying which they are, rather than yoga's
// empty 406 (in JSON all the same, which HTTP allows: an explanation beats an empty body).
import { ACCEPTED_CODINGS, charsetDetail, codingDetail, foreignCharset, foreignCoding } from '../http/body-encoding.ts';
import { preferred } from '../http/accept.ts';
import { GRAPHQL_METHODS, methodNotAllowed, refuse } from '../refusals.ts';
import type { ServerPlugin } from './server-context.ts';

/**
 * What yoga answers GraphQL in, in the order chosen among those Accept weighs alike: JSON first, as
 * yoga answers `*\/*`.
 */
export const ANSWERED_IN = ['application/json', 'application/graphql-response+json', 'text/event-stream', 'multipart/mixed'];

/** Whether an Accept header weighs its ranges (parameter names compare without regard to case). */
const WEIGHTED = /q=/i;

/** Whether an Accept header allows one of ANSWERED_IN (a missing header allows anything). */
function acceptsAnswer(accept: string | null): boolean {
  // Every client that asks for an answer at all asks for one of these; parsing is for the rest.
  if (accept === null || ((accept.includes('json') || accept.includes('*/*')) && !accept.includes('charset') && !WEIGHTED.test(accept)))
    return true;
  return preferred(accept, ANSWERED_IN) !== undefined;
}

export function useGraphQLMediaTypes(): ServerPlugin {
  return {
    // A weighted Accept is replaced by the one type it prefers (http/accept.ts): yoga takes the first
    // range it answers in by position alone, so `application/json;q=0.5, application/graphql-response+json`
    // got JSON, and `application/json;q=0, */*` too. Media types compare without regard
    // to letter case, and may have spaces before their parameters (RFC 9110 §8.3.1); yoga picks its
    // parser by the exact text (`application/json` or `application/json;…`), so `APPLICATION/JSON`
    // was 415. The type is written as yoga reads it.
    onRequest({ request }) {
      const accept = request.headers.get('accept');
      if (accept !== null && WEIGHTED.test(accept)) {
        const chosen = preferred(accept, ANSWERED_IN);
        if (chosen !== undefined) request.headers.set('accept', chosen);
      }
      const sent = request.headers.get('content-type');
      if (sent === null) return;
      const end = sent.indexOf(';');
      const type = end < 0 ? sent : sent.slice(0, end);
      const canonical = type.trim().toLowerCase();
      if (canonical !== type) request.headers.set('content-type', end < 0 ? canonical : `${canonical}${sent.slice(end)}`);
    },
    // Yoga answers a stream of events with `Cache-Control: no-cache`, over the `no-store` every answer
    // says (it is one key's answer), and `Content-Encoding: none`, a coding no registry knows.
    onResponse({ response }) {
      if (!response.headers.get('content-type')?.startsWith('text/event-stream')) return;
      response.headers.set('cache-control', 'no-store');
      if (response.headers.get('content-encoding') === 'none') response.headers.delete('content-encoding');
    },
    onRequestParse({ request, requestParser, endResponse }) {
      if (!acceptsAnswer(request.headers.get('accept'))) {
        endResponse(
          refuse(request, {
            kind: 'not-acceptable',
            detail: `GraphQL answers in ${ANSWERED_IN.join(', ')}; send an Accept header that allows one of them.`,
          }),
        );
        return;
      }
      if (requestParser) {
        if (request.method !== 'POST') return;
        const coding = foreignCoding(request.headers.get('content-encoding'));
        const charset = foreignCharset(request.headers.get('content-type'));
        if (coding !== undefined) {
          endResponse(refuse(request, { kind: 'unsupported-media-type', detail: codingDetail(coding), headers: ACCEPTED_CODINGS }));
        } else if (charset !== undefined) {
          endResponse(refuse(request, { kind: 'unsupported-media-type', detail: charsetDetail(charset) }));
        }
        return;
      }
      if (request.method !== 'GET' && request.method !== 'POST') {
        endResponse(methodNotAllowed(request, GRAPHQL_METHODS));
        return;
      }
      const sent = request.headers.get('content-type')?.split(';')[0]?.trim();
      endResponse(
        refuse(request, {
          kind: 'unsupported-media-type',
          detail:
            `Send GraphQL requests as POST with Content-Type: application/json (or the document alone as application/graphql, or a form as application/x-www-form-urlencoded), or as GET with query parameters` +
            `${sent ? ` (not ${sent})` : ''}.`,
        }),
      );
    },
  };
}
