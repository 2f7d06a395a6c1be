import ICAL from 'ical.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFeed, listCalendarFeeds, revokeCalendarFeed } from '../../src/app/calendars/feeds.ts';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { catalogueIds, postBooking } from '../helpers/booking-fixtures.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A staff member's calendar feed, GET /ical/{token}.ics (design.md 9.6), read back with ical.js as a
 * calendar app would: the right instants, a UID that stays across a reschedule while SEQUENCE goes up,
 * a cancelled booking gone, a pending hold tentative, the client's first name only, 404 once revoked.
 */

let t: TestApp;
let ids: Awaited<ReturnType<typeof catalogueIds>>;
let token: string;
let feedId: string;

beforeAll(async () => {
  t = await startTestApp();
  ids = await catalogueIds(t.database.db);
  const made = await createFeed(t.database.db, ids.organisation, 'ana', t.clock.nowMs());
  token = made.token;
  feedId = made.feed.id;
});

afterAll(async () => {
  await t.close();
});

const feed = (headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url: `/ical/${token}.ics`, headers });

function eventsOf(body: string) {
  const calendar = new ICAL.Component(ICAL.parse(body) as unknown[]);
  return calendar.getAllSubcomponents('vevent').map((component) => {
    const event = new ICAL.Event(component);
    return {
      uid: event.uid,
      summary: event.summary,
      location: event.location,
      start: event.startDate.toJSDate().toISOString(),
      end: event.endDate.toJSDate().toISOString(),
      sequence: event.sequence,
      status: String(component.getFirstPropertyValue('status')),
      lastModified: (component.getFirstPropertyValue('last-modified') as ICAL.Time).toJSDate().getTime(),
    };
  });
}

async function book(serviceRef: string, startsAt: string): Promise<{ id: string; reference: string }> {
  const response = await postBooking(t, {
    location_slug: 'soho',
    service_ids: [ids.services[serviceRef]],
    staff_id: ids.staff.ana,
    client_id: ids.jo,
    starts_at: startsAt,
  });
  expect(response.statusCode, response.body).toBe(201);
  const { reference } = response.json().data;
  // The REST resource names a booking by its reference; the feed's UID carries its id.
  const row = await t.database.db
    .selectFrom('bookings')
    .select('id')
    .where('reference', '=', reference)
    .executeTakeFirstOrThrow();
  return { id: row.id, reference };
}

