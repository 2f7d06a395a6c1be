import { afterEach, describe, expect, it } from 'vitest';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { type CatalogueIds, catalogueIds, getBooking, postBooking } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { connectInProcess, type McpHarness } from '../helpers/mcp-harness.ts';
import {
  bookOnPage,
  deliveredCode,
  pageGet,
  pagePathOf,
  pagePost,
  referenceOnPage,
} from '../helpers/public-booking.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { bookAnaOnTuesday, joinForAna, TUESDAY, waitlistPass } from '../helpers/waitlist-fixtures.ts';

/**
 * A booking the customer finishes through a link (a deposit to pay, Booking Protection's card to
 * save) is held until the start at the latest, so with no minimum notice one starting now would be
 * held for no time at all: it needs min(its hold's minutes, 15) minutes' notice, and availability, the
 * MCP tools and the public page offer none sooner. Both locations take bookings with no notice:
 * Soho (Colour carries a £20 deposit held 30 minutes; a Cut none) and Kings Cross (Booking Protection,
 * its card held 15 minutes). Monday 23 November 2026, 09:00 in London: Ana works at Soho on Mondays
 * 09:00-17:00, Bo at Kings Cross on Thursdays 10:00-18:00.
 */
const MONDAY = '2026-11-23';
const THURSDAY = '2026-11-26';

let t: TestApp;
let ids: CatalogueIds;
afterEach(async () => {
  await t?.close();
});

function catalogue(policy: Record<string, unknown> = {}, policies?: Record<string, unknown>) {
  const c = smallCatalogue();
  if (policies) (c as Record<string, unknown>).policies = policies;
  for (const location of c.locations) {
    (location as Record<string, unknown>).policy = { min_notice_minutes: 0, ...policy };
  }
  return c;
}

async function start(policy: Record<string, unknown> = {}, policies?: Record<string, unknown>) {
  t = await startTestApp({ catalogues: [catalogue(policy, policies)], now: `${MONDAY}T09:00:00Z` });
  ids = await catalogueIds(t.database.db);
}

/** The catalogue imported again with `slug`'s Booking Protection on or off (and `policy` for all). */
async function protectionAt(slug: string, applies: boolean, policy: Record<string, unknown> = {}) {
  const c = catalogue(policy);
  const location = c.locations.find((l) => l.slug === slug)!;
  location.booking_protection = applies
    ? { applies: true, late_cancellation_fee_percentage: 50, no_show_fee_percentage: 100 }
    : { applies: false, late_cancellation_fee_percentage: null, no_show_fee_percentage: null };
  await importCatalogue(t.database.db, c, t.clock.nowMs());
}

/** PATCH /v1/bookings/{reference} to `startsAt`. */
function move(reference: string, startsAt: string) {
  return t.request({ method: 'PATCH', url: `/v1/bookings/${reference}`, payload: { starts_at: startsAt } });
}

/** Jo's Colour (its £20 deposit) at Soho, through POST /v1/bookings. */
function bookColour(startsAt: string) {
  return postBooking(t, {
    location_slug: 'soho',
    service_ids: [ids.services.colour],
    client_id: ids.jo,
    starts_at: startsAt,
  });
}

/** Jo's Cut at Kings Cross (Booking Protection), held for her card: POST /v1/bookings/protected-holds. */
function holdAtKingsCross(startsAt: string) {
  return t.request({
    method: 'POST',
    url: '/v1/bookings/protected-holds',
    payload: {
      location_slug: 'kings-cross',
      service_ids: [ids.services.cut],
      client_id: ids.jo,
      starts_at: startsAt,
    },
  });
}

/** Jo's booking through MCP book. */
function bookOverMcp(mcp: McpHarness, location: string, services: string, startsAt: string) {
  return mcp.call('book', { location, services, starts_at: startsAt, client_id: ids.jo });
}

/** A stranger's `service` at Soho at `time` on Monday, through the public page (acme-hair's). */
function bookOnSohoPage(service: string, time: string) {
  return bookOnPage(t, 'acme-hair', {
    location: 'soho',
    service,
    startsAt: `${MONDAY}T${time}Z`,
    phone: '07400 654321',
  });
}

