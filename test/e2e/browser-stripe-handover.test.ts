import { DateTime } from 'luxon';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { launchBrowser, openPhonePage } from '../helpers/browser.ts';
import { startServer } from '../helpers/cli.ts';
import { type FakeStripe, startFakeStripe } from '../helpers/fake-stripe.ts';
import { eachTestServes, prepareDatabase } from '../helpers/served-database.ts';

/**
 * PAYMENT_PROVIDER=stripe in a real browser (Debian's Chromium, phone-sized): `booking serve` with
 * STRIPE_API_BASE at the Stripe stand-in (test/helpers/fake-stripe.ts), whose hosted checkout is served
 * on its own port, so on another origin than the booking's page, as Stripe Checkout's is. The booking's
 * page hands the customer over with a form whose answer redirects to the provider, and Chromium holds
 * those redirects to the page's CSP form-action: the page must name the provider's origin there. The
 * customer pays (or saves a card) on the stand-in's page, which delivers the signed webhook and sends
 * them back, and the booking is confirmed. The small catalogue: Soho's colour needs a £20 deposit (Ana,
 * Mondays and Tuesdays), Kings Cross has Booking Protection (Bo cuts there on Thursdays).
 */
const served = eachTestServes('booking-stripe-browser-');
let browser: Browser;
let fake: FakeStripe;

beforeAll(async () => {
  browser = await launchBrowser();
}, 10 * 60_000);
afterAll(async () => {
  await browser?.close();
});
beforeEach(async () => {
  fake = await startFakeStripe();
});
afterEach(async () => {
  await fake.close();
});

interface Booked {
  reference: string;
  status: string;
  payment_url: string | null;
  booking_page_url: string;
}

