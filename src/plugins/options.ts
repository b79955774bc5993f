// OPTIONS: yoga's CORS handling answers every OPTIONS request 204 before any plugin sees it, which is
// right for a browser's preflight but says nothing to anyone else, and says it for paths that do
// not exist. A plain OPTIONS (no Access-Control-Request-Method) gets the path's methods in `Allow`
// (RFC 9110 §9.3.7), and where PATCH is served its formats in `Accept-Patch`, or 404 for a path the
// service does not serve; neither kind of 204 carries a Content-Length.
import { DOCS_PATH, GRAPHIQL_ASSETS_PATH, GRAPHQL_PATH, INDEX_PATH, OPENAPI_PATH } from '../paths.ts';
import { GRAPHQL_METHODS, READ_METHODS, allowHeader, refuse } from '../refusals.ts';
import { matchRoute, restMethods } from '../rest/routes.ts';
import type { ServerPlugin } from './server-context.ts';

/** The methods `pathname` is served by, besides OPTIONS; undefined when nothing is there. */
function methodsOf(pathname: string, graphiql: boolean): readonly string[] | undefined {
  if (pathname === GRAPHQL_PATH) return GRAPHQL_METHODS;
  const document =
    pathname === INDEX_PATH ||
    pathname === OPENAPI_PATH ||
    pathname === DOCS_PATH ||
    pathname.startsWith(`${DOCS_PATH}/`) ||
    (graphiql && pathname.startsWith(GRAPHIQL_ASSETS_PATH));
  return document ? READ_METHODS : restMethods(pathname);
}

export function useOptions(graphiql: boolean): ServerPlugin {
  return {
    onResponse({ request, response, setResponse }) {
      if (request.method !== 'OPTIONS') return;
      // Yoga's 204 says `Content-Length: 0`, which no 204 may carry (RFC 9110 §8.6).
      if (response.status === 204) response.headers.delete('content-length');
      if (request.headers.has('access-control-request-method')) return;
      const { pathname } = new URL(request.url);
      const methods = methodsOf(pathname, graphiql);
      if (methods === undefined) {
        setResponse(refuse(request, { kind: 'not-found', detail: `Nothing is at ${pathname}.` }));
        return;
      }
      response.headers.set('allow', allowHeader(methods));
      // Where PATCH is served, the patch formats it takes (RFC 5789 §3.1), as its 415 says them.
      const patch = methods.includes('PATCH') ? matchRoute('PATCH', pathname) : undefined;
      if (patch && 'route' in patch && patch.route.body) response.headers.set('accept-patch', patch.route.body.mediaTypes.join(', '));
    },
  };
}