async function restStarts(location: string, service: string, date: string): Promise<string[]> {
  const response = await t.request({
    method: 'GET',
    url: `/v1/locations/${location}/availability?service_ids=${service}&date=${date}&days=1`,
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data.slots.map((slot: { starts_at: string }) => slot.starts_at);
}

describe('a booking that waits for its deposit', () => {
  it('is not offered, by availability, find_slots or the public page, sooner than 15 minutes ahead', async () => {
    await start();
    expect((await restStarts('soho', ids.services.colour!, MONDAY)).slice(0, 2)).toEqual([
      `${MONDAY}T09:15:00+00:00`,
      `${MONDAY}T09:30:00+00:00`,
    ]);
    // A cut needs nothing paid: bookable from now, as the location's notice says.
    expect((await restStarts('soho', ids.services.cut!, MONDAY))[0]).toBe(`${MONDAY}T09:00:00+00:00`);

    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      const found = await mcp.call('find_slots', {
        location: 'soho',
        services: 'colour',
        date: 'today',
        limit: 10,
      });
      expect(found.ok).toBe(true);
      expect(found.slots[0].starts_at).toBe(`${MONDAY}T09:15:00+00:00`);
    } finally {
      await mcp.close();
    }

    const page = await pageGet(
      t,
      `/p/acme-hair?location=soho&services=${ids.services.colour}&date=${MONDAY}`,
    );
    expect(page.statusCode, page.body).toBe(200);
    const radios = [...page.body.matchAll(/<input type="radio" name="starts_at" value="([^"]+)"/g)];
    expect(radios[0]?.[1]).toBe(`${MONDAY}T09:15Z`);
  });

  it('starting now is refused as too soon, saying the deposit is paid before the start', async () => {
    await start();
    const response = await bookColour(`${MONDAY}T09:00:00Z`);
    expect(response.statusCode, response.body).toBe(409);
    const { error } = response.json();
    expect(error).toMatchObject({
      code: 'conflict',
      reason: 'too_soon',
      param: 'starts_at',
      details: {
        min_notice_minutes: 15,
        earliest_starts_at: `${MONDAY}T09:15:00+00:00`,
        // The hold that asked for more than the location's notice, by name (MCP words it from this).
        hold_step: 'deposit',
      },
    });
    expect(error.message).toMatch(/deposit .*paid before/);
    // 15 minutes ahead it is taken, held until its start.
    const later = await bookColour(`${MONDAY}T09:15:00Z`);
    expect(later.statusCode, later.body).toBe(201);
    expect(later.json().data).toMatchObject({
      status: 'pending_payment',
      hold_expires_at: `${MONDAY}T09:15:00Z`,
    });
  });

  it('on the public page, starting now, is refused and nothing is held', async () => {
    await start();
    const response = await bookOnSohoPage('colour', '09:00:00');
    expect(response.statusCode).not.toBe(303);
    expect(response.body).toMatch(/deposit/);
    const held = await t.database.db.selectFrom('bookings').select('id').execute();
    expect(held).toEqual([]);
  });

  it('needs no more notice than its hold lasts, where that is shorter', async () => {
    await start({ pending_payment_hold_minutes: 5 });
    expect((await restStarts('soho', ids.services.colour!, MONDAY))[0]).toBe(`${MONDAY}T09:15:00+00:00`);
    t.clock.set(`${MONDAY}T09:09:00Z`);
    // Six minutes ahead: the whole five-minute hold fits before the start.
    expect((await restStarts('soho', ids.services.colour!, MONDAY))[0]).toBe(`${MONDAY}T09:15:00+00:00`);
    t.clock.set(`${MONDAY}T09:11:00Z`);
    expect((await restStarts('soho', ids.services.colour!, MONDAY))[0]).toBe(`${MONDAY}T09:30:00+00:00`);
  });

  it('once paid, may still be moved to a time starting now', async () => {
    await start();
    const booked = await bookColour(`${MONDAY}T11:00:00Z`);
    expect(booked.statusCode, booked.body).toBe(201);
    const { reference, payment_url } = booked.json().data;
    const paid = await t.app.inject({
      method: 'POST',
      url: `${new URL(payment_url).pathname}/pay`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:80' },
    });
    expect(paid.statusCode, paid.body).toBeLessThan(400);
    expect((await getBooking(t, reference)).json().data.status).toBe('confirmed');
    const moved = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${reference}`,
      payload: { starts_at: `${MONDAY}T09:00:00Z` },
    });
    expect(moved.statusCode, moved.body).toBe(200);
  });

  it('still unpaid, is not moved to a time starting now', async () => {
    await start();
    const booked = await bookColour(`${MONDAY}T11:00:00Z`);
    const moved = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${booked.json().data.reference}`,
      payload: { starts_at: `${MONDAY}T09:00:00Z` },
    });
    expect(moved.statusCode, moved.body).toBe(409);
    expect(moved.json().error).toMatchObject({ reason: 'too_soon', param: 'starts_at' });
  });
});

