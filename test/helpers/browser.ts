import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { REPO_ROOT } from './cli.ts';

/**
 * Debian's Chromium, driven by playwright-core through its executablePath (Playwright's own browser
 * download cannot work without internet). test/e2e/ensure-chromium.sh installs it when missing, as
 * `.ci/run` does, so a fresh machine runs the browser tests too.
 */
export function chromiumPath(): string {
  return execFileSync('bash', [path.join(REPO_ROOT, 'test/e2e/ensure-chromium.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 10 * 60_000,
  }).trim();
}

/**
 * A headless Chromium with the flags this machine needs: no sandbox (tests run as root), and none of
 * the background connections a closed network would refuse at every start.
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A phone-sized page (360 px wide, as the hosted pages promise to work on). */
export async function openPhonePage(browser: Browser): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 360, height: 740 }, deviceScaleFactor: 1 });
  return context.newPage();
}

/**
 * Keeps the README's screenshots true: with UPDATE_DOCS=1 the page is saved as docs/screenshots/<name>.png;
 * otherwise nothing is written (a test run leaves the checkout as it was).
 */
export async function saveScreenshot(page: Page, name: string): Promise<void> {
  if (process.env.UPDATE_DOCS !== '1') return;
  const folder = path.join(REPO_ROOT, 'docs/screenshots');
  mkdirSync(folder, { recursive: true });
  await page.screenshot({ path: path.join(folder, `${name}.png`), fullPage: true });
}
