// The pages people open in a browser, read in a real one. The API reference at /docs: Swagger UI must
// render the service's own OpenAPI document from assets the service serves itself, without a single
// request leaving the machine. GraphiQL at /graphql: it opens cleanly; a query without a key answers
// the service's own 401; with the key pasted, the schema loads and a query runs.
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_PATH, SKIP_BROWSER, launchChromium } from '../support/browser.ts';
import { match } from '../support/match.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const CONTENT_TYPES: Record<string, RegExp> = {
  js: /^text\/javascript\b/,
  css: /^text\/css\b/,
  png: /^image\/png$/,
};

/** The block Swagger UI renders for one operation. */
const operation = (page: Page, method: string, path: string) =>
  page
    .locator('.opblock')
    .filter({ has: page.locator('.opblock-summary-method', { hasText: new RegExp(`^${method}$`) }) })
    .filter({ has: page.locator(`.opblock-summary-path[data-path="${path}"]`) });

let server: TestServer;
let browser: Browser | undefined;
beforeAll(async () => {
  server = await startTestServer();
  if (!SKIP_BROWSER) browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('API reference', () => {
  it('serves every asset its page references, from this service, with a fitting content type', async () => {
    const page = await fetch(`${server.url}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await page.text();
    expect(html).toContain('<title>Portico API reference</title>');

    const references = [...html.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((match) => new URL(match[1]!, `${server.url}/docs`));
    expect(references.map((url) => url.pathname)).toEqual(
      match.arrayContaining(['/docs/assets/swagger-ui-bundle.js', '/docs/assets/swagger-ui.css']),
    );
    for (const url of references) {
      expect(url.origin).toBe(server.url);
      const response = await fetch(url);
      expect(response.status, url.pathname).toBe(200);
      const extension = url.pathname.split('.').pop()!;
      expect(response.headers.get('content-type'), url.pathname).toMatch(CONTENT_TYPES[extension] ?? /^$/);
      expect((await response.arrayBuffer()).byteLength, url.pathname).toBeGreaterThan(0);
    }
  });

  it('answers HEAD, redirects /docs/ to /docs and answers unknown assets with 404', async () => {
    const head = await fetch(`${server.url}/docs/assets/swagger-ui.css`, { method: 'HEAD' });
    expect([head.status, head.headers.get('content-type')]).toEqual([200, 'text/css; charset=utf-8']);
    const redirect = await fetch(`${server.url}/docs/`, { redirect: 'manual' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('/docs');
    for (const name of ['nope.js', 'constructor', '__proto__']) {
      const missing = await fetch(`${server.url}/docs/assets/${name}`);
      expect([missing.status, missing.headers.get('content-type')]).toEqual([404, 'application/problem+json']);
      const graphiql = await fetch(`${server.url}/graphiql/assets/${name}`);
      expect([graphiql.status, graphiql.headers.get('content-type')]).toEqual([404, 'application/problem+json']);
    }
  });

  it.skipIf(SKIP_BROWSER)(
    `renders every operation in a browser, with no request leaving the service (needs ${CHROMIUM_PATH})`,
    async () => {
      const openApi = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
      const methods = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);
      const operations = Object.values(openApi.paths).flatMap((item) => Object.keys(item).filter((key) => methods.has(key)));
      expect(operations.length).toBeGreaterThan(0);

      const context = await browser!.newContext();
      try {
        const page = await context.newPage();
        const requests: string[] = [];
        const failures: string[] = [];
        const errors: string[] = [];
        page.on('request', (request) => requests.push(request.url()));
        page.on('requestfailed', (request) => failures.push(`${request.url()}: ${request.failure()?.errorText}`));
        page.on('response', (response) => {
          if (response.status() >= 400) failures.push(`${response.url()}: ${response.status()}`);
        });
        page.on('console', (message) => {
          if (message.type() === 'error') errors.push(message.text());
        });
        page.on('pageerror', (error) => errors.push(error.message));

        expect((await page.goto(`${server.url}/docs`))?.status()).toBe(200);
        expect(await page.title()).toBe('Portico API reference');
        await operation(page, 'GET', '/users')
          .waitFor({ timeout: 20_000 })
          .catch((error: unknown) => {
            throw new Error(`Swagger UI rendered no GET /users; console errors: ${JSON.stringify(errors)}`, { cause: error });
          });
        await expect.poll(() => page.locator('.opblock').count(), { timeout: 5_000 }).toBe(operations.length);

        // The reader authorizes with a key, then "Try it out" sends a real request from the page; the
        // page's CSP must still let it reach this service.
        await page.locator('.scheme-container .authorize').click();
        // Both schemes are offered: the key, and a user's token for their own data.
        await expect.poll(() => page.locator('.modal-ux .auth-container').count()).toBe(2);
        expect(await page.locator('.modal-ux').innerText()).toContain('UserToken');
        await page.locator('.modal-ux .auth-container input').first().fill(server.apiKey);
        await page.locator('.modal-ux .auth-btn-wrapper button.authorize').first().click();
        await page.locator('.modal-ux .auth-btn-wrapper button.btn-done').first().click();
        const createUser = operation(page, 'POST', '/users');
        await createUser.locator('.opblock-summary').click();
        await createUser.getByRole('button', { name: 'Try it out' }).click();
        await createUser.getByRole('button', { name: 'Execute' }).click();
        await createUser.locator('.live-responses-table .response-col_status', { hasText: '201' }).waitFor({ timeout: 10_000 });

        expect(requests).toContain(`${server.url}/openapi.json`);
        expect(requests.filter((url) => !url.startsWith(`${server.url}/`) && !/^(data|blob):/.test(url))).toEqual([]);
        expect(failures).toEqual([]);
        expect(errors).toEqual([]);
      } finally {
        await context.close();
      }
    },
  );
});

/** Replaces the text of a GraphiQL editor (Monaco), as pasting would. */
async function replaceText(page: Page, editor: Locator, text: string): Promise<void> {
  await editor.click({ timeout: 5000 });
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

/** The result pane's text (Monaco renders spaces as no-break spaces). */
const response = async (page: Page) => (await page.locator('.graphiql-response').innerText()).replace(/\u00a0/g, ' ');

describe('GraphiQL', () => {
  it.skipIf(SKIP_BROWSER)(`opens cleanly, answers 401 without a key and runs queries with one (needs ${CHROMIUM_PATH})`, async () => {
    const context = await browser!.newContext();
    try {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      page.on('console', (message) => {
        if (message.type() === 'error' && !/401|Unauthorized/.test(message.text())) errors.push(message.text());
      });
      expect((await page.goto(`${server.url}/graphql`))?.status()).toBe(200);
      await page.locator('.graphiql-execute-button').waitFor({ timeout: 20_000 });

      await replaceText(page, page.locator('.graphiql-query-editor .monaco-editor'), '{ users(first: 1) { edges { node { id } } } }');
      await page.locator('.graphiql-execute-button').click();
      // The service's own answer to a request without a valid key.
      await expect.poll(() => response(page), { timeout: 10_000 }).toContain('The API key is not valid');
      expect(await response(page)).not.toContain('ISO-8859-1');

      await page.locator('.graphiql-editor-tools').getByText('Headers', { exact: true }).click({ timeout: 5000 });
      const headers = page.locator('.monaco-editor', { hasText: 'paste-your-api-key-here' });
      await replaceText(page, headers, JSON.stringify({ 'x-api-key': server.apiKey }));
      await page.locator('.graphiql-execute-button').click();
      await expect.poll(() => response(page), { timeout: 10_000 }).toContain('"users"');

      await page.getByRole('button', { name: /Re-fetch GraphQL schema/ }).click({ timeout: 5000 });
      await page.getByRole('button', { name: /Show Documentation Explorer/ }).click({ timeout: 5000 });
      await expect.poll(() => page.locator('.graphiql-doc-explorer').innerText(), { timeout: 10_000 }).toContain('Query');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
