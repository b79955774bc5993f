// Bounds GraphQL request bodies. Yoga's own bound pipes every body through a counting stream, which
// costs each request several objects and a pipeline; Node's HTTP parser already delivers exactly the
// bytes a Content-Length declares, so a declared length is checked once, and only a body without
// one (chunked) is counted as it arrives.
import { createGraphQLError } from '@graphql-tools/utils';
import type { ServerPlugin } from './server-context.ts';

const tooLarge = (maxBytes: number) =>
  createGraphQLError(`The body must be at most ${maxBytes} bytes.`, { extensions: { http: { status: 413 } } });

function counted(
  request: Request,
  maxBytes: number,
  fetchAPI: { Request: typeof Request; TransformStream: typeof TransformStream },
): Request {
  // The body may be Node's own stream or the fetch ponyfill's; a transform must be of the same kind.
  const Transform = request.body instanceof ReadableStream ? globalThis.TransformStream : fetchAPI.TransformStream;
  let bytes = 0;
  const body = request.body!.pipeThrough(
    new Transform<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        bytes += chunk.byteLength;
        if (bytes > maxBytes) controller.error(tooLarge(maxBytes));
        else controller.enqueue(chunk);
      },
    }),
  );
  return new fetchAPI.Request(request.url, {
    method: request.method,
    headers: request.headers,
    signal: request.signal,
    body,
    duplex: 'half',
  } as RequestInit);
}

export function useBodyLimit(maxBytes: number): ServerPlugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      const declared = request.headers.get('content-length');
      if (declared !== null) {
        if (!/^\d+$/.test(declared))
          throw createGraphQLError('The Content-Length header is not valid.', { extensions: { http: { status: 400 } } });
        if (Number(declared) > maxBytes) throw tooLarge(maxBytes);
        return;
      }
      if (requestParser && request.body) setRequestParser((req) => requestParser(counted(req, maxBytes, fetchAPI)));
    },
  };
}
