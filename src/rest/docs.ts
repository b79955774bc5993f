// Swagger UI for the REST facade, with every asset served by this service: the machines it runs on may
// have no internet, and the reference must not leak requests elsewhere (no CDN, fonts or validator badge).
// The CSP makes the browser enforce that, including for "Try it out".
import { servesRead } from '../refusals.ts';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { problem } from '../errors.ts';
import { DOCS_PATH as PAGE, OPENAPI_PATH } from '../paths.ts';
import { problemResponse } from './problem-details.ts';
import { assetResponse, prepareAssets, type PreparedAsset, type StaticAsset } from '../http/static-assets.ts';
import type { ServerPlugin } from '../plugins/server-context.ts';

const PREFIX = `${PAGE}/assets/`;
const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

const HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Portico API reference</title>
<link rel="icon" type="image/png" href="${PREFIX}favicon-32x32.png">
<link rel="stylesheet" href="${PREFIX}swagger-ui.css">
<link rel="stylesheet" href="${PREFIX}index.css">
</head>
<body>
<noscript>You need to enable JavaScript to read the API reference.</noscript>
<div id="swagger-ui"></div>
<script src="${PREFIX}swagger-ui-bundle.js"></script>
<script src="${PREFIX}init.js"></script>
</body>
</html>`;

const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-cache',
  // Swagger UI sets inline styles; data: and blob: images are its icons and "Try it out" responses.
  'content-security-policy':
    "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
};

async function loadAssets(dist: string, openApiPath: string): Promise<Map<string, PreparedAsset>> {
  const file = (name: string) => path.join(dist, name);
  // The source maps are not served; without the comment, browser tools do not ask for them.
  const text = (name: string) => readFileSync(file(name), 'utf8').replace(/\/\*# sourceMappingURL=\S+ ?\*\/\s*$/, '');
  const init = `window.ui = SwaggerUIBundle(${JSON.stringify({ url: openApiPath, dom_id: '#swagger-ui', deepLinking: true, validatorUrl: null })});\n`;
  const assets: Record<string, StaticAsset> = {
    'swagger-ui-bundle.js': { body: text('swagger-ui-bundle.js'), type: JS },
    'swagger-ui.css': { body: text('swagger-ui.css'), type: CSS },
    'index.css': { body: text('index.css'), type: CSS },
    'favicon-32x32.png': { body: readFileSync(file('favicon-32x32.png')), type: 'image/png' },
    'init.js': { body: init, type: JS },
  };
  return prepareAssets(assets);
}

/** Serves the API reference at GET /docs, rendering the OpenAPI document the service serves. */
export function useApiDocs(): ServerPlugin {
  // Found at startup, so a missing package fails the boot rather than the first reader; read when
  // first asked for (and compressed then), since the bundle is some 4 MB most instances never serve.
  const dist = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  let loaded: Promise<Map<string, PreparedAsset>> | undefined;
  return {
    onRequest({ request, url, endResponse, fetchAPI }) {
      const { pathname } = url;
      if (!(pathname === PAGE || pathname.startsWith(`${PAGE}/`)) || !servesRead(request, endResponse)) return;
      const head = request.method === 'HEAD';
      if (pathname === PAGE) {
        endResponse(new fetchAPI.Response(head ? null : HTML, { headers: PAGE_HEADERS }));
      } else if (pathname === `${PAGE}/`) {
        endResponse(new fetchAPI.Response(null, { status: 301, headers: { location: PAGE } }));
      } else if (pathname.startsWith(PREFIX)) {
        return (loaded ??= loadAssets(dist, OPENAPI_PATH)).then((assets) => {
          const asset = assets.get(pathname.slice(PREFIX.length));
          endResponse(
            asset
              ? assetResponse(request, asset, fetchAPI.Response)
              : problemResponse({ ...problem('not-found', `Nothing is at ${pathname}.`), instance: pathname }),
          );
        });
      }
    },
  };
}
