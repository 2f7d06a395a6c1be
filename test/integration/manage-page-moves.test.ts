import { afterEach, describe, expect, it } from 'vitest';
import { catalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
import { nightBarberCatalogue } from '../helpers/catalogue-fixtures.ts';
import { demoCatalogue } from '../helpers/mcp-harness.ts';
import { deliver, messagesOf, pageGet, pagePost } from '../helpers/public-booking.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * Moving a booking from its page (issue 45), through real HTTP (inject): the week's days and the
 * grouped times as on the booking page, a stylist to choose (anyone by default), a late move the
 * location forbids said at once instead of listing times that loop, a time taken meanwhile answered
 * with the way to choose again, and an expired hold's "book again" as a link. The demo catalogue
 * (Camden forbids late moves, 24 hours); Monday 23 November 2026, 09:00 in London.
 */
const NOW = '2026-11-23T09:00:00Z';

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

async function staffId(name: string): Promise<string> {
  const staff = await t.request({ method: 'GET', url: '/v1/locations/camden/staff' });
  return staff.json().data.find((s: { name: string }) => s.name === name).id;
}

/** A cut at Camden for Jo, made over REST; its page's path. */
async function cutFor(startsAt: string, staff?: string): Promise<{ path: string; reference: string }> {
  const ids = await catalogueIds(t.database.db);
  const response = await postBooking(t, {
    location_slug: 'camden',
    service_ids: [ids.services.cut],
    client_id: ids.jo,
    starts_at: startsAt,
    ...(staff && { staff_id: staff }),
  });
  expect(response.statusCode, response.body).toBe(201);
  const data = response.json().data;
  return { path: new URL(data.booking_page_url).pathname, reference: data.reference };
}

const radios = (body: string) =>
  [...body.matchAll(/<input type="radio" name="starts_at" value="([^"]+)"/g)].map((m) => m[1]!);

describe('moving a booking from its page', () => {
  it('shows the week’s days and grouped times; a stylist may be chosen and the move goes to them', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const amara = await staffId('Amara Okafor');
    const ben = await staffId('Ben Carter');
    const { path, reference } = await cutFor('2026-11-30T10:00:00Z', amara);
    const times = await pageGet(t, `${path}/reschedule?date=2026-12-01`);
    expect(times.statusCode).toBe(200);
    expect(times.body).toContain('<nav aria-label="Days" class="strip">');
    expect(times.body).toContain('<legend>Morning</legend>');
    expect(times.body).toContain('Times are London time (GMT), where Northside Camden is.');
    expect(times.body).toContain('<select id="staff" name="staff"><option value="">Anyone</option>');
    // A day the calendar does not have, typed into the address: said, never a fault.
    for (const date of ['2026-12-32', '2027-02-29', '2026-13-01']) {
      const odd = await pageGet(t, `${path}/reschedule?date=${date}`);
      expect(odd.statusCode, odd.body).toBe(400);
      expect(odd.body).toContain('Choose a day.');
    }
    const withBen = await pageGet(t, `${path}/reschedule?staff=${ben}&date=2026-12-01`);
    expect(withBen.body).toContain(`<option value="${ben}" selected>Ben Carter</option>`);
    // The stylist is kept by the day strip and by the times' form.
    expect(withBen.body).toContain(
      `<form method="get" action="${path}/reschedule#times"><input type="hidden" name="staff" value="${ben}">`,
    );
    const at = radios(withBen.body)[0]!;
    expect(at).toBe('2026-12-01T10:00Z');
    const preview = await pageGet(t, `${path}/reschedule?staff=${ben}&starts_at=${encodeURIComponent(at)}`);
    expect(preview.statusCode).toBe(200);
    expect(preview.body).toContain(' with Ben Carter.</p>');
    expect(preview.body).toContain(`<input type="hidden" name="staff_id" value="${ben}">`);
    const moved = await pagePost(t, `${path}/reschedule`, { starts_at: at, staff_id: ben });
    expect(moved.statusCode).toBe(303);
    // The page it leads to says the booking was moved, and to when, not only that it is booked.
    expect(moved.headers.location).toBe(`${path}?moved=1`);
    const after = await pageGet(t, moved.headers.location as string);
    expect(after.body).toMatch(
      /<p role="status">Moved: you are now booked for <time datetime="2026-12-01T10:00:00Z">Tuesday, 1 December 2026 at 10:00 London time<\/time> with Ben Carter\. See you then!<\/p>/,
    );
    expect(after.body).not.toContain('You are booked. See you then!');
    // A second tap on the same time moves nothing and leads to the same page.
    const again = await pagePost(t, `${path}/reschedule`, { starts_at: at, staff_id: ben });
    expect(again.headers.location).toBe(`${path}?moved=1`);
    const rest = (await t.request({ method: 'GET', url: `/v1/bookings/${reference}` })).json().data;
    expect(rest).toMatchObject({ staff_id: ben });
    expect(Date.parse(rest.starts_at)).toBe(Date.parse(at));
  });

  it('its messages offer a move only while the location allows one: a reminder inside the window says see or cancel', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const { reference } = await cutFor('2026-11-30T10:00:00Z');
    const words = async (kind: string) => {
      await deliver(t);
      const sent = (await messagesOf(t, reference)).filter((m) => m.kind === kind && m.channel === 'sms');
      expect(sent.length, kind).toBe(1);
      return JSON.parse(sent[0]!.body!).text as string;
    };
    expect(await words('confirmed')).toContain('See, move or cancel it: https://book.example/p/manage/');
    // 24 hours before: Camden forbids late moves, and the page would refuse one.
    t.clock.set('2026-11-29T10:00:00Z');
    const reminder = await words('reminder');
    expect(reminder).toContain('See or cancel it: https://book.example/p/manage/');
    expect(reminder).not.toContain('move');
  });

  it('a hold moved from its page is told as still to be finished, by when its hold lapses', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const ids = await catalogueIds(t.database.db);
    const held = await postBooking(t, {
      location_slug: 'camden',
      service_ids: [ids.services.colour],
      client_id: ids.jo,
      starts_at: '2026-11-30T10:00:00Z',
    });
    expect(held.statusCode, held.body).toBe(201);
    const { reference, status, booking_page_url: url } = held.json().data;
    expect(status).toBe('pending_payment');
    const path = new URL(url).pathname;
    const times = await pageGet(t, `${path}/reschedule?date=2026-12-01`);
    const at = radios(times.body)[0]!;
    expect((await pagePost(t, `${path}/reschedule`, { starts_at: at })).statusCode).toBe(303);
    await deliver(t);
    const moved = (await messagesOf(t, reference)).filter((m) => m.kind === 'rescheduled');
    expect(moved.length).toBeGreaterThan(0);
    for (const message of moved) {
      const text = JSON.parse(message.body!).text as string;
      expect(text).toContain('Complete your booking by');
      expect(text).not.toContain('See, move or cancel it');
    }
  });

  it('with anyone, a time only another stylist has free moves the booking to them', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const amara = await staffId('Amara Okafor');
    const ben = await staffId('Ben Carter');
    const { path, reference } = await cutFor('2026-11-30T10:00:00Z', amara);
    // Saturday: Ben alone works. Anyone's first time is his.
    const times = await pageGet(t, `${path}/reschedule?date=2026-11-28`);
    const at = radios(times.body)[0]!;
    const preview = await pageGet(t, `${path}/reschedule?starts_at=${encodeURIComponent(at)}`);
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.body).toContain(`<input type="hidden" name="staff_id" value="${ben}">`);
    expect((await pagePost(t, `${path}/reschedule`, { starts_at: at, staff_id: ben })).statusCode).toBe(303);
    expect((await t.request({ method: 'GET', url: `/v1/bookings/${reference}` })).json().data.staff_id).toBe(
      ben,
    );
  });

  it('says before the window what the location’s policy makes of a late move and a late cancellation', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    // Camden forbids late moves and allows late cancellations: the page promises no late move.
    const { path } = await cutFor('2026-11-30T10:00:00Z');
    const camden = (await pageGet(t, path)).body;
    expect(camden).toContain(
      'It cannot be moved here less than 24 hours before the appointment; a cancellation then is late: you will see what that costs before you confirm.',
    );
    expect(camden).toContain('Change the time');
  });

  it('a late move the location forbids: said at once, no times listed, keep or cancel offered', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const { path } = await cutFor('2026-11-23T15:00:00Z');
    const booking = await pageGet(t, path);
    expect(booking.body).not.toContain('Change the time');
    expect(booking.body).toContain(
      'Changes less than 24 hours before the appointment are not allowed here. To ask about another time, call <a href="tel:+442074850000">020 7485 0000</a>.',
    );
    expect(booking.body).toContain('Cancel the booking');
    const refused = await pageGet(t, `${path}/reschedule`);
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain(
      '<p role="alert">Changes less than 24 hours before the appointment are not allowed here.</p>',
    );
    expect(radios(refused.body)).toEqual([]);
    expect(refused.body).toContain(`<a href="${path}">Keep my booking</a>`);
    expect(refused.body).toContain(`<a href="${path}/cancel">Cancel the booking</a>`);
    expect(refused.body).toContain('<a href="tel:+442074850000">020 7485 0000</a>');
  });

  it('a time taken meanwhile: the booking unchanged, and the way to choose another', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const ben = await staffId('Ben Carter');
    const { path } = await cutFor('2026-11-30T10:00:00Z');
    const at = '2026-12-01T10:00:00.000Z';
    await cutFor(at, ben);
    const late = await pagePost(t, `${path}/reschedule`, { starts_at: at, staff_id: ben });
    expect(late.statusCode).toBe(409);
    expect(late.body).toContain(
      '<p role="alert">That time has just been taken. Your booking is unchanged.</p>',
    );
    expect(late.body).toContain(`href="${path}/reschedule?date=2026-12-01#times">Choose another time</a>`);
    expect(late.body).toContain(`<a href="${path}">Keep the current time</a>`);
  });

  it('names the zone the chosen day’s times are in, summer time after the clocks go forward', async () => {
    // The small catalogue: Soho, London; the clocks go forward on Sunday 28 March 2027.
    t = await startTestApp({ now: '2027-03-01T09:00:00Z' });
    const ids = await catalogueIds(t.database.db);
    const response = await postBooking(t, {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      client_id: ids.jo,
      starts_at: '2027-03-16T10:00:00Z',
    });
    const path = new URL(response.json().data.booking_page_url).pathname;
    const march = await pageGet(t, `${path}/reschedule?date=2027-03-23`);
    expect(march.body).toContain('Times are London time (GMT), where Soho is.');
    const april = await pageGet(t, `${path}/reschedule?date=2027-04-06`);
    expect(radios(april.body)[0]).toBe('2027-04-06T08:00Z');
    expect(april.body).toContain('>09:00<');
    expect(april.body).toContain('Times are London time (BST), where Soho is.');
    // The booking page's times say the same.
    const booking = await pageGet(
      t,
      `/p/acme-hair?location=soho&services=${ids.services.cut}&date=2027-04-06`,
    );
    expect(booking.body).toContain('Times are London time (BST), where Soho is.');
  });

  it('names both clocks of the night the clocks change, and when they change, above its times', async () => {
    // Night Cuts: Kit trims in London on Sunday nights from midnight; the clocks go forward at 01:00 on
    // 28 March 2027 and back at 02:00 on 31 October 2027.
    t = await startTestApp({
      catalogues: [
        nightBarberCatalogue({
          sundayUntil: '04:00',
          clients: [{ ref: 'jo', first_name: 'Jo', last_name: 'Bloggs', phone: '+447911123456' }],
        }),
      ],
      now: '2027-03-20T09:00:00Z',
    });
    const ids = await catalogueIds(t.database.db);
    const day = (date: string) =>
      pageGet(t, `/p/night-cuts?location=soho&services=${ids.services.trim}&date=${date}`);
    const forward = (await day('2027-03-28')).body;
    // 00:00 and 00:30 are GMT, 02:00 on BST: one name for the day put the first times an hour out.
    expect(forward).toContain('>00:30<');
    expect(forward).toContain(
      'Times are London time (GMT, then BST once the clocks go forward at 01:00), where Soho is.',
    );
    expect((await day('2027-03-21')).body).toContain('Times are London time (GMT), where Soho is.');
    t.clock.set('2027-10-20T09:00:00Z');
    expect((await day('2027-10-31')).body).toContain(
      'Times are London time (BST, then GMT once the clocks go back at 02:00), where Soho is.',
    );
    // The booking's own page, where it is moved, says the same.
    const booked = await t.request({
      method: 'POST',
      url: '/v1/bookings',
      payload: {
        location_slug: 'soho',
        service_ids: [ids.services.trim],
        starts_at: '2027-10-24T01:00:00Z',
        client_id: ids.jo,
      },
    });
    expect(booked.statusCode, booked.body).toBe(201);
    const path = new URL(booked.json().data.booking_page_url).pathname;
    expect((await pageGet(t, `${path}/reschedule?date=2027-10-31`)).body).toContain(
      'Times are London time (BST, then GMT once the clocks go back at 02:00), where Soho is.',
    );
  });

  it('names both clocks of a day whose first hour happens twice (Havana goes back at 01:00 to midnight)', async () => {
    // Night Cuts moved to Havana: on Sunday 1 November 2026 the clocks go back at 01:00 (GMT-4) to
    // 00:00 (GMT-5), so 00:00 to 01:00 happens twice, the first time on GMT-4.
    const catalogue = nightBarberCatalogue({
      sundayUntil: '04:00',
      clients: [{ ref: 'jo', first_name: 'Jo', last_name: 'Bloggs', phone: '+447911123456' }],
    });
    catalogue.locations[0]!.timezone = 'America/Havana';
    t = await startTestApp({ catalogues: [catalogue], now: '2026-10-25T12:00:00Z' });
    const ids = await catalogueIds(t.database.db);
    const page = await pageGet(
      t,
      `/p/night-cuts?location=soho&services=${ids.services.trim}&date=2026-11-01`,
    );
    expect(page.body).toContain(
      'Times are Havana time (GMT-4, then GMT-5 once the clocks go back at 01:00), where Soho is.',
    );
    // A week before: one clock all day.
    const before = await pageGet(
      t,
      `/p/night-cuts?location=soho&services=${ids.services.trim}&date=2026-10-25`,
    );
    expect(before.body).toContain('Times are Havana time (GMT-4), where Soho is.');
  });

  it('lists the times an occurrence of a series may move to beyond max_advance_days, as the API allows', async () => {
    // The small catalogue: 60 days ahead at Soho; Ana does Cuts on Tuesdays.
    t = await startTestApp({ now: '2027-03-01T09:00:00Z' });
    const ids = await catalogueIds(t.database.db);
    const series = await postBooking(t, {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      staff_id: ids.staff.ana,
      client_id: ids.jo,
      starts_at: '2027-03-16T10:00:00Z',
      repeat: { every_weeks: 4, count: 6 },
    });
    expect(series.statusCode, series.body).toBe(201);
    const last = series.json().data.series.occurrences.at(-1);
    expect(last.starts_at).toBe('2027-08-03T10:00:00+01:00');
    const { booking_page_url } = (
      await t.request({ method: 'GET', url: `/v1/bookings/${last.reference}` })
    ).json().data;
    const path = new URL(booking_page_url).pathname;
    const times = await pageGet(t, `${path}/reschedule?staff=${ids.staff.ana}&date=2027-08-10`);
    expect(times.body).not.toContain('Too far ahead');
    expect(radios(times.body)).toContain('2027-08-10T08:00Z');
    const moved = await pagePost(t, `${path}/reschedule`, {
      starts_at: '2027-08-10T08:00Z',
      staff_id: ids.staff.ana!,
    });
    expect(moved.statusCode, moved.body).toBe(303);
  });

  it('an expired hold’s page links to booking the same services again', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const ids = await catalogueIds(t.database.db);
    const response = await postBooking(t, {
      location_slug: 'camden',
      service_ids: [ids.services.colour],
      client_id: ids.jo,
      starts_at: '2026-11-30T10:00:00Z',
    });
    const path = new URL(response.json().data.booking_page_url).pathname;
    t.clock.advance({ minutes: 31 });
    const expired = await pageGet(t, path);
    expect(expired.body).toContain('Booking expired');
    expect(expired.body).toContain(
      `<a href="/p/northside-hair?location=camden&amp;services=${ids.services.colour}">Book again</a>`,
    );
  });
  it('a booking at a location made inactive: its page shows it and cancels it, and offers no move', async () => {
    t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
    const { path, reference } = await cutFor('2026-11-30T10:00:00Z');
    const ids = await catalogueIds(t.database.db);
    const held = await postBooking(t, {
      location_slug: 'camden',
      service_ids: [ids.services.colour],
      client_id: ids.jo,
      starts_at: '2026-12-01T10:00:00Z',
    });
    const heldPath = new URL(held.json().data.booking_page_url).pathname;
    await t.database.db.updateTable('locations').set({ active: 0 }).where('slug', '=', 'camden').execute();
    const booking = await pageGet(t, path);
    expect(booking.statusCode, booking.body).toBe(200);
    expect(booking.body).toContain('Booking confirmed');
    expect(booking.body).toContain(reference);
    expect(booking.body).not.toContain('Change the time');
    expect(booking.body).toContain('no longer takes bookings, so this one cannot be moved');
    expect(booking.body).toContain(`<a href="${path}/cancel">Cancel the booking</a>`);
    const move = await pageGet(t, `${path}/reschedule`);
    expect(move.statusCode).toBe(409);
    expect(move.headers['content-type']).toMatch(/^text\/html/);
    expect(radios(move.body)).toEqual([]);
    expect(move.body).toContain(`<a href="${path}/cancel">Cancel the booking</a>`);
    const moved = await pagePost(t, `${path}/reschedule`, { starts_at: '2026-12-01T10:00:00.000Z' });
    expect(moved.statusCode).toBe(409);
    const preview = await pageGet(t, `${path}/cancel`);
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.body).toContain('Yes, cancel it');
    const cancelled = await pagePost(t, `${path}/cancel`);
    expect(cancelled.statusCode, cancelled.body).toBe(303);
    expect((await pageGet(t, path)).body).toContain('Booking cancelled');
    const rest = await t.request({ method: 'GET', url: `/v1/bookings/${reference}` });
    expect(rest.json().data.status).toBe('cancelled');
    // A hold there that lapsed: booking again starts from the salon's page, not the closed location's.
    t.clock.advance({ minutes: 31 });
    const expired = await pageGet(t, heldPath);
    expect(expired.body).toContain('Booking expired');
    expect(expired.body).toContain('<a href="/p/northside-hair">Book again</a>');
  });
});
