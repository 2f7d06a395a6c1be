import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CalendarFetcher } from '../../src/app/calendars/busy-fetch.ts';
import { refreshDueCalendars } from '../../src/app/calendars/refresher.ts';
import { launchBrowser, openPhonePage } from '../helpers/browser.ts';
import { type CalendarServer, ics, startCalendarServer } from '../helpers/calendar-server.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Times a staff member's external (busy) calendar takes (design.md 9.6), as a customer on the public
 * booking page sees them in a real browser (Debian's Chromium, 360 px wide): the page says they are
 * taken, in the customer's words, never that the working day is over, that the salon is closed, or
 * that the stylist does not work or is on time off; and nothing of the private calendar shows.
 * The small catalogue: Ana works at Soho Mondays and Tuesdays 09:00-17:00 and Bo on Wednesdays; a Cut
 * takes 45 minutes and 15 of buffer. The clock: Monday 23 November 2026, 12:00 in London (GMT).
 */
let browser: Browser;
let t: TestApp;
let calendars: CalendarServer;
let origin: string;
const REFRESH_MS = 300_000;
const fetcher = new CalendarFetcher(true, { timeoutMs: 5_000, maxBytes: 65_536 });
const refresh = () =>
  refreshDueCalendars({ db: t.database.db, clock: t.clock, fetcher, refreshMs: REFRESH_MS });

/** Ana's private calendar: a VEVENT per [start, end] London wall time (GMT in November: UTC). */
function anaCalendar(events: [string, string, string][]): string {
  return ics(
    ...events.flatMap(([start, end, summary], i) => [
      'BEGIN:VEVENT',
      `UID:private-${i}@example.com`,
      'DTSTAMP:20261101T000000Z',
      `DTSTART:${start}Z`,
      `DTEND:${end}Z`,
      `SUMMARY:${summary}`,
      'END:VEVENT',
    ]),
  );
}

const EVENTS: [string, string, string][] = [
  // The rest of today, from now: nothing left today, yet the working day has not ended.
  ['20261123T120000', '20261123T170000', 'Hospital appointment'],
  // All of Tuesday.
  ['20261124T090000', '20261124T170000', 'Private day'],
];

beforeAll(async () => {
  browser = await launchBrowser();
  calendars = await startCalendarServer();
  calendars.serve('/ana.ics', { body: anaCalendar(EVENTS) });
  const catalogue = smallCatalogue();
  for (const location of catalogue.locations) {
    (location as Record<string, unknown>).policy = { min_notice_minutes: 0 };
  }
  (catalogue.staff[0] as Record<string, unknown>).busy_calendars = [calendars.url('/ana.ics')];
  t = await startTestApp({
    catalogues: [catalogue],
    now: '2026-11-23T12:00:00Z',
    limits: { requestsPerMinute: 100_000, failedAuthPerMinute: 100_000 },
  });
  expect(await refresh()).toBe(1);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('not listening on a port');
  origin = `http://127.0.0.1:${address.port}`;
}, 10 * 60_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
  await calendars?.close();
});

/** The public page at Soho with a Cut chosen (and Ana, when `stylist`), on `date`. */
async function chooseDay(page: Page, date: string, stylist?: string): Promise<void> {
  await page.goto(`${origin}/p/acme-hair?location=soho`);
  await page.getByLabel(/^Cut/).check();
  if (stylist) await page.getByLabel('Stylist').selectOption({ label: stylist });
  await page.getByLabel('Day').fill(date);
  await page.getByRole('button', { name: 'Show free times' }).click();
  await page.getByRole('heading', { name: 'Book at Org acme-hair' }).waitFor();
}

/** What the page says of a day with no free time. */
async function emptyDaySays(page: Page): Promise<string> {
  expect(await page.getByRole('radio').count()).toBe(0);
  return (await page.getByRole('status').filter({ hasText: 'No free times that day' }).textContent()) ?? '';
}

/** No word of the private calendar, nor a reason that is not the true one. */
function saysNothingUntrue(words: string): void {
  for (const untrue of [
    /working day is over/i,
    /closed/i,
    /does not work/i,
    /nobody/i,
    /time off/i,
    /hospital|private day|calendar/i,
  ]) {
    expect(words).not.toMatch(untrue);
  }
}

describe("a stylist's busy calendar on the public booking page", () => {
  it('today, taken for the rest of the working day, reads as booked, not as the working day over', async () => {
    const page = await openPhonePage(browser);
    for (const stylist of [undefined, 'Ana']) {
      await chooseDay(page, '2026-11-23', stylist);
      const words = await emptyDaySays(page);
      expect(words, stylist).toContain('Fully booked that day.');
      saysNothingUntrue(words);
    }
  }, 120_000);

  it('a whole day taken reads as fully booked, not as closed or a day the stylist does not work', async () => {
    const page = await openPhonePage(browser);
    for (const stylist of [undefined, 'Ana']) {
      await chooseDay(page, '2026-11-24', stylist);
      const words = await emptyDaySays(page);
      expect(words, stylist).toContain('Fully booked that day.');
      saysNothingUntrue(words);
    }
  }, 120_000);

  it('a time chosen that the calendar takes before it is booked is refused as not available', async () => {
    const page = await openPhonePage(browser);
    for (const [stylist, hour] of [
      [undefined, '10'],
      ['Ana', '11'],
    ] as const) {
      await chooseDay(page, '2026-11-30', stylist);
      await page.locator(`input[name="starts_at"][value="2026-11-30T${hour}:00Z"]`).check();
      await page.getByLabel('First name').fill('Rosa');
      await page.getByLabel('Last name').fill('Parks');
      await page.getByLabel('Phone').fill(`07400 2000${hour}`);
      // Meanwhile Ana's calendar takes that hour, and the refresher reads it.
      EVENTS.push([`20261130T${hour}0000`, `20261130T${hour}3000`, 'Hospital appointment']);
      calendars.serve('/ana.ics', { body: anaCalendar(EVENTS) });
      t.clock.advance({ milliseconds: REFRESH_MS });
      expect(await refresh()).toBe(1);
      await page.getByRole('button', { name: 'Confirm booking' }).click();
      await page.getByRole('heading', { name: 'Book at Org acme-hair' }).waitFor();
      const alert = (await page.getByRole('alert').textContent()) ?? '';
      expect(alert, stylist).toContain('That time has just been taken');
      saysNothingUntrue(alert);
      // What was typed is kept, and the hour is no longer offered.
      expect(await page.getByLabel('First name').inputValue()).toBe('Rosa');
      expect(await page.locator(`input[name="starts_at"][value="2026-11-30T${hour}:00Z"]`).count()).toBe(0);
    }
  }, 120_000);
});
