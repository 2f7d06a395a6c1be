import { afterEach, describe, expect, it } from 'vitest';
import { customerLinks } from '../../src/app/customer-links.ts';
import { deliverAllDue } from '../../src/app/outbox-delivery.ts';
import { listOutbox } from '../../src/app/outbox-service.ts';
import { localCheckout } from '../../src/app/payments.ts';
import { createUser } from '../../src/app/staff-account-service.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { signInToConsole } from '../helpers/console-session.ts';
import { connectInProcess, demoCatalogue } from '../helpers/mcp-harness.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The hosted pages through real HTTP (inject): the protected hold MCP makes and how it lapses, the
 * booking page's refusals (unknown links, posts from other sites), moving a booking from its page with
 * the cost shown first, the REST contract kept (409 at a protected location), and the per-address limit.
 * The demo catalogue; the clock stands at Monday 23 November 2026, 09:00 in London.
 */
const NOW = '2026-11-23T09:00:00Z';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const OWN_ORIGIN = 'http://localhost:80';
const PASSWORD = 'correct horse battery';

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

const page = (url: string) => t.app.inject({ method: 'GET', url });
const post = (url: string, payload = '', headers: Record<string, string> = { origin: OWN_ORIGIN }) =>
  t.app.inject({ method: 'POST', url, headers: { ...FORM, ...headers }, payload });

async function protectedHold(services = 'cut') {
  const mcp = await connectInProcess(t, t.keys.readWrite);
  const booked = await mcp.call('book', {
    location: 'islington',
    services,
    starts_at: 'Wednesday 25 November at 2 pm',
    client: { first_name: 'Max', last_name: 'Ode', phone: '07911 778899' },
  });
  await mcp.close();
  expect(booked).toMatchObject({ ok: true, status: 'pending_confirmation' });
  return { reference: booked.booking.reference as string, path: new URL(booked.booking_page_url).pathname };
}

/** The page's "Save a card": the local provider's card setup, which returns to the booking's page. */
async function saveCard(path: string): Promise<void> {
  const setup = await post(`${path}/setup`);
  expect(setup.statusCode, setup.body).toBe(303);
  const setupPath = new URL(setup.headers.location as string).pathname;
  expect(setupPath).toMatch(/^\/card-setup\/[0-9a-f-]{36}$/);
  const saved = await post(setupPath);
  expect(saved.statusCode, saved.body).toBe(303);
  expect(saved.headers.location).toBe(path);
}

async function messagesOf(reference: string) {
  const ids = await catalogueIds(t.database.db);
  return (await listOutbox(t.database.db, ids.organisation)).filter((m) => m.reference === reference);
}

