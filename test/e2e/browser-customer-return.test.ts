import { createRequire } from 'node:module';
import { DateTime } from 'luxon';
import type { Browser, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/app/staff-account-service.ts';
import { launchBrowser, saveScreenshot } from '../helpers/browser.ts';
import { type ListeningApp, startListeningApp } from '../helpers/mcp-servers.ts';
import { insertProtectedIslingtonCut } from '../helpers/protected-booking.ts';
import { deliver, deliveredCode } from '../helpers/public-booking.ts';

/**
 * Issue 45 in a real browser (Debian's Chromium), at a phone's size (390 x 844) and a desktop's
 * (1366 x 900), against the demo catalogue on a real port: the week's days and the grouped times, a
 * stylist chosen, a refusal that keeps what was typed in plain words, Back and Confirm again landing
 * on the same booking, the link back to the booking after paying and from the checkout, a late move
 * said at once, and in the console a waiver with its reason and diary blocks named by what they show.
 * Public pages stay small (2-10 KB) and script-free.
 */
const require = createRequire(import.meta.url);
const ORG = 'northside-hair';
const PASSWORD = 'front desk password';
let browser: Browser;
let server: ListeningApp;

beforeAll(async () => {
  browser = await launchBrowser();
  server = await startListeningApp();
  await createUser(
    server.t.database.db,
    { organisationSlug: ORG, email: 'desk@northside.test', role: 'staff', password: PASSWORD },
    server.t.clock.nowMs(),
  );
}, 10 * 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.t.close();
});

const SIZES = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'desktop', width: 1366, height: 900 },
] as const;

/** The HTML each page was served as (its last document response), by page. */
const served = new WeakMap<Page, Response>();

async function open(size: { width: number; height: number }): Promise<Page> {
  // bypassCSP: only so that the test can run axe in the page; the page itself runs no script.
  const context = await browser.newContext({ viewport: size, deviceScaleFactor: 1, bypassCSP: true });
  const page = await context.newPage();
  page.on('response', (response) => {
    if (response.request().resourceType() === 'document') served.set(page, response);
  });
  return page;
}

async function api<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(`${server.origin}/v1${path}`, {
    ...init,
    headers: { authorization: `Bearer ${server.t.keys.readWrite}`, 'content-type': 'application/json' },
  });
  return ((await response.json()) as { data: T }).data;
}

/** axe-core's rules (WCAG 2.1 A and AA, and its best practices) find nothing on the page. */
async function noAxeViolations(page: Page): Promise<void> {
  await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
  const violations = (await page.evaluate(
    "axe.run(document).then((r) => r.violations.map((v) => v.id + ': ' + v.nodes.map((n) => n.target.join(' ')).join(', ')))",
  )) as string[];
  expect(violations).toEqual([]);
}

/**
 * The page is small, runs no script and has no sideways scrolling. Its size is counted as a salon's
 * customers get it: without the test-mode notice the local payment provider adds to every page.
 */
async function lightAndFitting(page: Page, width: number): Promise<void> {
  const html = (await served.get(page)!.body()).toString('utf8');
  expect(html).not.toContain('<script');
  const bytes = Buffer.byteLength(html.replace(/<p class="test-mode"[\s\S]*?<\/p>/, ''));
  expect(bytes).toBeGreaterThan(2_000);
  expect(bytes).toBeLessThan(10_240);
  expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);
  await noAxeViolations(page);
}

let phoneSeq = 0;
/** A phone number of its own per booking (the caps count bookings per phone). */
const nextPhone = () => `07400 2${String(++phoneSeq).padStart(5, '0')}`;

/** Camden, a cut with Ben Carter, from the public page, on the first of his days that has times. */
async function chooseBensDay(page: Page): Promise<void> {
  await page.goto(`${server.origin}/p/${ORG}`);
  await page.getByLabel('Location').selectOption('camden');
  await page.getByRole('button', { name: 'Choose location' }).click();
  await page.getByLabel(/^Cut & blow-dry/).check();
  await page.getByLabel('Stylist').selectOption({ label: 'Ben Carter' });
  await page.getByRole('button', { name: 'Show free times' }).click();
  const strip = page.getByRole('navigation', { name: 'Days' });
  await strip.waitFor();
  // The first day with times from the week after this one (Ben works three days a week).
  await strip.getByRole('button', { name: 'Later days' }).click();
  const open = page.locator('nav.strip li button:not(.none)').first();
  await open.click();
  await page
    .getByRole('group', { name: 'Morning' })
    .or(page.getByRole('group', { name: 'Afternoon' }))
    .first()
    .waitFor();
}

