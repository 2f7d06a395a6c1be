import { DateTime } from 'luxon';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPhonePage, saveScreenshot } from '../helpers/browser.ts';
import { type ListeningApp, startListeningApp } from '../helpers/mcp-servers.ts';

/**
 * "Tell me if a time frees up" in a real browser (Debian's Chromium, 360 px wide), against the demo
 * catalogue on a real port: a search for a day with no free time shows the form with that day filled
 * in; the customer adds their details and a part of the day, and the confirmation page says what they
 * wait for and where the offer will come. The page's own Content-Security-Policy applies throughout.
 */
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

const ORG = 'northside-hair';

async function api<T>(path: string): Promise<T> {
  const response = await fetch(`${server.origin}/v1${path}`, {
    headers: { authorization: `Bearer ${server.t.keys.readWrite}` },
  });
  return ((await response.json()) as { data: T }).data;
}

/** The first London day, a week or more from now, with no free time for the service (a closed day). */
async function firstClosedDayFromAWeek(location: string, serviceId: string): Promise<string> {
  const from = DateTime.now().setZone('Europe/London').plus({ days: 7 });
  const { slots } = await api<{ slots: { starts_at: string }[] }>(
    `/locations/${location}/availability?service_ids=${serviceId}&date=${from.toISODate()}&days=14`,
  );
  const open = new Set(
    slots.map((s) => DateTime.fromISO(s.starts_at, { zone: 'Europe/London' }).toISODate()),
  );
  for (let day = 0; day < 14; day++) {
    const date = from.plus({ days: day }).toISODate()!;
    if (!open.has(date)) return date;
  }
  throw new Error('no closed day in two weeks');
}

describe('the public page’s waitlist in a browser', () => {
  it('offers the waitlist for a day with no free time and confirms the request', async () => {
    const services = await api<{ id: string; name: string }[]>('/locations/camden/services');
    const service = services.find((s) => s.name === 'Cut & blow-dry')!;
    const date = await firstClosedDayFromAWeek('camden', service.id);

    const page = await openPhonePage(browser);
    await page.goto(`${server.origin}/p/${ORG}`);
    await page.getByLabel('Location').selectOption('camden');
    await page.getByRole('button', { name: 'Choose location' }).click();
    await page.getByLabel(/^Cut & blow-dry/).check();
    await page.getByLabel('Day').fill(date);
    await page.getByRole('button', { name: 'Show free times' }).click();
    await page.getByRole('heading', { name: 'Tell me if a time frees up' }).waitFor();
    expect(await page.getByLabel('From', { exact: true }).inputValue()).toBe(date);
    expect(await page.getByLabel('Until', { exact: true }).inputValue()).toBe(date);
    const until = DateTime.fromISO(date).plus({ days: 3 }).toISODate()!;
    await page.getByLabel('Until', { exact: true }).fill(until);
    await page.getByLabel(/^Morning/).check();
    await page.getByLabel('First name').fill('Rosa');
    await page.getByLabel('Last name').fill('Parks');
    await page.getByLabel('E-mail').fill('rosa@example.com');
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    await saveScreenshot(page, 'public-waitlist-form');
    await page.getByRole('button', { name: 'Tell me if a time frees up' }).click();

    await page.getByRole('heading', { name: 'You are on the waitlist' }).waitFor();
    const body = (await page.textContent('body')) ?? '';
    expect(body).toContain('Cut & blow-dry');
    expect(body).toContain('Morning (before 12:00)');
    expect(body).toContain('an e-mail to rosa@example.com');
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    await saveScreenshot(page, 'public-waitlist-joined');

    const entries = await api<{ from_date: string; to_date: string; times: string[]; status: string }[]>(
      '/waitlist?location_slug=camden',
    );
    expect(entries).toEqual([
      expect.objectContaining({ from_date: date, to_date: until, times: ['morning'], status: 'waiting' }),
    ]);
  }, 120_000);

  it('keeps a long e-mail address and name inside a phone’s width, on the confirmation and the booking’s page', async () => {
    const services = await api<{ id: string; name: string }[]>('/locations/camden/services');
    const service = services.find((s) => s.name === 'Cut & blow-dry')!;
    const date = await firstClosedDayFromAWeek('camden', service.id);
    const email = 'christopher.montgomeryfitzwilliam@example.com';
    const page = await openPhonePage(browser);
    await page.goto(`${server.origin}/p/${ORG}?location=camden&services=${service.id}&date=${date}`);
    await page.getByLabel('First name').fill('Christopher');
    await page.getByLabel('Last name').fill('Montgomeryfitzwilliamsonsmythe-Featherstonehaugh');
    await page.getByLabel('E-mail').fill(email);
    await page.getByRole('button', { name: 'Tell me if a time frees up' }).click();
    await page.getByRole('heading', { name: 'You are on the waitlist' }).waitFor();
    expect(await page.textContent('body')).toContain(email);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);

    // A booking's page names them in its list of details.
    const later = DateTime.fromISO(date).plus({ days: 1 }).toISODate()!;
    await page.goto(`${server.origin}/p/${ORG}?location=camden&services=${service.id}&date=${later}`);
    await page.getByRole('radio').first().check();
    await page.getByLabel('First name').fill('Christopher');
    await page.getByLabel('Last name').fill('Montgomeryfitzwilliamsonsmythefeatherstonehaugh');
    await page.getByLabel('E-mail').fill(email);
    await page.getByRole('button', { name: 'Confirm booking' }).click();
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
  }, 120_000);
});
