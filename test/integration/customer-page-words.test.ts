import { afterEach, describe, expect, it } from 'vitest';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { demoCatalogue } from '../helpers/mcp-harness.ts';
import { bookOnPage, pageGet, pagePost } from '../helpers/public-booking.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * What the customer pages (/p/...) say where the API's words would not do, through real HTTP (inject):
 * each in the customer's words, where the API's own wording stays as it is. The demo catalogue; Monday
 * 23 November 2026, 09:00 in London.
 */
const NOW = '2026-11-23T09:00:00Z';

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

/** A cut for Jo, made over REST at `url` (a booking, or a Booking Protection hold); its page's path and reference. */
async function cutFor(
  url: string,
  location: string,
  startsAt: string,
): Promise<{ path: string; reference: string }> {
  const ids = await catalogueIds(t.database.db);
  const payload = {
    location_slug: location,
    service_ids: [ids.services.cut],
    client_id: ids.jo,
    starts_at: startsAt,
  };
  const response = await t.request({ method: 'POST', url, payload });
  expect(response.statusCode, response.body).toBe(201);
  const data = response.json().data;
  return { path: new URL(data.booking_page_url).pathname, reference: data.reference };
}

const cutAt = (location: string, startsAt: string) => cutFor('/v1/bookings', location, startsAt);

describe('the cancel page of a booking already cancelled (the back button)', () => {
  it('says plainly that it is already cancelled; the API keeps its own words', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const { path, reference } = await cutAt('camden', '2026-11-30T10:00:00Z');
    expect((await pagePost(t, `${path}/cancel`)).statusCode).toBe(303);
    const again = await pageGet(t, `${path}/cancel`);
    expect(again.body).toContain('This booking is already cancelled.');
    expect(again.body).not.toContain('cannot be cancelled');
    expect(again.body).toContain('>Back to the booking</a>');
    const api = await t.request({ method: 'POST', url: `/v1/bookings/${reference}/cancel`, payload: {} });
    expect(api.statusCode).toBe(409);
    expect(api.json().error.message).toBe('This booking cannot be cancelled: the booking is cancelled.');
  });
});

describe('the page of a booking whose appointment has come (the link in an old message)', () => {
  it('says it has started, then that it is over with the way to book again, never "See you then!"', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const { path } = await cutAt('camden', '2026-11-24T10:00:00Z');
    expect((await pageGet(t, path)).body).toContain('You are booked. See you then!');
    t.clock.set('2026-11-24T10:10:00Z');
    const under = (await pageGet(t, path)).body;
    expect(under).toContain('<h1>Appointment started</h1>');
    expect(under).toContain('Your appointment has started.');
    expect(under).not.toContain('See you then!');
    t.clock.set('2026-11-25T09:00:00Z');
    const over = await pageGet(t, path);
    expect(over.statusCode).toBe(200);
    expect(over.body).toContain('<h1>Appointment over</h1>');
    const ids = await catalogueIds(t.database.db);
    expect(over.body).toContain(
      `This appointment is over. <a href="/p/northside-hair?location=camden&amp;services=${ids.services.cut}">Book again</a>`,
    );
    expect(over.body).not.toContain('See you then!');
    expect(over.body).not.toContain('Change the time');
  });
});

/** A Booking Protection hold at Islington for Jo, made over REST. */
const protectedHold = (startsAt: string) => cutFor('/v1/bookings/protected-holds', 'islington', startsAt);

describe('the test mode’s card page (Booking Protection)', () => {
  it('links back to the booking’s own page', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const { path } = await protectedHold('2026-11-25T14:00:00Z');
    const setup = await pagePost(t, `${path}/setup`);
    expect(setup.statusCode, setup.body).toBe(303);
    const card = await pageGet(t, new URL(String(setup.headers.location)).pathname);
    expect(card.statusCode, card.body).toBe(200);
    expect(card.body).toContain('<h1>Save a card</h1>');
    expect(card.body).toContain(`<a href="${path}">Back to your booking without saving a card</a>`);
  });
});

describe('the public booking form refused for too many attempts from one address (429)', () => {
  it('comes back with what was typed kept', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const address = '127.0.0.9';
    const attempt = (details: Record<string, string>) =>
      bookOnPage(
        t,
        'northside-hair',
        { location: 'camden', service: 'cut', startsAt: '2026-11-25T14:00:00Z', ...details },
        { address },
      );
    // Ten attempts with no contact (each refused, each counted), then one more in full.
    for (let i = 0; i < 10; i++) expect((await attempt({})).statusCode).toBe(400);
    const refused = await attempt({
      firstName: 'Maya',
      lastName: 'Angelou',
      phone: '07400 555666',
      email: 'maya@example.com',
    });
    expect(refused.statusCode, refused.body).toBe(429);
    expect(refused.body).toContain('Too many booking attempts');
    for (const typed of ['Maya', 'Angelou', '07400 555666', 'maya@example.com']) {
      expect(refused.body).toContain(`value="${typed}"`);
    }
    expect(refused.body).toContain('value="2026-11-25T14:00Z" checked');
  });
});