describe('a booking under Booking Protection', () => {
  it('is offered and held from 15 minutes ahead, and refused as too soon before', async () => {
    await start();
    t.clock.set(`${THURSDAY}T10:00:00Z`);
    expect((await restStarts('kings-cross', ids.services.cut!, THURSDAY))[0]).toBe(
      `${THURSDAY}T10:15:00+00:00`,
    );
    const now = await holdAtKingsCross(`${THURSDAY}T10:00:00Z`);
    expect(now.statusCode, now.body).toBe(409);
    expect(now.json().error).toMatchObject({ reason: 'too_soon', param: 'starts_at' });
    expect(now.json().error.message).toMatch(/card/);
    const later = await holdAtKingsCross(`${THURSDAY}T10:15:00Z`);
    expect(later.statusCode, later.body).toBe(201);
    expect(later.json().data.hold_expires_at).toBe(`${THURSDAY}T10:15:00Z`);
  });
});

describe('a booking still held, moved', () => {
  it('keeps the Booking Protection it was made under, though the location has turned it off since', async () => {
    await start();
    t.clock.set(`${THURSDAY}T09:50:00Z`);
    const held = await holdAtKingsCross(`${THURSDAY}T12:00:00Z`);
    expect(held.statusCode, held.body).toBe(201);
    const { reference } = held.json().data;
    await protectionAt('kings-cross', false);
    // Its card is still to be saved: a start now would end its hold at once.
    t.clock.set(`${THURSDAY}T10:00:00Z`);
    const soon = await move(reference, `${THURSDAY}T10:00:00Z`);
    expect(soon.statusCode, soon.body).toBe(409);
    expect(soon.json().error).toMatchObject({
      reason: 'too_soon',
      details: { min_notice_minutes: 15 },
    });
    expect(soon.json().error.message).toMatch(/card/);
    // Its page offers the same times to move to.
    const page = await pageGet(t, `${new URL(held.json().data.booking_page_url).pathname}/reschedule`);
    expect(page.statusCode, page.body).toBe(200);
    const radios = [...page.body.matchAll(/<input type="radio" name="starts_at" value="([^"]+)"/g)];
    expect(radios[0]?.[1]).toBe(`${THURSDAY}T10:15Z`);
    const moved = await move(reference, `${THURSDAY}T10:15:00Z`);
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().data).toMatchObject({
      status: 'pending_confirmation',
      hold_expires_at: `${THURSDAY}T10:05:00Z`,
    });
  });

  it('keeps the deposit hold it was made under, though the location has turned Booking Protection on since', async () => {
    await start({ pending_confirmation_hold_minutes: 5 });
    const booked = await bookColour(`${MONDAY}T11:00:00Z`);
    expect(booked.statusCode, booked.body).toBe(201);
    const { reference } = booked.json().data;
    await protectionAt('soho', true, { pending_confirmation_hold_minutes: 5 });
    // Its deposit is held 30 minutes: a start 10 minutes ahead leaves less than the 15 to pay it (a
    // card held 5 minutes, which it never needed, would have left enough).
    t.clock.set(`${MONDAY}T09:05:00Z`);
    const soon = await move(reference, `${MONDAY}T09:15:00Z`);
    expect(soon.statusCode, soon.body).toBe(409);
    expect(soon.json().error).toMatchObject({ reason: 'too_soon', details: { min_notice_minutes: 15 } });
    expect(soon.json().error.message).toMatch(/deposit/);
    expect((await move(reference, `${MONDAY}T09:30:00Z`)).statusCode).toBe(200);
  });
});

