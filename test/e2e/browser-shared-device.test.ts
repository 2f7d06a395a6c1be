import { DateTime } from 'luxon';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPhonePage } from '../helpers/browser.ts';
import { type ListeningApp, startListeningApp } from '../helpers/mcp-servers.ts';

/**
 * A salon's tablet, a library's computer: the next customer on the same browser presses Back after
 * the last one booked or joined the waitlist. The form comes back (its key kept: it leads to the
 * booking it made, for its own sender only), but never with what the last customer typed in it:
 * Chromium restores typed fields on Back unless they say autocomplete="off". Debian's Chromium, on a
 * real port, the demo catalogue.
 */
const ORG = 'northside-hair';
const TYPED = {
  'First name': 'Alice',
  'Last name': 'Secret',
  Phone: '07400 918273',
  'E-mail': 'alice@example.com',
};
let browser: Browser;
let server: ListeningApp;

beforeAll(async () => {
  browser = await launchBrowser();
  server = await startListeningApp();
}, 10 * 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.t.close();
});

async function api<T>(path: string): Promise<T> {
  const response = await fetch(`${server.origin}/v1${path}`, {
    headers: { authorization: `Bearer ${server.t.keys.readWrite}` },
  });
  return ((await response.json()) as { data: T }).data;
}

async function typeDetails(page: Page): Promise<void> {
  for (const [label, value] of Object.entries(TYPED))
    await page.getByLabel(label, { exact: true }).fill(value);
}

async function detailsLeft(page: Page): Promise<string[]> {
  const values: string[] = [];
  for (const label of Object.keys(TYPED))
    values.push(await page.getByLabel(label, { exact: true }).inputValue());
  return values.filter((v) => v !== '');
}

describe('Back on a shared device', () => {
  it('shows the booking form without the last customer’s name, phone or e-mail', async () => {
    const services = await api<{ id: string; name: string }[]>('/locations/camden/services');
    const cut = services.find((s) => s.name === 'Cut & blow-dry')!;
    const page = await openPhonePage(browser);
    await page.goto(`${server.origin}/p/${ORG}?location=camden&services=${cut.id}`);
    await page.locator('nav.strip li button:not(.none)').first().click();
    await page.getByRole('radio').first().check();
    await typeDetails(page);
    const key = await page.locator('input[name="form_key"]').inputValue();
    await page.getByRole('button', { name: 'Confirm booking' }).click();
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();

    await page.goBack();
    await page.getByRole('button', { name: 'Confirm booking' }).waitFor();
    expect(await page.locator('input[name="form_key"]').inputValue()).toBe(key);
    expect(await detailsLeft(page)).toEqual([]);
  }, 120_000);

  it('shows the waitlist form without the last customer’s name, phone or e-mail', async () => {
    const services = await api<{ id: string; name: string }[]>('/locations/camden/services');
    const cut = services.find((s) => s.name === 'Cut & blow-dry')!;
    // The first day a week or more from now with no free time for a cut (browser-waitlist.test.ts).
    const from = DateTime.now().setZone('Europe/London').plus({ days: 7 });
    const { slots } = await api<{ slots: { starts_at: string }[] }>(
      `/locations/camden/availability?service_ids=${cut.id}&date=${from.toISODate()}&days=14`,
    );
    const open = new Set(
      slots.map((s) => DateTime.fromISO(s.starts_at, { zone: 'Europe/London' }).toISODate()),
    );
    let day = from;
    while (open.has(day.toISODate())) day = day.plus({ days: 1 });
    const page = await openPhonePage(browser);
    await page.goto(`${server.origin}/p/${ORG}?location=camden&services=${cut.id}&date=${day.toISODate()}`);
    await page.getByRole('heading', { name: 'Tell me if a time frees up' }).waitFor();
    await typeDetails(page);
    await page.getByRole('button', { name: 'Tell me if a time frees up' }).click();
    await page.getByRole('heading', { name: 'You are on the waitlist' }).waitFor();

    await page.goBack();
    await page.getByRole('button', { name: 'Tell me if a time frees up' }).waitFor();
    expect(await detailsLeft(page)).toEqual([]);
  }, 120_000);
});
