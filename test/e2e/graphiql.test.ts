// GraphiQL as a new user first meets it, in a real browser: it opens cleanly; a query without a key
// answers the service's own 401; with the key pasted, the schema loads and a query runs.
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CHROMIUM_PATH, SKIP_BROWSER, launchChromium } from '../support/browser.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

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

/** Replaces the text of a GraphiQL editor (Monaco), as pasting would. */
async function replaceText(page: Page, editor: Locator, text: string): Promise<void> {
  await editor.click({ timeout: 5000 });
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

/** The result pane's text (Monaco renders spaces as no-break spaces). */
const response = async (page: Page) => (await page.locator('.graphiql-response').innerText()).replace(/\u00a0/g, ' ');

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