/** The first starts the public page offers for a cut at Soho on Monday. */
async function pageStarts(): Promise<string[]> {
  const page = await pageGet(t, `/p/acme-hair?location=soho&services=${ids.services.cut}&date=${MONDAY}`);
  expect(page.statusCode, page.body).toBe(200);
  return [...page.body.matchAll(/<input type="radio" name="starts_at" value="([^"]+)"/g)].map((m) => m[1]!);
}

describe('a public booking that waits for its code', () => {
  it('is not offered, nor taken, sooner than its hold leaves time to type the code', async () => {
    await start();
    t.clock.set(`${MONDAY}T08:59:30Z`);
    // A cut needs no deposit, but the page holds it 15 minutes (pending_confirmation_hold_minutes)
    // for its code: a start 30 seconds ahead would be held 30 seconds.
    expect((await pageStarts()).slice(0, 2)).toEqual([`${MONDAY}T09:15Z`, `${MONDAY}T09:30Z`]);
    const soon = await bookOnSohoPage('cut', '09:00:00');
    expect(soon.statusCode).not.toBe(303);
    expect(soon.body).toMatch(/code sent to confirm it must be entered before the appointment starts/);
    expect(await t.database.db.selectFrom('bookings').select('id').execute()).toEqual([]);

    // 15 minutes ahead it is held its 15 minutes, and the code typed then confirms it.
    const later = await bookOnSohoPage('cut', '09:15:00');
    const path = pagePathOf(later);
    const reference = await referenceOnPage(t, path);
    expect((await getBooking(t, reference)).json().data).toMatchObject({
      status: 'pending_confirmation',
      hold_expires_at: `${MONDAY}T09:14:30Z`,
    });
    const { code } = await deliveredCode(t, reference);
    t.clock.set(`${MONDAY}T09:08:00Z`);
    const typed = await pagePost(t, `${path}/verify`, { code });
    expect(typed.statusCode, typed.body).toBe(303);
    expect(typed.headers.location, 'the code is refused').toBe(path);
    expect((await getBooking(t, reference)).json().data.status).toBe('confirmed');
  });

  it("needs only the location's notice where no code is asked", async () => {
    await start({}, { public_verification: 'none' });
    expect((await pageStarts())[0]).toBe(`${MONDAY}T09:00Z`);
    const now = await bookOnSohoPage('cut', '09:00:00');
    expect(now.statusCode, now.body).toBe(303);
  });
});

describe('a waitlist offer without a deposit', () => {
  it('is made only of a time its hold leaves the customer time to claim', async () => {
    await start();
    // Ana's Tuesday full; Ada waits for any cut with her that day.
    const booked = await bookAnaOnTuesday(t, ['09', '10', '11', '12', '13', '14', '15', '16']);
    const joined = await joinForAna(t, 'Ada');
    const entry = async () =>
      (await t.request({ method: 'GET', url: `/v1/waitlist/${joined.id}` })).json().data;
    // 13:00 and 14:00 are given up at 12:59:30: 13:00 would be held 30 seconds of the 15 minutes
    // an offer is held (waitlist_offer_minutes), so 13:15 is offered, held the whole 15.
    t.clock.set(`${TUESDAY}T12:59:30Z`);
    for (const hour of ['13', '14']) {
      const cancelled = await t.request({ method: 'POST', url: `/v1/bookings/${booked.get(hour)}/cancel` });
      expect(cancelled.statusCode, cancelled.body).toBe(200);
    }
    expect(await waitlistPass(t)).toBe(1);
    expect((await entry()).offer).toMatchObject({
      starts_at: `${TUESDAY}T13:15:00+00:00`,
      expires_at: `${TUESDAY}T13:14:30Z`,
    });
  });
});

