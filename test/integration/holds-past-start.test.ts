import { afterEach, describe, expect, it } from 'vitest';
import { expireLapsedHolds } from '../../src/app/hold-sweeper.ts';
import { catalogueIds, getBooking, postBooking } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import {
  bookOnPage,
  deliveredCode,
  pagePathOf,
  pagePost,
  referenceOnPage,
} from '../helpers/public-booking.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { bookAna, bookingPagePathOf, joinForAna, waitlistPass } from '../helpers/waitlist-fixtures.ts';

/**
 * A pending hold (a deposit's pending_payment, a public booking awaiting its code, a waitlist offer)
 * never becomes confirmed once its appointment has started: its expiry is never later than its start,
 * and a hold whose start has passed counts as lapsed wherever it would be confirmed. Through REST, the
 * public pages and the local checkout; the small catalogue with Soho taking bookings 5 minutes ahead
 * and holding a waitlist offer and a public booking's code for an hour (longer than that notice, and
 * than the 15 minutes such a hold needs before its start). Monday 23 November 2026, 09:00 in London;
 * Ana works at Soho on Mondays 09:00-17:00.
 */
const NOW = '2026-11-23T09:00:00Z';
const MONDAY = '2026-11-23';
const FORM = { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:80' };

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

function catalogue() {
  const c = smallCatalogue();
  const soho = c.locations[0] as Record<string, unknown>;
  soho.policy = { min_notice_minutes: 5, waitlist_offer_minutes: 60, pending_confirmation_hold_minutes: 60 };
  return c;
}

const start = async () => {
  t = await startTestApp({ catalogues: [catalogue()], now: NOW });
};
const bookingOf = async (reference: string) => (await getBooking(t, reference)).json().data;

/** Jo's colour at Soho (a £20 deposit, a 30-minute hold) at `startsAt`: its reference and checkout. */
async function colourWithDeposit(startsAt: string) {
  const ids = await catalogueIds(t.database.db);
  const response = await postBooking(t, {
    location_slug: 'soho',
    service_ids: [ids.services.colour],
    staff_id: ids.staff.ana,
    client_id: ids.jo,
    starts_at: startsAt,
  });
  expect(response.statusCode, response.body).toBe(201);
  const data = response.json().data;
  expect(data.status).toBe('pending_payment');
  return { reference: data.reference as string, checkout: new URL(data.payment_url).pathname };
}

/**
 * Ana's Monday morning booked for Jo from 09:15 (every start before noon taken), Kim waits for a
 * morning cut, and 09:15 is cancelled: the worker offers it to her. Her entry and the offer.
 */
async function kimOffered915() {
  const references: string[] = [];
  for (const hour of ['09:15', '10:15', '11:15']) {
    const booked = await bookAna(t, `${MONDAY}T${hour}:00Z`);
    expect(booked.statusCode, booked.body).toBe(201);
    references.push(booked.json().data.reference);
  }
  const { id: entryId } = await joinForAna(t, 'Kim', {
    from_date: MONDAY,
    to_date: MONDAY,
    times: ['morning'],
  });
  await t.request({ method: 'POST', url: `/v1/bookings/${references[0]}/cancel` });
  expect(await waitlistPass(t)).toBe(1);
  const entry = (await t.request({ method: 'GET', url: `/v1/waitlist/${entryId}` })).json().data;
  expect(entry.offer).toMatchObject({ starts_at: `${MONDAY}T09:15:00+00:00` });
  return { entryId, offer: entry.offer as { booking_reference: string; expires_at: string } };
}

/** A stranger's cut with Ana at 09:15 on the public page, booked at 09:00 (its code held an hour, but only until the start): its page and reference. */
async function publicCutAt915() {
  const path = pagePathOf(
    await bookOnPage(t, 'acme-hair', {
      location: 'soho',
      service: 'cut',
      startsAt: `${MONDAY}T09:15:00Z`,
      phone: '07400 654321',
    }),
  );
  return { path, reference: await referenceOnPage(t, path) };
}

/** A new code asked for on the booking's page at 09:08 (good until 09:18, past the 09:15 start). */
async function newCodeAt0908(path: string, reference: string): Promise<string> {
  t.clock.set(`${MONDAY}T09:08:00Z`);
  const resent = await pagePost(t, `${path}/resend`);
  expect(resent.statusCode, resent.body).toBe(303);
  return (await deliveredCode(t, reference)).code;
}

/** The booking's stored hold made to run past its start, as holds made before this rule could. */
async function holdPastStart(reference: string) {
  await t.database.db
    .updateTable('bookings')
    .set({ hold_expires_at: Date.parse('2026-11-23T10:30:00Z') })
    .where('reference', '=', reference)
    .execute();
  await t.database.db
    .updateTable('checkout_sessions')
    .set({ expires_at: Date.parse('2026-11-23T10:30:00Z') })
    .execute();
}

describe('a hold is never held past its start', () => {
  it('a deposit’s hold ends at the start when its minutes would run past it, and cannot be paid after', async () => {
    await start();
    const { reference, checkout } = await colourWithDeposit(`${MONDAY}T09:15:00Z`);
    expect((await bookingOf(reference)).hold_expires_at).toBe(`${MONDAY}T09:15:00Z`);
    t.clock.advance({ minutes: 20 });
    const paid = await t.app.inject({ method: 'POST', url: `${checkout}/pay`, headers: FORM });
    expect(paid.statusCode, paid.body).toBe(409);
    expect(paid.body).toContain('not paid in time');
    expect(await bookingOf(reference)).toMatchObject({ status: 'expired', deposit_status: 'pending' });
  });

  it('a waitlist offer is held until its start at most, and cannot be claimed after it', async () => {
    await start();
    const { entryId, offer } = await kimOffered915();
    expect(offer.expires_at).toBe(`${MONDAY}T09:15:00Z`);
    t.clock.advance({ minutes: 20 });
    const page = await bookingPagePathOf(t, offer.booking_reference);
    const claimed = await t.app.inject({ method: 'POST', url: `${page}/claim`, headers: FORM });
    expect(claimed.statusCode, claimed.body).toBe(409);
    expect(claimed.body).toContain('This time is no longer held for you.');
    expect((await bookingOf(offer.booking_reference)).status).toBe('expired');
    const entry = (await t.request({ method: 'GET', url: `/v1/waitlist/${entryId}` })).json().data;
    expect(entry).toMatchObject({ status: 'waiting', offer: null });
  });

  it('a public booking’s hold ends at the start, and its code entered after it confirms nothing', async () => {
    await start();
    const { path, reference } = await publicCutAt915();
    expect((await bookingOf(reference)).pending_confirmation.expires_at).toBe(`${MONDAY}T09:15:00Z`);
    const code = await newCodeAt0908(path, reference);
    t.clock.set(`${MONDAY}T09:16:00Z`);
    const entered = await pagePost(t, `${path}/verify`, { code });
    expect(entered.statusCode, entered.body).toBe(409);
    expect(entered.body).toContain('not confirmed in time');
    expect((await bookingOf(reference)).status).toBe('expired');
  });
});

describe('a hold stored with an expiry past its start lapses at the start', () => {
  it('its deposit is not taken after the start', async () => {
    await start();
    const { reference, checkout } = await colourWithDeposit(`${MONDAY}T09:15:00Z`);
    await holdPastStart(reference);
    t.clock.advance({ minutes: 20 });
    const paid = await t.app.inject({ method: 'POST', url: `${checkout}/pay`, headers: FORM });
    expect(paid.statusCode, paid.body).toBe(409);
    expect(paid.body).toContain('not paid in time');
    expect(await bookingOf(reference)).toMatchObject({ status: 'expired', hold_expires_at: null });
  });

  it('its waitlist offer is not claimed after the start', async () => {
    await start();
    const { offer } = await kimOffered915();
    await holdPastStart(offer.booking_reference);
    t.clock.advance({ minutes: 20 });
    const page = await bookingPagePathOf(t, offer.booking_reference);
    const claimed = await t.app.inject({ method: 'POST', url: `${page}/claim`, headers: FORM });
    expect(claimed.statusCode, claimed.body).toBe(409);
    expect(claimed.body).toContain('This time is no longer held for you.');
    expect((await bookingOf(offer.booking_reference)).status).toBe('expired');
  });

  it('its code does not confirm it after the start', async () => {
    await start();
    const { path, reference } = await publicCutAt915();
    await holdPastStart(reference);
    const code = await newCodeAt0908(path, reference);
    t.clock.set(`${MONDAY}T09:16:00Z`);
    const entered = await pagePost(t, `${path}/verify`, { code });
    expect(entered.statusCode, entered.body).toBe(409);
    expect(entered.body).toContain('not confirmed in time');
    expect((await bookingOf(reference)).status).toBe('expired');
  });
});

describe('a hold moved to an earlier start', () => {
  it('ends at its new start at the latest, and the sweeper writes it expired then', async () => {
    await start();
    const { reference } = await colourWithDeposit(`${MONDAY}T11:00:00Z`);
    expect((await bookingOf(reference)).hold_expires_at).toBe(`${MONDAY}T09:30:00Z`);
    const moved = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${reference}`,
      payload: { starts_at: `${MONDAY}T09:15:00Z` },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().data.hold_expires_at).toBe(`${MONDAY}T09:15:00Z`);
    t.clock.advance({ minutes: 20 });
    await expireLapsedHolds(t.database.db, t.clock.nowMs());
    const stored = await t.database.db
      .selectFrom('bookings')
      .select('status')
      .where('reference', '=', reference)
      .executeTakeFirstOrThrow();
    expect(stored.status).toBe('expired');
  });
});