/** `booking serve` paying through the stand-in, and a read-write key's REST calls to it. */
async function serveWithStripe() {
  const [key] = await prepareDatabase(served.env.DATABASE_URL!);
  served.server = await startServer(['--port', '0'], {
    ...served.env,
    PAYMENT_PROVIDER: 'stripe',
    STRIPE_SECRET_KEY: fake.secretKey,
    STRIPE_WEBHOOK_SECRET: fake.webhookSecret,
    STRIPE_API_BASE: fake.url,
  });
  const origin = served.server.url;
  // The endpoint set up in "Stripe's dashboard".
  fake.webhookUrl = `${origin}/webhooks/stripe`;
  const api = async <T>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; data: T }> => {
    const response = await fetch(`${origin}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: response.status, data: ((await response.json()) as { data: T }).data };
  };
  return { origin, api };
}

type Api = Awaited<ReturnType<typeof serveWithStripe>>['api'];

/** Books the service's first free time from a week ahead (the server runs on the real clock). */
async function book(api: Api, path: string, location: string, serviceName: string): Promise<Booked> {
  const services = (await api<{ id: string; name: string }[]>('GET', `/locations/${location}/services`)).data;
  const service = services.find((s) => s.name === serviceName)!;
  const from = DateTime.now().setZone('Europe/London').plus({ days: 7 }).toISODate();
  const { slots } = (
    await api<{ slots: { starts_at: string }[] }>(
      'GET',
      `/locations/${location}/availability?service_ids=${service.id}&date=${from}&days=14`,
    )
  ).data;
  expect(slots.length).toBeGreaterThan(0);
  const client = await api<{ id: string }>('POST', '/clients', {
    first_name: 'Card',
    last_name: 'Holder',
    email: 'card.holder@example.com',
  });
  const booked = await api<Booked>('POST', path, {
    location_slug: location,
    service_ids: [service.id],
    client_id: client.data.id,
    starts_at: slots[0]!.starts_at,
  });
  expect(booked.status).toBe(201);
  return booked.data;
}

/** What Chromium reports on the page's console (a CSP violation is reported there, as an error). */
function consoleOf(page: Page): string[] {
  const messages: string[] = [];
  page.on('console', (message) => messages.push(`${message.type()}: ${message.text()}`));
  return messages;
}

/**
 * Waits for the page the browser should land on. Chromium reports a blocked form (or a redirect of it)
 * on the console: such a report fails the test at once, naming what was blocked.
 */
async function landsOn(page: Page, reported: string[], heading: string): Promise<void> {
  try {
    await page.getByRole('heading', { name: heading }).waitFor({ timeout: 15_000 });
  } finally {
    expect(reported.filter((m) => /Content Security Policy/i.test(m))).toEqual([]);
  }
}

/** The stand-in's session opened for `reference` (by mode). */
function sessionFor(reference: string, mode: 'payment' | 'setup') {
  const session = [...fake.sessions.values()].find(
    (s) => s.mode === mode && (s.metadata as Record<string, string>).booking_reference === reference,
  );
  expect(session).toBeDefined();
  return session!;
}

describe("handing over to Stripe from the booking's page, in a browser", () => {
  it('pays a deposit on the provider page (another origin) and comes back confirmed', async () => {
    const { origin, api } = await serveWithStripe();
    const booked = await book(api, '/bookings', 'soho', 'Colour');
    expect(booked.status).toBe('pending_payment');
    const session = sessionFor(booked.reference, 'payment');
    const checkoutAt = String(session.url);
    expect(new URL(checkoutAt).origin).toBe(fake.url);
    expect(fake.url).not.toBe(origin);

    // The page that hands over names the provider's origin, and only that, beside its own.
    const headers = (await fetch(booked.booking_page_url)).headers;
    expect(headers.get('content-security-policy')).toContain(
      `form-action 'self' https://checkout.stripe.com ${fake.url};`,
    );
    expect(headers.get('x-frame-options')).toBe('DENY');

    const page = await openPhonePage(browser);
    const reported = consoleOf(page);
    // A link (a GET, which form-action does not govern) through the checkout link leads there too.
    await page.goto(`${booked.payment_url}/done`);
    await page.getByRole('heading', { name: 'Not paid' }).waitFor();
    await page.getByRole('link', { name: 'Go back to the checkout' }).click();
    await landsOn(page, reported, 'Stand-in Stripe Checkout');
    expect(page.url()).toBe(checkoutAt);

    await page.goto(booked.booking_page_url);
    await page.getByRole('heading', { name: 'Finish your booking' }).waitFor();
    await page.getByRole('button', { name: 'Pay deposit £20.00' }).click();
    // Through this server's checkout link on to the stand-in's page: the browser is there.
    await landsOn(page, reported, 'Stand-in Stripe Checkout');
    expect(page.url()).toBe(checkoutAt);
    expect(await page.textContent('body')).toContain(`Deposit for booking ${booked.reference}: 2000 GBP`);

    await page.getByRole('button', { name: 'Pay', exact: true }).click();
    await landsOn(page, reported, 'Booking confirmed');
    expect(page.url()).toBe(`${booked.payment_url}/done`);
    expect(fake.deliveries).toEqual([{ type: 'checkout.session.completed', status: 200 }]);
    expect((await api<{ status: string }>('GET', `/bookings/${booked.reference}`)).data.status).toBe(
      'confirmed',
    );
  }, 120_000);

  it("saves Booking Protection's card on the provider page and comes back to the confirmed booking", async () => {
    const { api } = await serveWithStripe();
    const booked = await book(api, '/bookings/protected-holds', 'kings-cross', 'Cut');
    expect(booked.status).toBe('pending_confirmation');

    const page = await openPhonePage(browser);
    const reported = consoleOf(page);
    await page.goto(booked.booking_page_url);
    await page.getByRole('heading', { name: 'Finish your booking' }).waitFor();
    // The card setup is opened at Stripe when the customer asks for it; the answer redirects there.
    await page.getByRole('button', { name: 'Save a card' }).click();
    await landsOn(page, reported, 'Stand-in Stripe Checkout');
    const session = sessionFor(booked.reference, 'setup');
    expect(page.url()).toBe(session.url);
    expect(new URL(page.url()).origin).toBe(fake.url);

    await page.getByRole('button', { name: 'Save card' }).click();
    await landsOn(page, reported, 'Booking confirmed');
    // Back on the booking's page, marked as back from the provider (said only while a step is left).
    expect(page.url()).toBe(`${booked.booking_page_url}?back_from_provider=1`);
    expect(fake.deliveries).toEqual([{ type: 'checkout.session.completed', status: 200 }]);
    const after = await api<Record<string, unknown>>('GET', `/bookings/${booked.reference}`);
    expect(after.data).toMatchObject({
      status: 'confirmed',
      booking_protection: { setup: { status: 'succeeded', payment_method_saved: true } },
    });
  }, 120_000);
});
