import { DateTime } from 'luxon';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCliAsync, startServer } from '../helpers/cli.ts';
import { type FakeStripe, startFakeStripe } from '../helpers/fake-stripe.ts';
import { eachTestServes, prepareDatabase } from '../helpers/served-database.ts';

/**
 * A stranger's booking on the public page of `booking serve` with PAYMENT_PROVIDER=stripe (the Stripe
 * stand-in of test/helpers/fake-stripe.ts, its hosted checkout on another origin), over real HTTP as a
 * browser sends it: the booking form, the code read from `booking outbox list`, the deposit paid on the
 * stand-in's page, whose signed webhook confirms the booking before the customer is sent back to the
 * booking's page; the confirmation then links back there too. The small catalogue: Soho's colour needs
 * a £20 deposit (Ana, Mondays and Tuesdays); the server runs on the real clock, so a week ahead.
 */
const served = eachTestServes('booking-public-stripe-');
let fake: FakeStripe;
beforeEach(async () => {
  fake = await startFakeStripe();
});
afterEach(async () => {
  await fake.close();
});

describe('the public page with Stripe deposits, end to end', () => {
  it('books, proves the contact, pays at the provider and comes back to the confirmed booking', async () => {
    const [key] = await prepareDatabase(served.env.DATABASE_URL!);
    served.server = await startServer(['--port', '0'], {
      ...served.env,
      PAYMENT_PROVIDER: 'stripe',
      STRIPE_SECRET_KEY: fake.secretKey,
      STRIPE_WEBHOOK_SECRET: fake.webhookSecret,
      STRIPE_API_BASE: fake.url,
    });
    const { url } = served.server;
    fake.webhookUrl = `${url}/webhooks/stripe`;
    const api = async <T>(path: string): Promise<T> => {
      const response = await fetch(`${url}/v1${path}`, { headers: { authorization: `Bearer ${key}` } });
      expect(response.status).toBe(200);
      return ((await response.json()) as { data: T }).data;
    };
    const form = (fields: Record<string, string> = {}) => ({
      method: 'POST',
      redirect: 'manual' as const,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url },
      body: new URLSearchParams(fields).toString(),
    });
    const services = await api<{ id: string; name: string }[]>('/locations/soho/services');
    const colour = services.find((s) => s.name === 'Colour')!;
    const from = DateTime.now().setZone('Europe/London').plus({ days: 7 }).toISODate();
    const { slots } = await api<{ slots: { starts_at: string }[] }>(
      `/locations/soho/availability?service_ids=${colour.id}&date=${from}&days=7`,
    );

    const booked = await fetch(
      `${url}/p/acme-hair/book`,
      form({
        location: 'soho',
        services: colour.id,
        starts_at: new Date(Date.parse(slots[0]!.starts_at)).toISOString(),
        first_name: 'Rosa',
        last_name: 'Parks',
        email: 'rosa@example.com',
      }),
    );
    expect(booked.status).toBe(303);
    const page = booked.headers.get('location')!;
    expect(page).toMatch(/^\/p\/manage\/[A-Za-z0-9_-]{43}$/);
    const held = await fetch(`${url}${page}`);
    const heldHtml = await held.text();
    const reference = /<strong>([A-Z]+-[0-9A-Z]{6})<\/strong>/.exec(heldHtml)![1]!;
    // Until the contact is proven there is nothing to pay yet, so nothing hands over to Stripe.
    expect(heldHtml).not.toContain('Pay deposit');
    expect(held.headers.get('content-security-policy')).toContain("form-action 'self';");
    expect(await api(`/bookings/${reference}`)).toMatchObject({ status: 'pending_confirmation' });

    let code: string | undefined;
    for (let i = 0; i < 30 && code === undefined; i++) {
      const listed = await runCliAsync(['outbox', 'list', '--org', 'acme-hair'], served.env);
      code = new RegExp(`verification_code +${reference}[^\\n]*\\n +says: .*code is (\\d{6})`).exec(
        listed.stdout,
      )?.[1];
      if (code === undefined) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(code).toBeDefined();
    const verified = await fetch(`${url}${page}/verify`, form({ code: code! }));
    expect(verified.status).toBe(303);
    expect(verified.headers.get('location')).toBe(page);

    // Proven: the deposit is the next step, and the page's CSP names the provider its form leads to.
    const toPay = await fetch(`${url}${page}`);
    expect(await toPay.text()).toContain('Pay deposit £20.00');
    expect(toPay.headers.get('content-security-policy')).toContain(
      `form-action 'self' https://checkout.stripe.com ${fake.url};`,
    );
    const pay = await fetch(`${url}${page}/pay`, form());
    expect(pay.status).toBe(303);
    const checkoutLink = await fetch(pay.headers.get('location')!, { redirect: 'manual' });
    expect(checkoutLink.status).toBe(303);
    const hosted = checkoutLink.headers.get('location')!;
    expect(new URL(hosted).origin).toBe(fake.url);

    // Paying on the provider's page: its webhook first, then the customer back on the booking's page.
    const paid = await fetch(hosted, { method: 'POST', redirect: 'manual' });
    expect(paid.status).toBe(303);
    expect(fake.deliveries).toEqual([{ type: 'checkout.session.completed', status: 200 }]);
    const back = new URL(paid.headers.get('location')!);
    expect(`${back.origin}${back.pathname}`).toBe(`${url}${page}`);
    expect(await (await fetch(back)).text()).toContain('Booking confirmed');
    expect(await api(`/bookings/${reference}`)).toMatchObject({
      status: 'confirmed',
      deposit_status: 'paid',
    });

    // The confirmation the customer is sent leads back to the same page.
    let confirmation: string | undefined;
    for (let i = 0; i < 30 && confirmation === undefined; i++) {
      const listed = await runCliAsync(['outbox', 'list', '--org', 'acme-hair'], served.env);
      confirmation = new RegExp(`logged +email +confirmed +${reference}[^\\n]*\\n +says: (.*)`).exec(
        listed.stdout,
      )?.[1];
      if (confirmation === undefined) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(confirmation).toContain(`See, move or cancel it: ${url}${page} `);
  }, 120_000);
});
