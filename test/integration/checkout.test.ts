import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { redirectUrl } from '../../src/app/checkout-service.ts';
import { expireLapsedHolds } from '../../src/app/hold-sweeper.ts';
import { catalogueIds, getBooking, offeredStarts, postBooking } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The local provider's hosted checkout, through real HTTP. The fixture's colour (90 min, £90) needs a
 * £20 deposit at Soho, whose pending_payment hold is 30 minutes; the clock starts Monday 2026-11-23 09:00.
 */
const STARTS_AT = '2026-11-24T10:00:00+00:00';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
/** The origin of the pages inject() asks for (its default Host), which their forms post from. */
const OWN_ORIGIN = 'http://localhost:80';
const SUCCESS = 'https://shop.example/done?ref={booking_reference}&loc={location_slug}';
const CANCEL = 'https://shop.example/{location_slug}/book?again={booking_reference}';

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

interface Booked {
  reference: string;
  path: string;
  session: string;
}

async function book(urls: { checkout_success_url?: string; checkout_cancel_url?: string } = {}) {
  const ids = await catalogueIds(t.database.db);
  const response = await postBooking(t, {
    location_slug: 'soho',
    service_ids: [ids.services.colour],
    client_id: ids.jo,
    starts_at: STARTS_AT,
    ...urls,
  });
  expect(response.statusCode).toBe(201);
  const data = response.json().data;
  expect(data).toMatchObject({ status: 'pending_payment', deposit: { amount: 2000, currency: 'GBP' } });
  const path = new URL(data.payment_url).pathname;
  expect(path).toMatch(/^\/checkout\/[0-9a-f-]{36}$/);
  return { reference: data.reference, path, session: path.split('/')[2]! } satisfies Booked;
}

const page = (url: string) => t.app.inject({ method: 'GET', url });
/** A form post as a browser sends it from the checkout page. */
const post = (url: string, payload = '', headers: Record<string, string> = { origin: OWN_ORIGIN }) =>
  t.app.inject({ method: 'POST', url, headers: { ...FORM, ...headers }, payload });