describe('GET /ical/{token}.ics', () => {
  let booked: { id: string; reference: string };
  let first: ReturnType<typeof eventsOf>[number];

  it('lists the staff member’s bookings as a calendar, the client by first name only', async () => {
    booked = await book('cut', '2026-11-24T09:00:00+00:00');
    const response = await feed();
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/calendar; charset=utf-8');
    expect(response.headers['cache-control']).toBe('private, no-cache');
    expect(response.body).not.toContain('Bloggs');
    expect(response.body.endsWith('END:VCALENDAR\r\n')).toBe(true);
    for (const line of response.body.split('\r\n')) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(75);
    const events = eventsOf(response.body);
    expect(events).toHaveLength(1);
    first = events[0]!;
    expect(first).toMatchObject({
      uid: booked.id,
      summary: 'Cut – Jo',
      location: 'Soho',
      start: '2026-11-24T09:00:00.000Z',
      end: '2026-11-24T09:45:00.000Z',
      status: 'CONFIRMED',
    });
  });

  it('gives a staff member with no bookings a calendar with one component, a zone, and no event', async () => {
    // RFC 5545 3.6: a calendar holds at least one component; stricter clients refuse one with none.
    const made = await createFeed(t.database.db, ids.organisation, 'bo', t.clock.nowMs());
    const response = await t.app.inject({ method: 'GET', url: `/ical/${made.token}.ics` });
    expect(response.statusCode).toBe(200);
    const calendar = new ICAL.Component(ICAL.parse(response.body) as unknown[]);
    expect(calendar.getAllSubcomponents().map((c) => c.name)).toEqual(['vtimezone']);
    expect(calendar.getFirstSubcomponent('vtimezone')!.getFirstPropertyValue('tzid')).toBe('UTC');
    expect(eventsOf(response.body)).toEqual([]);
    await revokeCalendarFeed(t.database.db, ids.organisation, made.feed.id, t.clock.nowMs());
  });

  it('gives each event the same UID whichever name the server is reached by', async () => {
    const uids = async (host: string) => eventsOf((await feed({ host })).body).map((e) => e.uid);
    const here = await uids('localhost');
    expect(here).toEqual([booked.id]);
    expect(await uids('127.0.0.1:8080')).toEqual(here);
    expect(await uids('calendar.example.com')).toEqual(here);
  });

  it('answers 304 to a client holding the same ETag', async () => {
    const response = await feed();
    const etag = String(response.headers.etag);
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await feed({ 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
  });

  it('keeps the UID across a reschedule, with a higher SEQUENCE and the new instants', async () => {
    const etag = String((await feed()).headers.etag);
    t.clock.advance({ minutes: 5 });
    const moved = await t.request({
      method: 'PATCH',
      url: `/v1/bookings/${booked.reference}`,
      payload: { starts_at: '2026-11-24T11:30:00+00:00' },
    });
    expect(moved.statusCode, moved.body).toBe(200);
    const response = await feed({ 'if-none-match': etag });
    expect(response.statusCode).toBe(200);
    const [event] = eventsOf(response.body);
    expect(event).toMatchObject({
      uid: first.uid,
      start: '2026-11-24T11:30:00.000Z',
      end: '2026-11-24T12:15:00.000Z',
    });
    expect(event!.sequence).toBeGreaterThan(first.sequence);
    expect(event!.lastModified).toBeGreaterThan(first.lastModified);
  });

  it('raises SEQUENCE with each change made within the same second, as with the one before it', async () => {
    // The clock stands still: the booking is made, moved and moved back at the same instant, as an
    // integrator's script may do.
    const quick = await book('cut', '2026-11-30T09:00:00+00:00');
    const sequenceOfQuick = async () => {
      const event = eventsOf((await feed()).body).find((e) => e.uid === quick.id);
      return event!.sequence;
    };
    const made = await sequenceOfQuick();
    const sequences = [made];
    for (const startsAt of ['2026-11-30T11:00:00+00:00', '2026-11-30T09:00:00+00:00']) {
      const moved = await t.request({
        method: 'PATCH',
        url: `/v1/bookings/${quick.reference}`,
        payload: { starts_at: startsAt },
      });
      expect(moved.statusCode, moved.body).toBe(200);
      sequences.push(await sequenceOfQuick());
    }
    expect(sequences).toEqual([made, made + 1, made + 2]);
    const cancelled = await t.request({
      method: 'POST',
      url: `/v1/bookings/${quick.reference}/cancel`,
      payload: {},
    });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
  });

  it('shows a pending hold as tentative, and drops a cancelled booking', async () => {
    const hold = await book('colour', '2026-11-30T14:00:00+00:00');
    let events = eventsOf((await feed()).body);
    expect(events.find((e) => e.uid === hold.id)).toMatchObject({
      status: 'TENTATIVE',
      summary: 'Colour – Jo',
    });
    const cancelled = await t.request({
      method: 'POST',
      url: `/v1/bookings/${booked.reference}/cancel`,
      payload: {},
    });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    events = eventsOf((await feed()).body);
    expect(events.map((e) => e.uid)).toEqual([hold.id]);
    // Once the hold has lapsed it is expired, whether or not the sweeper has written so.
    t.clock.advance({ hours: 2 });
    expect(eventsOf((await feed()).body)).toEqual([]);
  });

  it('answers 404 for an unknown or revoked address, the same way', async () => {
    const unknown = await t.app.inject({ method: 'GET', url: `/ical/${'A'.repeat(43)}.ics` });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({
      error: { code: 'not_found', message: 'No calendar feed has this address.' },
    });
    expect((await t.app.inject({ method: 'GET', url: `/ical/${token}` })).statusCode).toBe(404);
    await revokeCalendarFeed(t.database.db, ids.organisation, feedId, t.clock.nowMs());
    const revoked = await feed();
    expect(revoked.statusCode).toBe(404);
    expect(revoked.body).toBe(unknown.body);
  });
});

describe('the feed of a staff member made inactive', () => {
  it('answers the 404 of a revoked address while they are inactive, and again once they are back', async () => {
    const made = await createFeed(t.database.db, ids.organisation, 'ana', t.clock.nowMs());
    const get = (method: 'GET' | 'HEAD' = 'GET') => t.app.inject({ method, url: `/ical/${made.token}.ics` });
    expect((await get()).statusCode).toBe(200);
    const unknown = await t.app.inject({ method: 'GET', url: `/ical/${'A'.repeat(43)}.ics` });
    const away = smallCatalogue();
    (away.staff[0] as Record<string, unknown>).active = false;
    await importCatalogue(t.database.db, away, t.clock.nowMs());
    const inactive = await get();
    expect(inactive.statusCode).toBe(404);
    expect(inactive.body).toBe(unknown.body);
    expect((await get('HEAD')).statusCode).toBe(404);
    // Cy is inactive from the start: no feed is made for them (it would not be served).
    await expect(createFeed(t.database.db, ids.organisation, 'cy', t.clock.nowMs())).rejects.toMatchObject({
      code: 'conflict',
      param: 'staff',
    });
    // The feed is not revoked: the staff member active again, their address serves again.
    const listed = await listCalendarFeeds(t.database.db, ids.organisation, ids.staff.ana);
    expect(listed.find((f) => f.id === made.feed.id)?.revokedAt).toBeNull();
    await importCatalogue(t.database.db, smallCatalogue(), t.clock.nowMs());
    const back = await get();
    expect(back.statusCode).toBe(200);
    expect(back.headers['content-type']).toBe('text/calendar; charset=utf-8');
    expect((await get('HEAD')).statusCode).toBe(200);
  });
});