describe('the MCP tools', () => {
  it('say the longer notice is for bookings with a deposit or card, in a refusal and in get_location_info', async () => {
    await start();
    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      t.clock.set(`${MONDAY}T08:50:00Z`);
      const soon = await bookOverMcp(mcp, 'soho', 'colour', `${MONDAY}T09:00:00Z`);
      expect(soon).toMatchObject({ ok: false, code: 'conflict', reason: 'too_soon' });
      expect(soon.hint).toBe(
        "That is too soon: bookings that need a deposit paid first need 15 minutes' notice there; offer the earliest free times in alternatives.",
      );
      const soho = await mcp.call('get_location_info', { location: 'soho' });
      expect(soho.policy_spoken).toMatch(
        /Bookings need no notice and are taken up to \d+ days ahead; bookings that need a deposit paid first need 15 minutes' notice\.$/,
      );

      t.clock.set(`${THURSDAY}T09:50:00Z`);
      const protectedSoon = await bookOverMcp(mcp, 'kings-cross', 'cut', `${THURSDAY}T10:00:00Z`);
      expect(protectedSoon).toMatchObject({ ok: false, code: 'conflict', reason: 'too_soon' });
      expect(protectedSoon.hint).toMatch(
        /^That is too soon: bookings that need a card saved first need 15 minutes' notice there;/,
      );
      const kingsCross = await mcp.call('get_location_info', { location: 'kings-cross' });
      expect(kingsCross.policy_spoken).toMatch(
        /; bookings that need a card saved first need 15 minutes' notice\.$/,
      );
    } finally {
      await mcp.close();
    }
  });

  it('say what a held booking moved needs its longer notice for: a waitlist offer its claim', async () => {
    await start();
    // As below: 13:00 and 14:00 given up at 12:59:30, 13:15 offered to Ada and held 15 minutes.
    const booked = await bookAnaOnTuesday(t, ['09', '10', '11', '12', '13', '14', '15', '16']);
    const joined = await joinForAna(t, 'Ada');
    t.clock.set(`${TUESDAY}T12:59:30Z`);
    for (const hour of ['13', '14']) {
      const cancelled = await t.request({ method: 'POST', url: `/v1/bookings/${booked.get(hour)}/cancel` });
      expect(cancelled.statusCode, cancelled.body).toBe(200);
    }
    expect(await waitlistPass(t)).toBe(1);
    const entry = (await t.request({ method: 'GET', url: `/v1/waitlist/${joined.id}` })).json().data;
    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      // Still to be claimed, it is not moved to a start that leaves less than 15 minutes to claim it.
      const soon = await mcp.call('reschedule', {
        reference: entry.offer.booking_reference,
        starts_at: `${TUESDAY}T13:00:00Z`,
      });
      expect(soon).toMatchObject({ ok: false, code: 'conflict', reason: 'too_soon' });
      expect(soon.detail).toMatch(/offered time must be claimed/);
      const rest = await move(entry.offer.booking_reference, `${TUESDAY}T13:00:00Z`);
      expect(rest.json().error.details).toMatchObject({
        min_notice_minutes: 15,
        hold_step: 'waitlist_claim',
      });
      expect(soon.hint).toMatch(
        /^That is too soon: bookings that need an offer claimed first need 15 minutes' notice there;/,
      );
    } finally {
      await mcp.close();
    }
  });

  it('say a start at this very instant is too soon, as REST does, and one before it has passed', async () => {
    await start();
    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      const now = await bookOverMcp(mcp, 'soho', 'colour', `${MONDAY}T09:00:00Z`);
      expect(now).toMatchObject({ ok: false, code: 'conflict', reason: 'too_soon' });
      expect(now.hint).toMatch(/^That is too soon: bookings that need a deposit paid first need 15 minutes'/);
      expect(now.detail).toMatch(/^That time is too soon/);
      expect(now.alternatives[0].starts_at).toBe(`${MONDAY}T09:15:00+00:00`);

      const before = await bookOverMcp(mcp, 'soho', 'colour', `${MONDAY}T08:45:00Z`);
      expect(before).toMatchObject({ ok: false, code: 'conflict', reason: 'too_soon' });
      expect(before.hint).toMatch(/^That time has already passed;/);
    } finally {
      await mcp.close();
    }
  });

  it("say only the location's notice where it is the longer", async () => {
    await start({ min_notice_minutes: 60 });
    const mcp = await connectInProcess(t, t.keys.readWrite);
    try {
      const soon = await bookOverMcp(mcp, 'soho', 'colour', `${MONDAY}T09:30:00Z`);
      expect(soon.hint).toMatch(/^That is too soon: bookings there need 1 hour's notice;/);
      const soho = await mcp.call('get_location_info', { location: 'soho' });
      expect(soho.policy_spoken).toMatch(
        /Bookings need 1 hour's notice and are taken up to \d+ days ahead\.$/,
      );
    } finally {
      await mcp.close();
    }
  });
});