describe('the hosted pages', () => {
  it('a protected hold lapses after pending_confirmation_hold_minutes, and its page says so', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const { reference, path } = await protectedHold();
    const held = await page(path);
    expect(held.statusCode).toBe(200);
    expect(held.body).toContain('Finish your booking');
    expect(held.body).toMatch(/held for <strong>15 more minutes/);
    t.clock.advance({ minutes: 15 });
    const lapsed = await page(path);
    expect(lapsed.body).toContain('Booking expired');
    expect(lapsed.body).not.toContain('Save a card');
    expect((await post(`${path}/setup`)).statusCode).toBe(409);
    const rest = await t.request({ method: 'GET', url: `/v1/bookings/${reference}` });
    expect(rest.json().data.status).toBe('expired');
  });

  it('keeps REST at a protected location to the contract: 409 booking_protection_required', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const ids = await catalogueIds(t.database.db);
    const client = await t.request({
      method: 'POST',
      url: '/v1/clients',
      payload: { first_name: 'Ana', last_name: 'Lee', email: 'ana@example.com' },
    });
    const response = await t.request({
      method: 'POST',
      url: '/v1/bookings',
      payload: {
        location_slug: 'islington',
        service_ids: [Object.values(ids.services)[0]],
        client_id: client.json().data.id,
        starts_at: '2026-11-25T14:00:00+00:00',
      },
    });
    expect(response.statusCode).toBe(409);
    expect(response.json().error.code).toBe('booking_protection_required');
  });

  it('refuses unknown links, and forms from other sites', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    for (const url of ['/p/manage/nope', `/p/manage/${'A'.repeat(43)}`, '/p/no-such-salon']) {
      const response = await page(url);
      expect(response.statusCode).toBe(404);
      expect(response.headers['content-type']).toMatch(/^text\/html/);
      expect(response.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    }
    const { path } = await protectedHold();
    const crossSite = await post(`${path}/setup`, '', { origin: 'https://evil.example' });
    expect(crossSite.statusCode).toBe(403);
    expect((await post(`${path}/setup`, '', {})).statusCode).toBe(403);
    expect((await page(path)).body).toContain('Save a card');
    // The refusal speaks of the page the form belongs to, the public page's as the booking's.
    const booking =
      'This form is accepted only from the booking page itself. Open the booking page again and use its buttons.';
    expect(crossSite.body).toContain(booking);
    const publicForm = await post('/p/northside-hair/book', 'starts_at=2026-11-25T14%3A00%3A00Z', {
      origin: 'https://evil.example',
    });
    expect(publicForm.statusCode).toBe(403);
    expect(publicForm.headers['content-type']).toMatch(/^text\/html/);
    expect(publicForm.body).toContain('Not accepted from here');
    expect(publicForm.body).toContain(booking);
    expect(publicForm.body).not.toContain('payment link');
    // The local provider's card page, reached from the booking's page, sends the customer back there.
    const setup = await post(`${path}/setup`);
    const setupPath = new URL(setup.headers.location as string).pathname;
    const cardForm = await post(setupPath, '', { origin: 'https://evil.example' });
    expect(cardForm.statusCode).toBe(403);
    expect(cardForm.body).toContain(
      'This form is accepted only from the card page itself. Open the booking page again and use its buttons.',
    );
  });

  it('answers an address under /p/ no page has, or a form address of a booking page opened, with a page', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const { path } = await protectedHold();
    // A refused form leaves its address in the bar; opened again (a reload, a new tab), it is a GET.
    for (const [method, url] of [
      ['GET', `${path}/claim`],
      ['GET', `${path}/setup`],
      ['GET', `${path}/nothing`],
      ['POST', path],
    ] as const) {
      const response = await t.app.inject({ method, url, headers: { origin: OWN_ORIGIN } });
      expect(response.statusCode, url).toBe(404);
      expect(response.headers['content-type'], url).toMatch(/^text\/html/);
      expect(response.headers['cache-control'], url).toBe('no-store');
      expect(response.headers['referrer-policy'], url).toBe('same-origin');
      expect(response.body, url).toContain('Not found');
    }
    const again = await page(`${path}/claim`);
    expect(again.body).toContain(`<a href="${path}">Back to your booking</a>`);
    // The booking form's address opened leads to the salon's page (public-page-choices.test.ts).
    expect((await page('/p/northside-hair/book')).headers.location).toBe('/p/northside-hair');
    // A link copied with a slash at its end leads to the page it names, its query kept.
    expect((await page('/p/northside-hair/?location=camden')).headers.location).toBe(
      '/p/northside-hair?location=camden',
    );
    expect((await page(`${path}/`)).headers.location).toBe(path);
    // Nothing named before the slashes: the page of nothing, not a redirect to the API's /p.
    for (const url of ['/p/', '/p//']) expect((await page(url)).statusCode, url).toBe(404);
    // The API keeps its envelope.
    const api = await t.app.inject({ method: 'GET', url: '/v1/nothing' });
    expect(api.headers['content-type']).toMatch(/^application\/json/);
  });

  it('answers a page, not JSON, when an address under /p/ has a % that escapes nothing', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const { path } = await protectedHold();
    for (const url of ['/p/%E0%A4%A', '/p/northside-hair%zz', `${path}/%zz`, '/p/manage/%']) {
      const response = await page(url);
      expect(response.statusCode, url).toBe(400);
      expect(response.headers['content-type'], url).toMatch(/^text\/html/);
      expect(response.headers['content-security-policy'], url).toContain("frame-ancestors 'none'");
      expect(response.headers['cache-control'], url).toBe('no-store');
      expect(response.headers['x-request-id'], url).toBeDefined();
      expect(response.body, url).toContain('<h1>Please check your details</h1>');
      expect(response.body, url).toContain('every % must begin the escape');
      expect(response.body, url).toContain(
        `Reference for support: <code>${response.headers['x-request-id']}</code>`,
      );
    }
    // A form posted to such an address is refused the same way.
    const posted = await post('/p/northside-hair/%E0%A4%A/book');
    expect(posted.statusCode).toBe(400);
    expect(posted.headers['content-type']).toMatch(/^text\/html/);
    // The API keeps its JSON envelope for the same mistake.
    const api = await t.app.inject({ method: 'GET', url: '/v1/locations/%zz' });
    expect(api.headers['content-type']).toMatch(/^application\/json/);
  });

  it('sends every page never framed, its forms posting only here with the local provider', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const { path } = await protectedHold('Full colour');
    for (const url of [path, '/p/northside-hair', '/p/no-such-salon', `${path}/cancel`]) {
      const response = await page(url);
      expect(response.headers['x-frame-options'], url).toBe('DENY');
      expect(response.headers['content-security-policy'], url).toBe(
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      );
    }
    // Its steps hand over to the local provider's pages, which are this server's own.
    expect((await page(path)).body).toContain('Pay deposit');
  });

  it('moves a booking from its page, saying first that it is free of charge', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const { reference, path } = await protectedHold();
    await saveCard(path);
    expect((await page(path)).body).toContain('Booking confirmed');
    const times = await page(`${path}/reschedule?date=2026-11-27`);
    expect(times.statusCode).toBe(200);
    const startsAt = /name="starts_at" value="([^"]+)"/.exec(times.body)?.[1];
    expect(startsAt).toBeDefined();
    const preview = await page(`${path}/reschedule?starts_at=${encodeURIComponent(startsAt!)}`);
    expect(preview.body).toContain('There is no charge for moving it.');
    expect(preview.body).toContain('Yes, move it');
    const moved = await post(`${path}/reschedule`, `starts_at=${encodeURIComponent(startsAt!)}`);
    expect(moved.statusCode).toBe(303);
    const rest = await t.request({ method: 'GET', url: `/v1/bookings/${reference}` });
    expect(Date.parse(rest.json().data.starts_at)).toBe(Date.parse(startsAt!));
    expect(rest.json().data.booking_page_url).toBe(`http://localhost:80${path}`);
  });

  it('says a late cancellation that costs nothing is free of charge, not only that it is late', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const mcp = await connectInProcess(t, t.keys.readWrite);
    const booked = await mcp.call('book', {
      location: 'camden',
      services: 'cut',
      starts_at: 'Monday 23 November at 2 pm',
      client: { first_name: 'Max', last_name: 'Ode', phone: '07911 778899' },
    });
    await mcp.close();
    expect(booked).toMatchObject({ ok: true, status: 'confirmed' });
    const path = new URL(booked.booking.booking_page_url).pathname;
    const asked = (await page(`${path}/cancel`)).body;
    expect(asked).toContain(
      'This is a late change under the cancellation policy. There is no charge for cancelling.',
    );
  });

  it('says again, once cancelled late, the fee the customer was told of, then what the salon did with it', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const { reference, path } = await protectedHold();
    await saveCard(path);
    // Tuesday 15:00: 23 hours before the appointment, inside Islington's 48-hour window.
    t.clock.advance({ hours: 30 });
    const asked = (await page(`${path}/cancel`)).body;
    expect(asked).toContain(
      'A late cancellation fee of £31.00 (50% of the price) applies: £31.00 will be charged',
    );
    expect((await post(`${path}/cancel`)).statusCode).toBe(303);
    const cancelled = (await page(path)).body;
    expect(cancelled).toContain('Booking cancelled');
    expect(cancelled).toContain(
      '<dt>Late cancellation fee</dt><dd>£31.00 (50% of the price): £31.00 to be charged to your saved card.</dd>',
    );
    await createUser(
      t.database.db,
      { organisationSlug: 'northside-hair', email: 'desk@northside.test', role: 'owner', password: PASSWORD },
      t.clock.nowMs(),
    );
    const desk = await signInToConsole(t, 'northside-hair', 'desk@northside.test', PASSWORD);
    const waived = await desk.post(`/console/bookings/${reference}/waive`, {
      fee: 'late_cancellation',
      reason: 'First time',
    });
    expect(waived.statusCode, waived.body).toBe(303);
    expect((await page(path)).body).toContain(
      '<dt>Late cancellation fee</dt><dd>£31.00 (50% of the price): waived by the salon; nothing is charged.</dd>',
    );
  });

  it('cancels once when the form is sent twice, and both answers land on the cancelled booking', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const { reference, path } = await protectedHold();
    await saveCard(path);
    const both = await Promise.all([post(`${path}/cancel`), post(`${path}/cancel`)]);
    expect(both.map((answer) => [answer.statusCode, answer.headers.location])).toEqual([
      [303, path],
      [303, path],
    ]);
    const cancelled = (await page(path)).body;
    expect(cancelled).toContain('Booking cancelled');
    // Not a dead end: the way to book another time, with the same services, at the same place.
    const ids = await catalogueIds(t.database.db);
    expect(cancelled).toContain(
      `<a href="/p/northside-hair?location=islington&amp;services=${ids.services.cut}">Book another time</a>`,
    );
    const said = (await messagesOf(reference)).filter((m) => m.kind === 'cancelled');
    expect(said).toHaveLength(1);
  });

  it("sends the hold's booking-page link through the outbox; confirming sends confirmed instead", async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const { reference, path } = await protectedHold();
    const queued = await messagesOf(reference);
    expect(queued.map((m) => `${m.kind}:${m.channel}:${m.status}`)).toEqual([
      'booking_page_link:sms:pending',
    ]);
    const links = customerLinks(localCheckout, 'https://book.example');
    await deliverAllDue({ db: t.database.db, clock: t.clock, senders: { sms: null, email: null }, links });
    const [sent] = await messagesOf(reference);
    expect(sent!.status).toBe('logged');
    expect(JSON.parse(sent!.body!).text).toContain(`https://book.example${path}`);
    await saveCard(path);
    const after = await messagesOf(reference);
    expect(after.map((m) => `${m.kind}:${m.status}`).sort()).toEqual([
      'booking_page_link:logged',
      'confirmed:pending',
      'reminder:pending',
    ]);
  });

  it('limits the requests of one address to the pages', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW, limits: { requestsPerMinute: 3 } });
    for (let i = 0; i < 3; i++) expect((await page('/p/northside-hair')).statusCode).toBe(200);
    const limited = await page('/p/northside-hair');
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
    expect(limited.body).toContain('Too many requests');
  });
});

