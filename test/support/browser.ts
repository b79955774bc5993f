// Headless Chromium from Debian's package, for tests that read a page as a user would. CI always runs
// them (.ci/run installs Chromium through `npm test`); a developer machine without Chromium and
// without the rights to install it reports them as skipped, saying why.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SKIP_BROWSER = !process.env.CI && !existsSync(CHROMIUM_PATH);

export async function launchChromium(): Promise<Browser> {
  try {
    return await chromium.launch({
      executablePath: CHROMIUM_PATH,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
  } catch (error) {
    throw new Error(`Cannot launch Chromium at ${CHROMIUM_PATH}: install Debian's chromium package or set CHROMIUM_PATH.`, {
      cause: error,
    });
  }
}
