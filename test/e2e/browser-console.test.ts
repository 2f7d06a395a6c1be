import { DateTime } from 'luxon';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { createUser } from '../../src/app/staff-account-service.ts';
import { insertBooking } from '../../src/data/booking-repository.ts';
import { bookingRow } from '../helpers/booking-row.ts';
import { launchBrowser, saveScreenshot } from '../helpers/browser.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { connectStreamableHttp, type ListeningApp, startListeningApp } from '../helpers/mcp-servers.ts';

/**
 * The front desk runs its day in a real browser (Debian's Chromium), on the demo salon served on a real
 * port: the desk signs in, sees a booking the phone agent makes over MCP appear without a reload,
 * marks a no-show and charges its fee, issues and revokes an API key; a staff account cannot manage
 * keys; a form without the session's token is refused; an idle session ends; another organisation's
 * desk sees none of it. With UPDATE_DOCS=1 it saves the README's screenshots.
 */
const PASSWORD = 'front desk password';
let browser: Browser;
let served: ListeningApp;
let agentKey: string;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  browser = await launchBrowser();
  served = await startListeningApp();
  const { db } = served.t.database;
  await importCatalogue(db, smallCatalogue(), served.t.clock.nowMs());
  const now = served.t.clock.nowMs();
  for (const [org, email, role] of [
    ['northside-hair', 'owner@northside.test', 'owner'],
    ['northside-hair', 'desk@northside.test', 'staff'],
    ['acme-hair', 'owner@acme.test', 'owner'],
  ] as const) {
    await createUser(db, { organisationSlug: org, email, role, password: PASSWORD }, now);
  }
  agentKey = await served.t.keyFor('northside-hair');
}, 10 * 60_000);

afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await served?.t.close();
});

/** A signed-in page in a fresh browser context (its own cookies), tablet-sized unless told. */
async function signedIn(org: string, email: string, viewport = { width: 1024, height: 768 }): Promise<Page> {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1 });
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(`${served.origin}/console`);
  await page.getByLabel('Organisation').fill(org);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/console\/diary/);
  return page;
}

const tomorrow = () =>
  DateTime.fromMillis(served.t.clock.nowMs(), { zone: 'Europe/London' }).plus({ days: 1 }).toISODate()!;

