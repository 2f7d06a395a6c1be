import { spawn } from 'node:child_process';
import path from 'node:path';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { sendHttp } from '../helpers/abuse-campaign.ts';
import { REPO_ROOT, startServer } from '../helpers/cli.ts';
import { eachTestServes, prepareDatabase } from '../helpers/served-database.ts';

/**
 * Deposits and payment links of the real `booking serve`: the built-in checkout (which takes no money)
 * only when chosen, PAYMENT_PROVIDER=local or `--demo`; none configured refuses deposit bookings; links
 * from PUBLIC_BASE_URL, never from the Host header. The server runs on the real clock, so the colour
 * (a £20 deposit at Soho, Ana on Mondays and Tuesdays) is booked a week or two ahead.
 */
const served = eachTestServes('booking-payments-');

interface Booked {
  status: number;
  body: { data?: { status: string; payment_url?: string | null }; error?: { code: string } };
}

/** Books the first colour slot at Soho from a week ahead, as `host` (raw HTTP, so any Host is sent). */
async function bookColour(key: string, host?: string): Promise<Booked> {
  const api = async (method: string, url: string, body?: unknown) => {
    const response = await sendHttp(served.server!.url, {
      method,
      path: `/v1${url}`,
      headers: {
        authorization: `Bearer ${key}`,
        ...(host !== undefined && { host }),
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: JSON.parse(response.body.toString()) };
  };
  const services = (await api('GET', '/locations/soho/services')).body.data as { id: string; name: string }[];
  const colour = services.find((service) => service.name === 'Colour')!;
  const from = DateTime.now().setZone('Europe/London').plus({ days: 7 }).toISODate();
  const slots = (
    await api('GET', `/locations/soho/availability?service_ids=${colour.id}&date=${from}&days=7`)
  ).body.data.slots as { starts_at: string }[];
  expect(slots.length).toBeGreaterThan(0);
  const client = await api('POST', '/clients', {
    first_name: 'Pay',
    last_name: 'Er',
    email: 'payer@example.com',
  });
  return api('POST', '/bookings', {
    location_slug: 'soho',
    service_ids: [colour.id],
    client_id: client.body.data.id,
    starts_at: slots[0]!.starts_at,
  });
}

/** `booking serve` that is expected to refuse to start: its exit status and stderr (killed after 60 s). */
function serveRefusing(extraEnv: Record<string, string>): Promise<{ status: number | null; stderr: string }> {
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/booking.js'), 'serve', '--port', '0'], {
    cwd: REPO_ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...served.env, ...extraEnv },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  // Several start at once on a busy machine: each may take well over ten seconds to load.
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  // 'close', not 'exit': the exit can be seen before the last of stderr has been read.
  return new Promise((resolve) =>
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stderr });
    }),
  );
}

describe('booking serve without PAYMENT_PROVIDER', () => {
  it('refuses a booking that needs a deposit and serves no checkout', async () => {
    const [key] = await prepareDatabase(served.env.DATABASE_URL!);
    served.server = await startServer(['--port', '0'], served.env);
    const server = served.server;
    const refused = await bookColour(key!);
    expect(refused.status).toBe(503);
    expect(refused.body.error?.code).toBe('payments_unavailable');
    const checkout = await fetch(`${server.url}/checkout/00000000-0000-4000-8000-000000000000`);
    expect(checkout.status).toBe(404);
  }, 60_000);
});

