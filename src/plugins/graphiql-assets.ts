// GraphiQL with every asset served by this service: the machines it runs on may have no internet,
// and yoga's default page loads its scripts from a CDN. The bundle is served as separate, cacheable
// files rather than inlined, so the page itself stays small. It is some 25 MB of strings, so it is
// loaded when GraphiQL is first asked for, and never where GraphiQL is off (production's default).
import type { GraphiQLOptions } from 'graphql-yoga';
import { assetResponse, prepareAssets, type PreparedAsset, type StaticAsset } from '../http/static-assets.ts';
import { GRAPHIQL_ASSETS_PATH } from '../paths.ts';
import { refuse } from '../refusals.ts';
import type { ServerPlugin } from './server-context.ts';

type Bundle = typeof import('@graphql-yoga/render-graphiql/graphiql');
const loadBundle = (): Promise<Bundle> => import('@graphql-yoga/render-graphiql/graphiql');
let prepared: Promise<Map<string, PreparedAsset>> | undefined;
const loadAssets = () => (prepared ??= loadBundle().then(prepareAll));

async function prepareAll(loaded: Bundle): Promise<Map<string, PreparedAsset>> {
  const js = 'text/javascript; charset=utf-8';
  const assets: Record<string, StaticAsset> = {
    'graphiql.js': { body: loaded.js, type: js },
    'graphiql.css': { body: loaded.css, type: 'text/css; charset=utf-8' },
    'editor.worker.js': { body: loaded.editorWorkerService, type: js },
    'json.worker.js': { body: loaded.jsonWorker, type: js },
    'graphql.worker.js': { body: loaded.graphqlWorker, type: js },
  };
  return prepareAssets(assets);
}

export function useGraphiQLAssets(enabled: boolean): ServerPlugin {
  if (!enabled) return {};
  return {
    onRequest({ request, url, endResponse, fetchAPI }) {
      if (!url.pathname.startsWith(GRAPHIQL_ASSETS_PATH) || (request.method !== 'GET' && request.method !== 'HEAD')) return;
      return loadAssets().then((assets) => {
        const asset = assets.get(url.pathname.slice(GRAPHIQL_ASSETS_PATH.length));
        endResponse(
          asset
            ? assetResponse(request, asset, fetchAPI.Response)
            : refuse(request, { kind: 'not-found', detail: `Nothing is at ${url.pathname}.` }),
        );
      });
    },
    onResponse({ response }) {
      // The page itself, which yoga renders: no other site may frame it to have its visitors click in
      // it. (Its inline scripts and styles leave nothing else of a policy worth setting.)
      if (response.headers.get('content-type')?.startsWith('text/html'))
        response.headers.set('content-security-policy', "frame-ancestors 'none'");
    },
  };
}

const escapeJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

export async function renderGraphiQL(options: GraphiQLOptions = {}): Promise<string> {
  const { favicon } = await loadBundle();
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${options.title ?? 'GraphiQL'}</title>
<link rel="icon" href="${favicon}">
<link rel="stylesheet" href="${GRAPHIQL_ASSETS_PATH}graphiql.css">
</head>
<body id="body" class="no-focus-outline">
<noscript>You need to enable JavaScript to run GraphiQL.</noscript>
<div id="root"></div>
<script>
self.MonacoEnvironment = {
  globalAPI: false,
  getWorkerUrl: (_moduleId, label) => ({
    json: '${GRAPHIQL_ASSETS_PATH}json.worker.js',
    graphql: '${GRAPHIQL_ASSETS_PATH}graphql.worker.js',
  })[label] ?? '${GRAPHIQL_ASSETS_PATH}editor.worker.js',
};
</script>
<script src="${GRAPHIQL_ASSETS_PATH}graphiql.js"></script>
<script>YogaGraphiQL.renderYogaGraphiQL(document.getElementById('root'), ${escapeJson(options)});</script>
</body>
</html>`;
}