describe.each(SIZES)('the customer finds their way, on a $name', (size) => {
  it('books with the day strip and a stylist; a refusal keeps what was typed; Back and Confirm land on the same booking', async () => {
    const page = await open(size);
    await chooseBensDay(page);
    const body = (await page.textContent('main')) ?? '';
    expect(body).toContain('Times are London time');
    expect(body).toContain('Choose a time with Ben Carter:');
    expect(await page.locator('nav.strip button[aria-current="date"]').count()).toBe(1);
    // Each time is labelled with its time alone.
    const first = page.getByRole('radio').first();
    expect(await page.locator('fieldset.times label').first().textContent()).toMatch(/^\d{1,2}:\d{2}/);
    await lightAndFitting(page, size.width);
    await saveScreenshot(page, `public-times-${size.name}`);

    await first.check();
    await page.getByLabel('First name').fill('Rosa');
    await page.getByLabel('Last name').fill('Parks');
    await page.getByLabel('Phone').fill('12');
    await page.getByRole('button', { name: 'Confirm booking' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('That phone number does not look right.');
    expect(await page.content()).not.toContain('E.164');
    expect(await page.getByLabel('First name').inputValue()).toBe('Rosa');
    expect(await page.getByLabel('Last name').inputValue()).toBe('Parks');
    expect(await page.getByRole('radio', { checked: true }).count()).toBe(1);
    await lightAndFitting(page, size.width);
    if (size.name === 'phone') await saveScreenshot(page, 'public-refusal-phone');

    // Corrected on the same form, it books.
    await page.getByLabel('Phone').fill(nextPhone());
    await page.getByRole('button', { name: 'Confirm booking' }).click();
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    expect(page.url()).toMatch(/\/p\/manage\/[A-Za-z0-9_-]{43}$/);

    // Another visit: booked, then Back to the form as it was and Confirm again: the same booking.
    const again = await open(size);
    await chooseBensDay(again);
    await again.getByRole('radio').first().check();
    const phone = nextPhone();
    const details = async () => {
      await again.getByLabel('First name').fill('Rosa');
      await again.getByLabel('Last name').fill('Parks');
      await again.getByLabel('Phone').fill(phone);
    };
    await details();
    const key = await again.locator('input[name="form_key"]').inputValue();
    await again.getByRole('button', { name: 'Confirm booking' }).click();
    await again.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    const bookingUrl = again.url();
    await again.goBack();
    await again.getByRole('button', { name: 'Confirm booking' }).waitFor();
    // The very form that booked (kept for Back), whatever the browser restored of its fields.
    expect(await again.locator('input[name="form_key"]').inputValue()).toBe(key);
    if (!(await again.getByRole('radio', { checked: true }).count()))
      await again.getByRole('radio').first().check();
    await details();
    await again.getByRole('button', { name: 'Confirm booking' }).click();
    await again.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    expect(again.url()).toBe(bookingUrl);
    await again.context().close();
    await page.goto(bookingUrl);
    const reference = /NHC-[0-9A-Z]{6}/.exec((await page.textContent('body')) ?? '')![0];
    const { code } = await deliveredCode(server.t, reference);
    await page.getByLabel('Code').fill(code);
    await page.getByRole('button', { name: 'Confirm booking' }).click();
    await page.getByRole('heading', { name: 'Booking confirmed' }).waitFor();
    expect(await page.textContent('main')).toContain('Ben Carter');
    const e164 = `+44${phone.replace(/\s/g, '').slice(1)}`;
    const rows = await server.t.database.db
      .selectFrom('bookings')
      .innerJoin('clients', 'clients.id', 'bookings.client_id')
      .select('bookings.reference')
      .where('clients.phone', '=', e164)
      .execute();
    expect(rows).toHaveLength(1);
    // The confirmation the customer is sent leads back to this page.
    await deliver(server.t);
    const confirmation = await server.t.database.db
      .selectFrom('outbox')
      .select('body')
      .where('recipient', '=', e164)
      .where('kind', '=', 'confirmed')
      .executeTakeFirstOrThrow();
    expect(confirmation.body).toContain(`/p/manage/${bookingUrl.split('/').pop()}`);
  }, 180_000);

  it('after paying, and from the checkout, the way back to the booking', async () => {
    const page = await open(size);
    const colour = (await api<{ id: string; name: string }[]>('/locations/camden/services')).find(
      (s) => s.name === 'Full colour',
    )!;
    const from = DateTime.now().setZone('Europe/London').plus({ days: 7 }).toISODate()!;
    const { slots } = await api<{ slots: { starts_at: string }[] }>(
      `/locations/camden/availability?service_ids=${colour.id}&date=${from}&days=14`,
    );
    const jo = await api<{ id: string }>(`/clients?phone=${encodeURIComponent('+447911123456')}`);
    const booked = await api<{ payment_url: string; booking_page_url: string }>('/bookings', {
      method: 'POST',
      body: JSON.stringify({
        location_slug: 'camden',
        service_ids: [colour.id],
        client_id: jo.id,
        starts_at: slots[phoneSeq % slots.length]!.starts_at,
      }),
    });
    await page.goto(booked.payment_url);
    await page.getByRole('heading', { name: 'Pay your deposit' }).waitFor();
    expect(await page.textContent('main')).toContain('Going back keeps the time held for you until');
    await page.getByRole('button', { name: 'Go back without paying' }).click();
    await page.waitForURL(booked.booking_page_url);
    await page.getByRole('heading', { name: 'Finish your booking' }).waitFor();
    await page.getByRole('button', { name: /^Pay deposit/ }).click();
    await page.getByRole('button', { name: /^Pay / }).click();
    await page.getByRole('heading', { name: 'Booking confirmed' }).waitFor();
    const back = page.getByRole('link', { name: 'See, move or cancel your booking' });
    expect(new URL((await back.getAttribute('href'))!, server.origin).href).toBe(booked.booking_page_url);
    await lightAndFitting(page, size.width);
    if (size.name === 'phone') await saveScreenshot(page, 'paid-phone');

    // On to the booking, and moving it: the same day strip, a stylist to choose, grouped times.
    await back.click();
    await page.getByRole('link', { name: 'Change the time' }).click();
    await page.getByRole('heading', { name: 'Move your booking' }).waitFor();
    await page.getByLabel('Stylist').selectOption({ label: 'Amara Okafor' });
    await page.getByRole('button', { name: 'Show times' }).click();
    await page.getByRole('navigation', { name: 'Days' }).getByRole('button', { name: 'Next day' }).click();
    await page.getByRole('heading', { name: 'Move your booking' }).waitFor();
    expect(await page.getByLabel('Stylist').inputValue()).not.toBe('');
    expect(await page.textContent('main')).toContain('Times are London time');
    await lightAndFitting(page, size.width);
    // A day with no times chosen (Amara works weekdays only, so the week has some): still legible.
    await page.locator('nav.strip li button.none').first().click();
    await page.locator('nav.strip button.none[aria-current="date"]').waitFor();
    await lightAndFitting(page, size.width);
  }, 120_000);

  it('a late move the salon forbids is said at once, with what can still be done', async () => {
    const page = await open(size);
    const cut = (await api<{ id: string; name: string }[]>('/locations/camden/services')).find(
      (s) => s.name === 'Cut & blow-dry',
    )!;
    const clock = server.t.clock;
    const saved = clock.nowMs();
    const today = DateTime.fromMillis(saved, { zone: 'Europe/London' }).toISODate()!;
    const { slots } = await api<{ slots: { starts_at: string }[] }>(
      `/locations/camden/availability?service_ids=${cut.id}&date=${today}&days=7`,
    );
    const startsAt = slots[slots.length - 1]!.starts_at;
    // Three hours before that time: inside Camden's 24-hour window, where late moves are forbidden.
    clock.set(new Date(Date.parse(startsAt) - 3 * 3_600_000).toISOString());
    try {
      const jo = await api<{ id: string }>(`/clients?phone=${encodeURIComponent('+447911123456')}`);
      const booked = await api<{ booking_page_url: string }>('/bookings', {
        method: 'POST',
        body: JSON.stringify({
          location_slug: 'camden',
          service_ids: [cut.id],
          client_id: jo.id,
          starts_at: startsAt,
        }),
      });
      await page.goto(booked.booking_page_url);
      await page.getByRole('heading', { name: 'Booking confirmed' }).waitFor();
      expect(await page.getByRole('link', { name: 'Change the time' }).count()).toBe(0);
      await page.goto(`${booked.booking_page_url}/reschedule`);
      expect(await page.getByRole('alert').textContent()).toContain('not allowed here');
      expect(await page.getByRole('radio').count()).toBe(0);
      await page.getByRole('link', { name: 'Keep my booking' }).waitFor();
      await page.getByRole('link', { name: 'Cancel the booking' }).waitFor();
      await lightAndFitting(page, size.width);
      if (size.name === 'phone') await saveScreenshot(page, 'late-move-phone');
    } finally {
      clock.set(new Date(saved).toISOString());
    }
  }, 120_000);
});

describe('the console, on a desktop and a phone', () => {
  it('names diary blocks by what they show, and waives a fee only with a reason', async () => {
    for (const size of SIZES) {
      const page = await open(size);
      await page.goto(`${server.origin}/console`);
      await page.getByLabel('Organisation').fill(ORG);
      await page.getByLabel('E-mail').fill('desk@northside.test');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(/\/console\/diary/);
      const booked = await server.t.database.db
        .selectFrom('bookings')
        .innerJoin('locations', 'locations.id', 'bookings.location_id')
        .select(['bookings.reference', 'bookings.starts_at', 'locations.slug'])
        .where('bookings.status', '=', 'confirmed')
        .orderBy('bookings.starts_at')
        .executeTakeFirstOrThrow();
      const day = DateTime.fromMillis(Number(booked.starts_at), { zone: 'Europe/London' }).toISODate()!;
      await page.goto(`${server.origin}/console/diary?location=${booked.slug}&date=${day}`);
      const block = page.locator(`[data-reference="${booked.reference}"]`);
      await block.waitFor();
      expect(await block.getAttribute('aria-label')).toBeNull();
      const visible = (await block.innerText()).replace(/\s+/g, ' ').trim();
      expect(visible).toMatch(/^\d{2}:\d{2}–\d{2}:\d{2} /);
      expect(await page.getByRole('link', { name: visible, exact: true }).count()).toBe(1);
      await noAxeViolations(page);

      // A late cancellation at Islington (£62 there, 50% late): its £31 fee, waived with a reason.
      const reference = await insertProtectedIslingtonCut(server.t.database.db, Date.now() + 3 * 3_600_000);
      await page.goto(`${server.origin}/console/bookings/${reference}`);
      expect(await page.textContent('main')).toContain('Cut & blow-dry – £62.00');
      expect(await page.getByRole('button', { name: 'Complete' }).count()).toBe(0);
      await page.getByRole('link', { name: 'Cancel…' }).click();
      await page.getByRole('button', { name: 'Cancel the booking' }).click();
      await page.getByRole('link', { name: 'Waive late-cancellation fee…' }).click();
      expect(await page.textContent('main')).toContain('will not be charged');
      await page.getByRole('button', { name: 'Waive the £31.00 fee' }).click();
      // The reason is required: the browser keeps the form until it is given.
      expect(page.url()).toMatch(/\/waive\?fee=late_cancellation$/);
      await noAxeViolations(page);
      await page.getByLabel('Reason (kept in the event log)').fill('Hospital letter seen');
      if (size.name === 'desktop') await saveScreenshot(page, 'console-waive-desktop');
      await page.getByRole('button', { name: 'Waive the £31.00 fee' }).click();
      await page.getByText('Fee waived; the reason is in the event log.').waitFor();
      expect(await page.textContent('main')).toContain(
        'Late-cancellation fee waived (£31.00): Hospital letter seen',
      );
      await page.context().close();
    }
  }, 120_000);
});
