/**
 * The real browser the viewer's tests drive: Debian's chromium (installed by `npm run setup`), launched by
 * playwright-core from its executable path — nothing downloads a browser. TROUPE_CHROMIUM names another executable.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildApp } from '../../scripts/build-app.mjs';
import { readAppAssets, type AppAssets } from '../../src/index.js';

const CANDIDATES = [
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
];

/** The chromium executable, or an error that says how to install it. */
export function chromiumPath(): string {
  const fromEnv = process.env.TROUPE_CHROMIUM;
  if (fromEnv) {
    if (!existsSync(fromEnv))
      throw new Error(
        `TROUPE_CHROMIUM=${fromEnv}: no such file; unset it and run \`npm run setup\` as root (it installs Debian's chromium), or point it at a chromium executable`,
      );
    return fromEnv;
  }
  const found = CANDIDATES.find((p) => existsSync(p));
  if (!found) {
    throw new Error(
      `the viewer's browser tests need chromium (looked for ${CANDIDATES.join(', ')}); run \`npm run setup\` as root (it installs Debian's chromium), or \`apt-get install chromium\`, or set TROUPE_CHROMIUM`,
    );
  }
  return found;
}

/** Launches headless chromium. */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    // root (CI containers) cannot use chromium's sandbox
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}

/** The app bundled from the current sources into a temporary folder (the tests see what they test). */
export async function freshAssets(): Promise<{ assets: AppAssets; cleanup: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-viewer-app-'));
  await buildApp(dir);
  return { assets: readAppAssets(dir), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Collects the page's errors (a view that throws fails the test that looks at it). */
export function pageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(msg.text());
  });
  return errors;
}

/** Waits until the first element matching `selector` has exactly this text (page code as a string: no DOM types here). */
export async function waitForText(page: Page, selector: string, text: string, timeout?: number): Promise<void> {
  await page.waitForFunction(
    `document.querySelector(${JSON.stringify(selector)})?.textContent === ${JSON.stringify(text)}`,
    undefined,
    { timeout },
  );
}

/** Waits until `selector` matches exactly `n` elements. */
export async function waitForCount(page: Page, selector: string, n: number): Promise<void> {
  await page.waitForFunction(`document.querySelectorAll(${JSON.stringify(selector)}).length === ${n}`);
}
