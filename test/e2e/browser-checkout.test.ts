import { DateTime } from 'luxon';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, openPhonePage } from '../helpers/browser.ts';
import { startServer } from '../helpers/cli.ts';
import { eachTestServes } from '../helpers/served-database.ts';

/**
 * A customer pays a deposit in a real browser (Debian's Chromium, phone-sized), on the checkout of the
 * local test provider that `booking serve --demo` chooses: the page says it takes no money, its button
 * pays, the confirmation follows, and the API then reads the booking as confirmed.
 */
const served = eachTestServes('booking-browser-');
let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
}, 10 * 60_000);

afterAll(async () => {
  await browser?.close();
});

describe('the deposit checkout in a browser', () => {
  it('pays a deposit and confirms the booking', async () => {
    served.server = await startServer(['--demo', '--port', '0'], served.env);
    const server = served.server;
    const key = /(bk_[0-9A-Za-z]{40})/.exec(server.stdout())?.[1];
    expect(key).toBeDefined();
    // Beside the key, where customers book.
    expect(server.stdout()).toContain(`Public booking page: ${server.url}/p/northside-hair`);
    const api = async <T = { id: string; reference: string; status: string; payment_url: string }>(
      url: string,
      init: RequestInit = {},
    ) => {
      const response = await fetch(`${server.url}/v1${url}`, {
        ...init,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      });
      return { status: response.status, body: (await response.json()) as { data: T } };
    };
    const services = (await api<{ id: string; name: string }[]>('/locations/camden/services')).body.data;
    const colour = services.find((service) => service.name === 'Full colour')!;
    const from = DateTime.now().setZone('Europe/London').plus({ days: 7 }).toISODate();
    const availability = `/locations/camden/availability?service_ids=${colour.id}&date=${from}&days=7`;
    const { slots } = (await api<{ slots: { starts_at: string }[] }>(availability)).body.data;
    const client = await api('/clients', {
      method: 'POST',
      body: JSON.stringify({ first_name: 'Dee', last_name: 'Posit', email: 'dee@example.com' }),
    });
    const booked = await api('/bookings', {
      method: 'POST',
      body: JSON.stringify({
        location_slug: 'camden',
        service_ids: [colour.id],
        client_id: client.body.data.id,
        starts_at: slots[0]!.starts_at,
      }),
    });
    expect(booked.status).toBe(201);
    expect(booked.body.data.status).toBe('pending_payment');

    const page = await openPhonePage(browser);
    await page.goto(booked.body.data.payment_url);
    await expect(page.getByRole('heading', { name: 'Pay your deposit' }).isVisible()).resolves.toBe(true);
    expect(await page.textContent('body')).toContain('takes no money');
    // Nothing wider than the phone's screen: no sideways scrolling.
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    await page.getByRole('button', { name: /^Pay / }).click();
    await page.getByRole('heading', { name: 'Booking confirmed' }).waitFor();

    const after = await api(`/bookings/${booked.body.data.reference}`);
    expect(after.body.data.status).toBe('confirmed');
  }, 120_000);
});
