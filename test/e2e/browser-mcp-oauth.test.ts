import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createUser } from '../../src/app/staff-account-service.ts';
import { launchBrowser, saveScreenshot } from '../helpers/browser.ts';
import { type ListeningApp, startListeningApp } from '../helpers/mcp-servers.ts';
import { connectWith, HostAuth, startSignIn } from '../helpers/oauth-flow.ts';

/**
 * The OAuth consent page of hosted MCP connectors (design.md 9.3) in a real browser (Debian's
 * Chromium): the SDK 2.x client asks to sign in, the person allows it on the page, and Chromium follows
 * the redirects back to the host's own callback on another origin (which the page's
 * Content-Security-Policy must let the form lead to); the host then calls the tools.
 */
const PASSWORD = 'owner password for oauth';
let browser: Browser;
let served: ListeningApp;
let host: Server;
let callback: string;

beforeAll(async () => {
  browser = await launchBrowser();
  served = await startListeningApp();
  await createUser(
    served.t.database.db,
    { organisationSlug: 'northside-hair', email: 'owner@northside.test', role: 'owner', password: PASSWORD },
    served.t.clock.nowMs(),
  );
  // The host's callback: where the browser lands with the code.
  host = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Connected</h1>');
  });
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
  callback = `http://127.0.0.1:${(host.address() as AddressInfo).port}/oauth/callback`;
}, 10 * 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => host?.close(resolve));
  await served?.t.close();
});

it('signs in on the consent page in Chromium and lands back at the host with a code', async () => {
  const mcpUrl = new URL('/mcp', served.origin);
  const auth = new HostAuth({ redirectUrl: callback });
  const transport = await startSignIn(mcpUrl, auth);
  const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
  try {
    const page = await context.newPage();
    await page.goto(auth.authorizationUrl!.href);
    await expect(page.getByRole('heading', { level: 1 })).toBeDefined();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
      'Connect Test host to your bookings',
    );
    await page.getByLabel('Organisation').fill('northside-hair');
    await page.getByLabel('E-mail').fill('owner@northside.test');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel(/bookings:write/).check();
    await saveScreenshot(page, 'mcp-oauth-consent');
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((url) => url.href.startsWith(callback));
    expect(await page.textContent('h1')).toBe('Connected');
    const landed = new URL(page.url());
    expect(landed.searchParams.get('code')).toBeTruthy();
    await transport.finishAuth(landed.searchParams);
  } finally {
    await context.close();
  }
  expect(auth.savedTokens?.scope).toBe('bookings:write');
  const client = await connectWith(mcpUrl, auth);
  try {
    const result = await client.callTool({ name: 'list_locations', arguments: {} });
    expect(result.isError).toBeFalsy();
  } finally {
    await client.close();
  }
});

it('sends a desktop host back to its own URI scheme after Allow (Cursor, VS Code), past the page’s policy', async () => {
  const mcpUrl = new URL('/mcp', served.origin);
  const appCallback = 'cursor://anysphere.cursor-mcp/oauth/callback';
  const auth = new HostAuth({ redirectUrl: appCallback });
  const transport = await startSignIn(mcpUrl, auth);
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const said: string[] = [];
    page.on('console', (message) => said.push(message.text()));
    await page.goto(auth.authorizationUrl!.href);
    await page.getByLabel('Organisation').fill('northside-hair');
    await page.getByLabel('E-mail').fill('owner@northside.test');
    await page.getByLabel('Password').fill(PASSWORD);
    // The browser hands the app's own scheme to the app (none is installed here): the redirect that
    // does so, with the code, is what the page's Content-Security-Policy must let the form lead to.
    const handedOver = page
      .waitForResponse(
        (response) =>
          response.url().includes('/oauth/authorize/') &&
          (response.headers().location ?? '').startsWith(appCallback),
        { timeout: 10_000 },
      )
      .catch(() => null);
    await page.getByRole('button', { name: 'Allow' }).click();
    const response = await handedOver;
    expect(response, said.join('\n')).not.toBeNull();
    expect(said.join('\n')).not.toContain('Content Security Policy');
    const landed = new URL(response!.headers().location!);
    expect(landed.searchParams.get('code')).toBeTruthy();
    await transport.finishAuth(landed.searchParams);
  } finally {
    await context.close();
  }
  const client = await connectWith(mcpUrl, auth);
  try {
    expect((await client.callTool({ name: 'list_locations', arguments: {} })).isError).toBeFalsy();
  } finally {
    await client.close();
  }
});