describe('the staff console in a browser', () => {
  it('shows a booking made over MCP without a reload', async () => {
    const agent = await connectStreamableHttp(served.origin, agentKey);
    try {
      // The first free cut from tomorrow: Camden has nobody on Sundays and closes at Christmas.
      const found = await agent.call('find_slots', {
        location: 'camden',
        services: 'cut',
        date: tomorrow(),
        days: 14,
      });
      const startsAt = found.slots[0].starts_at as string;
      const day = DateTime.fromISO(startsAt, { zone: 'Europe/London' }).toISODate()!;
      const page = await signedIn('northside-hair', 'owner@northside.test');
      await page.goto(`${served.origin}/console/diary?location=camden&date=${day}`);
      await page.getByRole('heading', { name: /^Northside Camden/ }).waitFor();
      await page.evaluate('window.__notReloaded = true');

      const booked = await agent.call('book', {
        location: 'camden',
        services: 'cut',
        starts_at: startsAt,
        client: { first_name: 'Ria', last_name: 'Phone', phone: '07911 123499' },
      });
      const reference = booked.booking.reference as string;
      const block = page.locator(`[data-reference="${reference}"]`);
      await block.waitFor({ timeout: 20_000 });
      expect(await page.evaluate('window.__notReloaded')).toBe(true);
      // Named by what it shows (no aria-label saying something else), then its stylist.
      expect(await block.getAttribute('aria-label')).toBeNull();
      expect((await block.innerText()).replace(/\s+/g, ' ')).toMatch(
        /Ria Phone Cut & blow-dry Confirmed · phone agent ?, with [^,]+$/,
      );
      await saveScreenshot(page, 'console-diary');
    } finally {
      await agent.close();
    }
  }, 120_000);

  it('keeps the keyboard on the booking it was on when the diary updates itself', async () => {
    const agent = await connectStreamableHttp(served.origin, agentKey);
    try {
      const found = await agent.call('find_slots', {
        location: 'camden',
        services: 'cut',
        date: DateTime.fromISO(tomorrow()).plus({ days: 7 }).toISODate(),
        days: 14,
      });
      const slots = found.slots as { starts_at: string; ends_at: string }[];
      const first = slots[0];
      const day = DateTime.fromISO(first!.starts_at, { zone: 'Europe/London' }).toISODate()!;
      const book = async (startsAt: string, phone: string) => {
        const answer = await agent.call('book', {
          location: 'camden',
          services: 'cut',
          starts_at: startsAt,
          client: { first_name: 'Kay', last_name: 'Board', phone },
        });
        return answer.booking.reference as string;
      };
      const focused = await book(first!.starts_at, '07911 123481');
      // A later time of that day still free once the first is booked (its stylist's buffer after it
      // included: on a day only one stylist works, the first's end is not free yet).
      const left = (
        await agent.call('find_slots', { location: 'camden', services: 'cut', date: day, days: 1 })
      ).slots as { starts_at: string; ends_at: string }[];
      const second = left.find((s) => s.starts_at >= first!.ends_at);
      expect(second).toBeDefined();
      const page = await signedIn('northside-hair', 'owner@northside.test');
      await page.goto(`${served.origin}/console/diary?location=camden&date=${day}`);
      await page.locator(`[data-reference="${focused}"]`).focus();

      const later = await book(second!.starts_at, '07911 123482');
      await page.locator(`[data-reference="${later}"]`).waitFor({ timeout: 20_000 });
      expect(await page.evaluate('document.activeElement?.getAttribute("data-reference")')).toBe(focused);
    } finally {
      await agent.close();
    }
  }, 120_000);

  it('moves only the current-time line on its minute refresh, not redrawing (and re-announcing) the diary', async () => {
    // The diary's hours widen to take in the current time's hour (after 20:00, before 08:00): two
    // minutes across an hour would rightly redraw it. They stay inside one hour here.
    const minute = DateTime.fromMillis(served.t.clock.nowMs(), { zone: 'Europe/London' }).minute;
    if (minute >= 55) served.t.clock.advance({ minutes: 65 - minute });
    const page = await signedIn('northside-hair', 'owner@northside.test');
    await page.clock.install();
    // Today's diary: the one with the current-time line.
    const today = DateTime.fromMillis(served.t.clock.nowMs(), { zone: 'Europe/London' }).toISODate()!;
    const todayUrl = `${served.origin}/console/diary?location=camden&date=${today}`;
    await page.goto(todayUrl);
    await page.evaluate('window.__firstColumn = document.querySelector("#diary section.col")');
    const nowLabel = () => page.locator('#diary .now').first().getAttribute('aria-label');
    const before = await nowLabel();
    served.t.clock.advance({ minutes: 2 });
    const refetched = page.waitForResponse(
      (r) => r.url() === todayUrl && r.request().headers()['x-console-background'] === '1',
    );
    await page.clock.fastForward(61_000);
    await refetched;
    await expect.poll(nowLabel).not.toBe(before);
    // The same elements as before: nothing but the line changed, so nothing else was replaced.
    expect(await page.evaluate('window.__firstColumn.isConnected')).toBe(true);
  }, 120_000);

  it('marks a no-show and charges the fee', async () => {
    const { db } = served.t.database;
    const org = await db
      .selectFrom('organisations')
      .select('id')
      .where('slug', '=', 'northside-hair')
      .executeTakeFirstOrThrow();
    const idOf = async (
      table: 'locations' | 'staff' | 'services' | 'clients',
      column: 'slug' | 'ref',
      value: string,
    ) =>
      (
        await db
          .selectFrom(table)
          .select('id')
          .where('organisation_id', '=', org.id)
          .where(column as never, '=', value as never)
          .executeTakeFirstOrThrow()
      ).id;
    // Two hours ago at Islington, which has Booking Protection (a saved card): v1 cannot make it.
    const startsAt = served.t.clock.nowMs() - 2 * 3_600_000;
    const row = bookingRow(
      {
        organisationId: org.id,
        locationId: await idOf('locations', 'slug', 'islington'),
        staffId: await idOf('staff', 'ref', 'chloe'),
        clientId: await idOf('clients', 'ref', 'jo'),
        startsAt,
        endsAt: startsAt + 3_600_000,
      },
      {
        reference: 'NHC-NSHW22',
        total_price_minor: 5500,
        protection_applies: 1,
        late_cancellation_fee_percentage: 50,
        no_show_fee_percentage: 100,
        protection_setup_status: 'succeeded',
        payment_method_saved: 1,
        source: 'staff',
      },
    );
    const cut = await idOf('services', 'ref', 'cut');
    await insertBooking(db, row, [
      {
        organisation_id: org.id,
        booking_id: row.id,
        position: 0,
        service_id: cut,
        starts_at: startsAt,
        ends_at: startsAt + 3_600_000,
        duration_minutes: 60,
        buffer_after_minutes: 0,
        price_minor: 5500,
        deposit_minor: null,
      },
    ]);

    const page = await signedIn('northside-hair', 'desk@northside.test');
    await page.goto(`${served.origin}/console/bookings/${row.reference}`);
    await page.getByRole('button', { name: 'Mark no-show' }).click();
    await page.getByRole('heading', { name: `Booking ${row.reference}: No-show` }).waitFor();
    await page.getByRole('button', { name: 'Charge no-show fee (£55.00)' }).click();
    await page.getByRole('status').filter({ hasText: 'Fee processed.' }).waitFor();
    expect(await page.locator('table').first().textContent()).toContain('charged');
    await saveScreenshot(page, 'console-booking');
    const fee = await db
      .selectFrom('booking_fees')
      .select(['status', 'charge_amount_minor'])
      .where('booking_id', '=', row.id)
      .executeTakeFirstOrThrow();
    expect(fee).toEqual({ status: 'charged', charge_amount_minor: 5500 });
  }, 120_000);

  it('issues a key shown once and revokes it; a staff account cannot manage keys', async () => {
    const page = await signedIn('northside-hair', 'owner@northside.test');
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Label').fill('Booking widget');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByLabel('New API key').textContent())!.trim();
    expect(key).toMatch(/^bk_[0-9A-Za-z]{40}$/);
    const api = (k: string) =>
      fetch(`${served.origin}/v1/locations`, { headers: { authorization: `Bearer ${k}` } });
    expect((await api(key)).status).toBe(200);
    await page.goto(`${served.origin}/console/keys`);
    expect(await page.textContent('body')).not.toContain(key);
    // The list asks first, on a page of its own.
    await page.getByRole('link', { name: 'Revoke… Booking widget' }).click();
    await page.getByRole('heading', { name: 'Revoke the key "Booking widget"?' }).waitFor();
    expect((await api(key)).status).toBe(200);
    await page.getByRole('button', { name: 'Revoke the key' }).click();
    await page
      .getByText(/^Revoked /)
      .first()
      .waitFor();
    expect((await api(key)).status).toBe(401);

    const staff = await signedIn('northside-hair', 'desk@northside.test');
    expect(await staff.getByRole('link', { name: 'API keys' }).count()).toBe(0);
    const refused = await staff.goto(`${served.origin}/console/keys`);
    expect(refused?.status()).toBe(403);
    await staff.getByRole('heading', { name: 'Not allowed' }).waitFor();
  }, 120_000);

  it('refuses a form without its token, and ends an idle session', async () => {
    const page = await signedIn('northside-hair', 'owner@northside.test');
    // Same origin, the session's cookie, but no _csrf field: what a forged form would send.
    const status = await page.evaluate(async () => {
      const response = await fetch('/console/keys', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'label=forged&scope=read_write',
      });
      return response.status;
    });
    expect(status).toBe(403);
    served.t.clock.advance({ minutes: 31 });
    await page.reload();
    await page.getByText('Your session has ended. Please sign in again.').waitFor();
    expect(page.url()).toContain('/console/sign-in');
  }, 120_000);

  it('takes a diary left open to the sign-in page, saying why, once the session has ended', async () => {
    const page = await signedIn('northside-hair', 'owner@northside.test');
    await page.goto(`${served.origin}/console/diary`);
    // Nobody touches it: its own polling does not keep the session alive.
    served.t.clock.advance({ minutes: 31 });
    await page.getByText('Your session has ended. Please sign in again.').waitFor({ timeout: 15_000 });
    expect(new URL(page.url()).searchParams.get('next')).toBe('/console/diary');
  }, 120_000);

  it('fits a phone on the keys page, its list of keys scrolled within its own box', async () => {
    const page = await signedIn('northside-hair', 'owner@northside.test', { width: 360, height: 740 });
    await page.goto(`${served.origin}/console/keys`);
    await page
      .getByRole('link', { name: /^Revoke…/ })
      .first()
      .waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
  }, 120_000);

  it("shows another organisation's desk none of it, and fits a phone", async () => {
    const page = await signedIn('acme-hair', 'owner@acme.test', { width: 360, height: 740 });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    await saveScreenshot(page, 'console-phone');
    const response = await page.goto(`${served.origin}/console/bookings/NHC-NSHW22`);
    expect(response?.status()).toBe(404);
    await page.goto(`${served.origin}/console/clients?q=Ria`);
    expect(await page.textContent('main')).toContain('No client matches.');
    await page.goto(`${served.origin}/console/diary?location=camden`);
    expect(await page.textContent('main')).not.toContain('Ria Phone');
  }, 120_000);
});