describe('booking serve with PAYMENT_PROVIDER=local', () => {
  it('links to PUBLIC_BASE_URL whatever the Host, and labels every page as taking no money', async () => {
    const [key] = await prepareDatabase(served.env.DATABASE_URL!);
    const publicBase = 'https://book.salon.example';
    served.server = await startServer(['--port', '0'], {
      ...served.env,
      PAYMENT_PROVIDER: 'local',
      PUBLIC_BASE_URL: publicBase,
    });
    const server = served.server;
    const booked = await bookColour(key!, 'evil.example/phish?x=');
    expect(booked.status).toBe(201);
    expect(booked.body.data?.status).toBe('pending_payment');
    const link = booked.body.data!.payment_url!;
    expect(link).toMatch(/^https:\/\/book\.salon\.example\/checkout\/[0-9a-f-]{36}$/);

    // The page itself, fetched from this server at the link's path.
    const checkoutPath = new URL(link).pathname;
    const page = await fetch(`${server.url}${checkoutPath}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('this checkout takes no money');
    const crossSite = await sendHttp(server.url, {
      method: 'POST',
      path: `${checkoutPath}/pay`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
    });
    expect(crossSite.status).toBe(403);
    const paid = await sendHttp(server.url, {
      method: 'POST',
      path: `${checkoutPath}/pay`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: publicBase },
    });
    expect(paid.status).toBe(303);
  }, 60_000);
});

describe('booking serve --demo', () => {
  it('chooses the local provider, linking to the address it listens on', async () => {
    served.server = await startServer(['--demo', '--port', '0'], served.env);
    const server = served.server;
    const key = /(bk_[0-9A-Za-z]{40})/.exec(server.stdout())?.[1];
    expect(key).toBeDefined();
    const api = (url: string, init: RequestInit = {}) =>
      fetch(`${server.url}/v1${url}`, {
        ...init,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      });
    const services = (
      (await (await api('/locations/camden/services')).json()) as { data: { id: string; name: string }[] }
    ).data;
    const colour = services.find((service) => service.name === 'Full colour')!;
    const from = DateTime.now().setZone('Europe/London').plus({ days: 7 }).toISODate();
    const availability = (await (
      await api(`/locations/camden/availability?service_ids=${colour.id}&date=${from}&days=7`)
    ).json()) as { data: { slots: { starts_at: string }[] } };
    const client = (await (
      await api('/clients', {
        method: 'POST',
        body: JSON.stringify({ first_name: 'D', last_name: 'M', email: 'dm@example.com' }),
      })
    ).json()) as { data: { id: string } };
    const booked = await api('/bookings', {
      method: 'POST',
      body: JSON.stringify({
        location_slug: 'camden',
        service_ids: [colour.id],
        client_id: client.data.id,
        starts_at: availability.data.slots[0]!.starts_at,
      }),
    });
    expect(booked.status).toBe(201);
    const link = ((await booked.json()) as { data: { payment_url: string } }).data.payment_url;
    expect(link.startsWith(`${server.url}/checkout/`)).toBe(true);
    expect(await (await fetch(link)).text()).toContain('this checkout takes no money');
  }, 60_000);
});

describe('booking serve refuses to start', () => {
  it('with an unknown payment provider, an incomplete Stripe configuration, an unusable PUBLIC_BASE_URL, or a provider over plain http elsewhere', async () => {
    await prepareDatabase(served.env.DATABASE_URL!);
    const [stripe, noWebhook, unknown, badBase, plainStripe, plainTwilio] = await Promise.all([
      serveRefusing({ PAYMENT_PROVIDER: 'stripe' }),
      serveRefusing({ PAYMENT_PROVIDER: 'stripe', STRIPE_SECRET_KEY: 'sk_test_secret123' }),
      serveRefusing({ PAYMENT_PROVIDER: 'paypal' }),
      serveRefusing({ PUBLIC_BASE_URL: 'https://book.example/?next=evil' }),
      serveRefusing({
        PAYMENT_PROVIDER: 'stripe',
        STRIPE_SECRET_KEY: 'sk_test_secret123',
        STRIPE_WEBHOOK_SECRET: 'whsec_secret456',
        STRIPE_API_BASE: 'http://stripe-proxy.example:8080',
      }),
      serveRefusing({
        TWILIO_ACCOUNT_SID: 'AC0123456789',
        TWILIO_AUTH_TOKEN: 'twilio-token-789',
        TWILIO_FROM: '+15005550006',
        TWILIO_API_BASE: 'http://10.0.0.7',
      }),
    ]);
    // The secrets such a URL would have carried in the clear: refused at start, and never printed.
    expect(plainStripe.status).toBe(1);
    expect(plainStripe.stderr).toContain(
      'STRIPE_API_BASE must be an https URL (plain http only to this machine: 127.0.0.1, [::1] or localhost), got "http://stripe-proxy.example:8080"',
    );
    expect(plainStripe.stderr).not.toMatch(/sk_test_secret123|whsec_secret456/);
    expect(plainTwilio.status).toBe(1);
    expect(plainTwilio.stderr).toContain('TWILIO_API_BASE must be an https URL');
    expect(plainTwilio.stderr).not.toContain('twilio-token-789');
    expect(stripe.status).toBe(1);
    expect(stripe.stderr).toContain(
      'PAYMENT_PROVIDER=stripe needs STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET',
    );
    // Only what is missing is named, and the key that is set never appears.
    expect(noWebhook.status).toBe(1);
    expect(noWebhook.stderr).toContain('PAYMENT_PROVIDER=stripe needs STRIPE_WEBHOOK_SECRET:');
    expect(noWebhook.stderr).not.toContain('sk_test_secret123');
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('PAYMENT_PROVIDER must be one of local, stripe');
    expect(badBase.status).toBe(1);
    expect(badBase.stderr).toContain('PUBLIC_BASE_URL must be an http(s) URL without query');
  }, 120_000);
});