const statusOf = async (reference: string) => (await getBooking(t, reference)).json().data.status;
const sessionRow = (id: string) =>
  t.database.db.selectFrom('checkout_sessions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const eventsOf = (reference: string) =>
  t.database.db
    .selectFrom('booking_events')
    .innerJoin('bookings', 'bookings.id', 'booking_events.booking_id')
    .select(['booking_events.from_status', 'booking_events.to_status', 'booking_events.actor'])
    .where('bookings.reference', '=', reference)
    .orderBy('booking_events.seq')
    .execute();

function expectHtml(response: { headers: Record<string, unknown>; body: string }) {
  expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(response.headers['x-request-id']).toBeTruthy();
  expect(response.headers['cache-control']).toBe('no-store');
  expect(response.headers['x-frame-options']).toBe('DENY');
  expect(response.body).toMatch(/^<!doctype html>/);
}

describe('the hosted checkout page', () => {
  it('shows the location, reference, services and the deposit in the organisation’s currency', async () => {
    t = await startTestApp();
    const { reference, path } = await book();
    const response = await page(path);
    expect(response.statusCode).toBe(200);
    expectHtml(response);
    for (const text of [reference, 'Soho', 'Colour', '£90.00', '£20.00', 'Pay £20.00']) {
      expect(response.body).toContain(text);
    }
    expect(response.body).toContain(`<form method="post" action="${path}/pay">`);
    expect(response.body).toContain(`<form method="post" action="${path}/abandon">`);
    expect(response.body).toContain('<time datetime="2026-11-23T09:30:00Z">');
    // Self-contained: nothing loaded from anywhere.
    expect(response.body).not.toMatch(/<script|<link|src=/);
    // Its forms post with a real Origin (no-referrer would make it "null"), and only to itself.
    expect(response.headers['referrer-policy']).toBe('same-origin');
    expect(response.headers['content-security-policy']).toContain("form-action 'self'; frame-ancestors");
  });

  it('says on every page, errors included, that it is a test mode that takes no money', async () => {
    t = await startTestApp();
    const { path } = await book();
    const notice = /Test mode:<\/strong> this checkout takes no money/;
    expect((await page(path)).body).toMatch(notice);
    expect((await page(`/checkout/${randomUUID()}`)).body).toMatch(notice);
    expect((await post(`${path}/pay`)).statusCode).toBe(303);
    expect((await page(`${path}/done`)).body).toMatch(notice);
    expect((await page(path)).body).toMatch(notice);
  });

  it('answers 404 pages for an unknown session, however it is spelled', async () => {
    t = await startTestApp();
    for (const url of [
      `/checkout/${randomUUID()}`,
      '/checkout/not-a-session',
      `/checkout/${randomUUID()}/done`,
    ]) {
      const response = await page(url);
      expect(response.statusCode, url).toBe(404);
      expectHtml(response);
      expect(response.body).toContain('Checkout not found');
    }
    expect((await post(`/checkout/${randomUUID()}/pay`)).statusCode).toBe(404);
    expect((await post(`/checkout/${randomUUID()}/abandon`)).statusCode).toBe(404);
  });

  it('escapes every value it shows', async () => {
    const catalogue = smallCatalogue();
    catalogue.locations[0]!.name = 'Soho <script>alert("x")</script>';
    catalogue.services[1]!.name = 'Colour & <b>tone</b>';
    catalogue.organisation.name = `O'Brien "Hair"`;
    t = await startTestApp({ catalogues: [catalogue] });
    const { path } = await book();
    const body = (await page(path)).body;
    expect(body).toContain('Soho &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(body).toContain('Colour &amp; &lt;b&gt;tone&lt;/b&gt;');
    expect(body).toContain('O&#39;Brien &quot;Hair&quot;');
    expect(body).not.toContain('<script');
    expect(body).not.toContain('<b>');
  });

  it('is hidden from the OpenAPI document and needs no API key, but keeps the HTTPS rule', async () => {
    t = await startTestApp();
    const { path } = await book();
    const document = (await t.request({ method: 'GET', url: '/v1/openapi.json' })).json();
    expect(Object.keys(document.paths).some((p) => p.includes('checkout'))).toBe(false);
    const remote = await t.app.inject({ method: 'GET', url: path, remoteAddress: '203.0.113.9' });
    expect(remote.statusCode).toBe(403);
    expectHtml(remote);
    expect(remote.body).toContain('HTTPS');
    const pay = await t.app.inject({ method: 'POST', url: `${path}/pay`, remoteAddress: '203.0.113.9' });
    expect(pay.statusCode).toBe(403);
  });

  it('exists only while the local provider is the one chosen', async () => {
    t = await startTestApp({ payments: null });
    for (const url of [`/checkout/${randomUUID()}`, `/checkout/${randomUUID()}/done`]) {
      expect((await page(url)).statusCode, url).toBe(404);
    }
    expect((await post(`/checkout/${randomUUID()}/pay`)).statusCode).toBe(404);
  });

  it('leaves the API’s JSON-only rule alone', async () => {
    t = await startTestApp();
    const response = await t.request({
      method: 'POST',
      url: '/v1/clients',
      headers: FORM,
      payload: 'first_name=Jo',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'invalid_request', param: 'Content-Type' });
  });
});

describe('paying', () => {
  it('confirms the booking and redirects to the default confirmation page', async () => {
    t = await startTestApp();
    const { reference, path, session } = await book();
    const paid = await post(`${path}/pay`);
    expect(paid.statusCode).toBe(303);
    expect(paid.headers.location).toBe(`${path}/done`);
    // The redirect leaves for the shop's pages (or our own): no referrer at all.
    expect(paid.headers['referrer-policy']).toBe('no-referrer');
    expect(await statusOf(reference)).toBe('confirmed');
    expect(await eventsOf(reference)).toEqual([
      { from_status: null, to_status: 'pending_payment', actor: expect.stringMatching(/^api_key:/) },
      { from_status: 'pending_payment', to_status: 'confirmed', actor: 'payment:local' },
    ]);
    expect(await sessionRow(session)).toMatchObject({ status: 'paid', completed_at: t.clock.nowMs() });
    const stored = await t.database.db
      .selectFrom('bookings')
      .select(['status', 'deposit_status', 'hold_expires_at'])
      .where('reference', '=', reference)
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({ status: 'confirmed', deposit_status: 'paid', hold_expires_at: null });

    const done = await page(`${path}/done`);
    expect(done.statusCode).toBe(200);
    expectHtml(done);
    expect(done.body).toContain('Booking confirmed');
    expect(done.body).toContain(reference);
    expect(done.body).toContain('£20.00');
    // The page after paying leads back to the booking: a customer who closes it can still find it.
    const manage = new URL((await getBooking(t, reference)).json().data.booking_page_url).pathname;
    expect(done.body).toContain(`<a href="${manage}">See, move or cancel your booking</a>`);
  });

  it('substitutes the placeholders of checkout_success_url', async () => {
    t = await startTestApp();
    const { reference, path } = await book({ checkout_success_url: SUCCESS });
    const paid = await post(`${path}/pay`);
    expect(paid.statusCode).toBe(303);
    expect(paid.headers.location).toBe(`https://shop.example/done?ref=${reference}&loc=soho`);
  });

  it('sends the customer who paid to a success URL in another script, as a browser reads it', async () => {
    t = await startTestApp();
    // A salon's own site in Cyrillic: a Location header carries Latin-1 only, and the raw text was a 500.
    const { reference, path } = await book({
      checkout_success_url: 'https://салон.example/спасибо?ref={booking_reference}',
    });
    const paid = await post(`${path}/pay`);
    expect(paid.statusCode).toBe(303);
    expect(paid.headers.location).toBe(
      `https://xn--80awgdm.example/%D1%81%D0%BF%D0%B0%D1%81%D0%B8%D0%B1%D0%BE?ref=${reference}`,
    );
  });

  it('names the origins of the success and cancel URLs in its form-action: its forms lead there', async () => {
    t = await startTestApp();
    const { path } = await book({
      checkout_success_url: SUCCESS,
      checkout_cancel_url: 'https://{location_slug}.shop.example:8443/again',
    });
    const shown = await page(path);
    // Chromium holds a form's redirects to form-action too: without them the customer who paid is
    // shown an error instead of the shop's page.
    expect(shown.headers['content-security-policy']).toContain(
      "form-action 'self' https://shop.example https://soho.shop.example:8443; frame-ancestors 'none'",
    );
    // Its other pages keep to this origin.
    expect((await post(`${path}/pay`)).statusCode).toBe(303);
    expect((await page(`${path}/done`)).headers['content-security-policy']).toContain(
      "form-action 'self'; frame-ancestors",
    );
  });

  it('refuses to take the deposit twice, with a 409 page', async () => {
    t = await startTestApp();
    const { reference, path } = await book();
    expect((await post(`${path}/pay`)).statusCode).toBe(303);
    const again = await post(`${path}/pay`);
    expect(again.statusCode).toBe(409);
    expectHtml(again);
    expect(again.body).toContain('already been paid');
    const shown = await page(path);
    expect(shown.statusCode).toBe(409);
    expect(shown.body).toContain('Already paid');
    expect(shown.body).toContain(`href="${path}/done"`);
    expect((await post(`${path}/abandon`)).statusCode).toBe(409);
    expect(await eventsOf(reference)).toHaveLength(2);
  });

  it('answers a second Pay (a double tap on a slow phone) with the page that leads on, not a dead end', async () => {
    t = await startTestApp();
    const { reference, path } = await book();
    const manage = new URL((await getBooking(t, reference)).json().data.booking_page_url).pathname;
    expect((await post(`${path}/pay`)).statusCode).toBe(303);
    // The browser shows the answer to the last tap: it says it is paid and links on.
    for (const again of [await post(`${path}/pay`), await post(`${path}/abandon`)]) {
      expect(again.statusCode).toBe(409);
      expectHtml(again);
      expect(again.body).toContain('already been paid');
      expect(again.body).toContain(`href="${path}/done"`);
      expect(again.body).toContain(`href="${manage}"`);
      expect(again.body).toContain(reference);
    }
    expect(await eventsOf(reference)).toHaveLength(2);
  });

  it('keeps a paid booking confirmed, and its slot taken, after the hold would have lapsed', async () => {
    t = await startTestApp();
    const { reference, path } = await book();
    expect((await post(`${path}/pay`)).statusCode).toBe(303);
    t.clock.advance({ hours: 2 });
    expect(await expireLapsedHolds(t.database.db, t.clock.nowMs())).toBe(0);
    expect(await statusOf(reference)).toBe('confirmed');
    const ids = await catalogueIds(t.database.db);
    const starts = await offeredStarts(t, { serviceId: ids.services.colour!, date: '2026-11-24' });
    expect(starts).not.toContain(STARTS_AT);
  });

  it('accepts a form body with fields, and refuses an oversized one', async () => {
    t = await startTestApp();
    const { path } = await book();
    const large = await post(`${path}/pay`, 'x'.repeat(2048));
    expect(large.statusCode).toBe(413);
    expectHtml(large);
    expect(large.body).toContain('larger than 1 KiB');
    expect((await post(`${path}/pay`, 'submit=Pay')).statusCode).toBe(303);
  });
});

describe('addresses that are none', () => {
  it('answers the checkout’s page, not JSON, when a checkout or card address has a % that escapes nothing', async () => {
    t = await startTestApp();
    const { path } = await book();
    for (const url of ['/checkout/%zz', `${path}/%E0%A4%A`, '/card-setup/%zz', '/card-setup/%']) {
      const response = await page(url);
      expect(response.statusCode, url).toBe(400);
      expectHtml(response);
      expect(response.body, url).toContain('every % must begin the escape');
      expect(response.body, url).toContain(
        `Reference for support: <code>${response.headers['x-request-id']}</code>`,
      );
    }
    const posted = await post(`${path}%zz/pay`);
    expect(posted.statusCode).toBe(400);
    expectHtml(posted);
    // The API keeps its JSON envelope for the same mistake.
    const api = await page('/v1/bookings/%zz');
    expect(api.headers['content-type']).toMatch(/^application\/json/);
  });
});

describe('the forms', () => {
  it('are refused from another site, or without Origin and Referer, and accepted from the page itself', async () => {
    t = await startTestApp();
    const { reference, path, session } = await book();
    const refusals: Record<string, string>[] = [
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { origin: 'http://localhost:8080' },
      { referer: 'https://evil.example/page' },
      {},
    ];
    for (const headers of refusals) {
      for (const action of ['pay', 'abandon']) {
        const refused = await post(`${path}/${action}`, '', headers);
        expect(refused.statusCode, `${action} ${JSON.stringify(headers)}`).toBe(403);
        expectHtml(refused);
        expect(refused.body).toContain('Not accepted from here');
        expect(refused.body).toContain(
          'This form is accepted only from the checkout page itself. Open the payment link again and use its buttons.',
        );
      }
    }
    expect(await statusOf(reference)).toBe('pending_payment');
    expect((await sessionRow(session)).status).toBe('open');
    // A browser that sends no Origin still sends the page as Referer.
    expect((await post(`${path}/abandon`, '', { referer: `${OWN_ORIGIN}${path}` })).statusCode).toBe(303);
    expect((await post(`${path}/pay`)).statusCode).toBe(303);
    expect(await statusOf(reference)).toBe('confirmed');
  });

  it('accept the origin of PUBLIC_BASE_URL, where the payment links point', async () => {
    t = await startTestApp({ http: { publicBaseUrl: 'https://book.salon.example' } });
    const { path } = await book();
    expect((await post(`${path}/pay`, '', { origin: 'https://evil.example' })).statusCode).toBe(403);
    expect((await post(`${path}/pay`, '', { origin: 'https://book.salon.example' })).statusCode).toBe(303);
  });
});

describe('abandoning', () => {
  it('redirects to checkout_cancel_url and releases nothing: the checkout can still be paid', async () => {
    t = await startTestApp();
    const { reference, path, session } = await book({ checkout_cancel_url: CANCEL });
    const left = await post(`${path}/abandon`);
    expect(left.statusCode).toBe(303);
    expect(left.headers.location).toBe(`https://shop.example/soho/book?again=${reference}`);
    expect(await statusOf(reference)).toBe('pending_payment');
    expect((await sessionRow(session)).status).toBe('abandoned');
    expect((await post(`${path}/abandon`)).statusCode).toBe(303);

    const shown = await page(path);
    expect(shown.statusCode).toBe(200);
    expect(shown.body).toContain('Not paid yet');
    expect((await post(`${path}/pay`)).statusCode).toBe(303);
    expect(await statusOf(reference)).toBe('confirmed');
  });

  it('goes back to the booking’s own page when no cancel URL was given, where it can be cancelled', async () => {
    t = await startTestApp();
    const { reference, path } = await book({ checkout_success_url: SUCCESS });
    const manage = new URL((await getBooking(t, reference)).json().data.booking_page_url).pathname;
    expect(manage).toMatch(/^\/p\/manage\/[A-Za-z0-9_-]{43}$/);
    // Before either button: going back keeps the hold; cancelling is the booking page's own step.
    const shown = await page(path);
    expect(shown.body).toContain('Go back without paying');
    expect(shown.body).not.toContain('Cancel and go back');
    expect(shown.body).toContain('Going back keeps the time held for you until');
    expect(shown.body).toContain(`<a href="${manage}/cancel">Cancel the booking instead</a>`);
    // Said before the buttons, as every cost is.
    expect(shown.body.indexOf('Going back keeps')).toBeLessThan(shown.body.indexOf('Go back without paying'));
    const left = await post(`${path}/abandon`);
    expect(left.statusCode).toBe(303);
    expect(left.headers.location).toBe(manage);
    expect(await statusOf(reference)).toBe('pending_payment');
    const done = await page(`${path}/done`);
    expect(done.statusCode).toBe(409);
    expect(done.body).toContain('has not been paid');
    expect(done.body).toContain(`href="${path}"`);
    expect(done.body).toContain(`href="${manage}"`);
  });
});

describe('expiry with the hold', () => {
  it('shows an expired page and refuses payment once the 30-minute hold has lapsed', async () => {
    t = await startTestApp();
    const { reference, path } = await book();
    t.clock.advance({ minutes: 29, seconds: 59 });
    expect((await page(path)).statusCode).toBe(200);
    t.clock.advance({ seconds: 1 });

    const shown = await page(path);
    expect(shown.statusCode).toBe(409);
    expectHtml(shown);
    expect(shown.body).toContain('Checkout expired');
    // An expired hold says "book again" with the way to do it.
    expect(shown.body).toContain('<a href="/p/acme-hair?location=soho">Book again</a>');
    const pay = await post(`${path}/pay`);
    expect(pay.statusCode).toBe(409);
    expect(pay.body).toContain('expired');
    // Pay pressed on a page left open past the hold: the way to book again, not a dead end.
    expect(pay.body).toContain('<a href="/p/acme-hair?location=soho">Book again</a>');
    expect((await post(`${path}/abandon`)).statusCode).toBe(409);
    expect(await statusOf(reference)).toBe('expired');
    expect(await eventsOf(reference)).toHaveLength(1);

    // The sweeper writes it down; the page says the same.
    expect(await expireLapsedHolds(t.database.db, t.clock.nowMs())).toBe(1);
    expect((await page(path)).statusCode).toBe(409);
    // The booking's own page does not call a released booking's deposit due.
    const manage = new URL((await getBooking(t, reference)).json().data.booking_page_url).pathname;
    const released = (await page(manage)).body;
    expect(released).toContain('Booking expired');
    expect(released).toContain('<dt>Deposit</dt><dd>£20.00 (not paid)</dd>');
  });

  it('an expired checkout at a location made inactive since books again from the salon’s page', async () => {
    t = await startTestApp();
    const { path } = await book();
    t.clock.advance({ minutes: 30 });
    await t.database.db.updateTable('locations').set({ active: 0 }).where('slug', '=', 'soho').execute();
    const shown = await page(path);
    expect(shown.statusCode).toBe(409);
    expect(shown.body).toContain('Checkout expired');
    expect(shown.body).toContain('<a href="/p/acme-hair">Book again</a>');
    // That is a page; the location's own address would be Not found.
    expect((await page('/p/acme-hair')).statusCode).toBe(200);
  });

  it('closes the checkout when the booking is cancelled', async () => {
    t = await startTestApp();
    const { reference, path } = await book();
    const cancelled = await t.request({
      method: 'POST',
      url: `/v1/bookings/${reference}/cancel`,
      payload: {},
    });
    expect(cancelled.statusCode).toBe(200);
    const shown = await page(path);
    expect(shown.statusCode).toBe(409);
    expect(shown.body).toContain('no longer awaiting payment');
    expect((await post(`${path}/pay`)).statusCode).toBe(409);
    expect(await statusOf(reference)).toBe('cancelled');
  });
});

describe('redirectUrl', () => {
  const values = { reference: 'AC-ABC234', slug: 'soho west' };
  it('substitutes both placeholders, URL-encoded, including percent-encoded braces', () => {
    expect(redirectUrl('https://x.example/{location_slug}/{booking_reference}', '/d', values)).toBe(
      'https://x.example/soho%20west/AC-ABC234',
    );
    expect(redirectUrl('https://x.example/?r=%7Bbooking_reference%7D', '/d', values)).toBe(
      'https://x.example/?r=AC-ABC234',
    );
  });
  it('falls back to the default when no URL was configured', () => {
    expect(redirectUrl(null, '/checkout/s/done', values)).toBe('/checkout/s/done');
    expect(redirectUrl(undefined, '/checkout/s', values)).toBe('/checkout/s');
  });
});
