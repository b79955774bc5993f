// GET / answers without a key: the service's name and version and where its faces are, as JSON, or as
// a small page for a browser, so that whoever opens the address finds the way in.
import { DOCS_PATH, GRAPHQL_PATH, INDEX_PATH, OPENAPI_PATH } from '../paths.ts';
import { servesRead } from '../refusals.ts';
import type { ServerPlugin } from './server-context.ts';

export function useServiceIndex(version: string): ServerPlugin {
  const index = {
    name: 'Portico',
    version,
    links: {
      graphql: GRAPHQL_PATH,
      docs: DOCS_PATH,
      openapi: OPENAPI_PATH,
    },
  };
  const json = JSON.stringify(index);
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Portico ${version}</title></head>
<body><h1>Portico ${version}</h1><ul>
<li><a href="${GRAPHQL_PATH}">GraphQL</a> (GraphiQL in a browser)</li>
<li><a href="${DOCS_PATH}">REST API reference</a></li>
<li><a href="${OPENAPI_PATH}">OpenAPI document</a></li>
</ul><p>Every API call needs an API key in the <code>x-api-key</code> header.</p></body></html>
`;
  return {
    onRequest({ request, url, endResponse, fetchAPI }) {
      if (url.pathname !== INDEX_PATH || !servesRead(request, endResponse)) return;
      // A browser asks for HTML first; every other client gets JSON.
      const browser = /^text\/html\b/.test(request.headers.get('accept') ?? '');
      const body = browser ? html : json;
      endResponse(
        new fetchAPI.Response(request.method === 'HEAD' ? null : body, {
          headers: {
            'content-type': browser ? 'text/html; charset=utf-8' : 'application/json; charset=utf-8',
            // HEAD says the length GET's body has (RFC 9110 §9.3.2).
            'content-length': String(Buffer.byteLength(body)),
          },
        }),
      );
    },
  };
}