describe('a cancellation or move confirmed on what the page said', () => {
  it('cancels nothing once the window passed while the page was open, and says the fee now due first', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const { path } = await protectedHold();
    await saveCard(path);
    // Monday 13:55: 48 hours and 5 minutes before Wednesday's 14:00, outside Islington's window.
    t.clock.advance({ hours: 4, minutes: 55 });
    const asked = (await page(`${path}/cancel`)).body;
    expect(asked).not.toContain('£31.00');
    const form = (html: string) =>
      [
        ...(/<form method="post" action="[^"]*\/cancel">([\s\S]*?)<\/form>/.exec(html)?.[1] ?? '').matchAll(
          /<input type="hidden" name="([^"]+)" value="([^"]*)">/g,
        ),
      ]
        .map(([, name, value]) => `${name}=${encodeURIComponent(value!)}`)
        .join('&');
    expect(form(asked)).toMatch(/^terms=/);

    // Sent ten minutes later, inside the window: not cancelled, the fee said before anything is done.
    t.clock.advance({ minutes: 10 });
    const sent = await post(`${path}/cancel`, form(asked));
    expect(sent.statusCode, sent.body).toBe(409);
    expect(sent.body).toContain('Nothing is cancelled yet');
    expect(sent.body).toContain('A late cancellation fee of £31.00 (50% of the price) applies');
    expect((await page(path)).body).not.toContain('Booking cancelled');

    const again = await post(`${path}/cancel`, form(sent.body));
    expect(again.statusCode, again.body).toBe(303);
    expect((await page(path)).body).toContain(
      '<dt>Late cancellation fee</dt><dd>£31.00 (50% of the price): £31.00 to be charged to your saved card.</dd>',
    );
  });

  it('moves nothing once the window passed while the move was being confirmed, and says it is late first', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const { reference, path } = await protectedHold();
    await saveCard(path);
    // Monday 13:55: 48 hours and 5 minutes before Wednesday's 14:00, outside Islington's window.
    t.clock.advance({ hours: 4, minutes: 55 });
    const times = await page(`${path}/reschedule?date=2026-11-27`);
    const startsAt = /name="starts_at" value="([^"]+)"/.exec(times.body)![1]!;
    const asked = (await page(`${path}/reschedule?starts_at=${encodeURIComponent(startsAt)}`)).body;
    expect(asked).toContain('There is no charge for moving it.');
    expect(asked).not.toContain('late change');
    const form = (html: string) =>
      [
        ...(
          /<form method="post" action="[^"]*\/reschedule">([\s\S]*?)<\/form>/.exec(html)?.[1] ?? ''
        ).matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g),
      ]
        .map(([, name, value]) => `${name}=${encodeURIComponent(value!)}`)
        .join('&');
    expect(form(asked)).toContain('terms=');

    // Confirmed ten minutes later, inside the window: not moved, its lateness said before anything is done.
    t.clock.advance({ minutes: 10 });
    const sent = await post(`${path}/reschedule`, form(asked));
    expect(sent.statusCode, sent.body).toBe(409);
    expect(sent.body).toContain('Nothing is moved yet');
    expect(sent.body).toContain('This is a late change under the cancellation policy.');
    const before = await t.request({ method: 'GET', url: `/v1/bookings/${reference}` });
    expect(before.json().data.starts_at).toBe('2026-11-25T14:00:00+00:00');

    const again = await post(`${path}/reschedule`, form(sent.body));
    expect(again.statusCode, again.body).toBe(303);
    const after = await t.request({ method: 'GET', url: `/v1/bookings/${reference}` });
    expect(Date.parse(after.json().data.starts_at)).toBe(Date.parse(startsAt));
  });
});
