import { afterEach, describe, expect, it } from 'vitest';
import { CalendarFetcher } from '../../src/app/calendars/busy-fetch.ts';
import { refreshDueCalendars } from '../../src/app/calendars/refresher.ts';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { catalogueIds, offeredStarts } from '../helpers/booking-fixtures.ts';
import { type CalendarServer, ics, startCalendarServer } from '../helpers/calendar-server.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * How far ahead an external busy calendar is read (design.md 9.6): as far as the staff member's
 * locations take bookings (max_advance_days, up to 3660 days, and the later visits of a recurring
 * series beyond it), not a year only, so a time years ahead is not offered when the stylist's calendar
 * says busy. A loopback server of ICS files, the refresher
 * on the test clock (Monday 23 November 2026, 09:00 UTC), REST availability. Ana does Cuts at Soho on
 * Mondays and Tuesdays 09:00-17:00 (45 minutes and 15 of buffer).
 */

const NOW = '2026-11-23T09:00:00Z';
const REFRESH_MS = 300_000;
const fetcher = new CalendarFetcher(true, { timeoutMs: 1_000, maxBytes: 65_536 });

// Every Tuesday 10:00-11:00 in London (the zone by name), from the first Tuesday on, without end; and
// an evening class of ten Tuesdays 14:00-15:00 that begins in September 2031 (British Summer Time).
const FAR_CALENDAR = ics(
  'BEGIN:VEVENT',
  'UID:standing@example.com',
  'DTSTAMP:20261101T000000Z',
  'DTSTART;TZID=Europe/London:20261124T100000',
  'DTEND;TZID=Europe/London:20261124T110000',
  'RRULE:FREQ=WEEKLY;BYDAY=TU',
  'SUMMARY:Standing appointment',
  'END:VEVENT',
  'BEGIN:VEVENT',
  'UID:class@example.com',
  'DTSTAMP:20261101T000000Z',
  'DTSTART;TZID=Europe/London:20310902T140000',
  'DTEND;TZID=Europe/London:20310902T150000',
  'RRULE:FREQ=WEEKLY;COUNT=10',
  'SUMMARY:Evening class',
  'END:VEVENT',
);

/** Soho's last bookable Tuesday with max_advance_days 3660 (today + 3660 days is Sunday 30 November 2036). */
const LAST_TUESDAY = '2036-11-25';
/**
 * The standing appointment's last Tuesday kept: a series booked on the last bookable day may reach
 * 2,100 days further (every 12 weeks, 26 visits), and the window two days more, to Tuesday 2 September
 * 2042 at 09:00 UTC, when that day's appointment (10:00 BST) begins.
 */
const LAST_KEPT_TUESDAY = '2042-08-26';
/** The evening class's third Tuesday. */
const CLASS_TUESDAY = '2031-09-16';

let t: TestApp | undefined;
let server: CalendarServer | undefined;
afterEach(async () => {
  await t?.close();
  await server?.close();
  t = undefined;
  server = undefined;
});

function catalogueWith(maxAdvanceDays: number | undefined, url: string) {
  const catalogue = smallCatalogue();
  const soho = (catalogue.locations as Record<string, unknown>[])[0]!;
  if (maxAdvanceDays !== undefined) soho.policy = { max_advance_days: maxAdvanceDays };
  (catalogue.staff[0] as Record<string, unknown>).busy_calendars = [url];
  return catalogue;
}

async function start(maxAdvanceDays: number | undefined) {
  server = await startCalendarServer();
  server.serve('/ana.ics', { body: FAR_CALENDAR, etag: '"v1"' });
  t = await startTestApp({ now: NOW, catalogues: [catalogueWith(maxAdvanceDays, server.url('/ana.ics'))] });
}

const refresh = () =>
  refreshDueCalendars({ db: t!.database.db, clock: t!.clock, fetcher, refreshMs: REFRESH_MS });

/** Ana's free starts for a Cut that day (HH:MM, UTC), as availability answers them. */
async function anaStarts(date: string): Promise<string[]> {
  const ids = await catalogueIds(t!.database.db);
  const starts = await offeredStarts(t!, { serviceId: ids.services.cut!, date, staffId: ids.staff.ana });
  return starts.map((start) => start.slice(11, 16));
}

describe('busy calendars read as far ahead as bookings are taken', () => {
  it('block a recurring event years ahead at a location that takes bookings 3660 days ahead', async () => {
    await start(3660);
    // A year on, as before.
    await refresh();
    expect(await anaStarts('2027-11-23')).not.toContain('10:00');
    // Ten years on: the standing appointment's last Tuesday within reach is busy 10:00-11:00.
    const last = await anaStarts(LAST_TUESDAY);
    expect(last).toContain('09:00');
    expect(last).not.toContain('10:00');
    expect(last).not.toContain('10:30');
    expect(last).toContain('11:00');
    // The class that begins in 2031, in summer time (starts as the location's wall clock reads them):
    // 14:00-15:00 is busy, and a cut at 13:00 (with its buffer) ends as it begins.
    const classDay = await anaStarts(CLASS_TUESDAY);
    expect(classDay).toContain('13:00');
    expect(classDay).not.toContain('13:15');
    expect(classDay).not.toContain('14:00');
    expect(classDay).not.toContain('14:45');
    expect(classDay).toContain('15:00');
    // Nothing kept past the furthest a series booked on the last bookable day reaches (and its margin).
    const ids = await catalogueIds(t!.database.db);
    const latest = await t!.database.db
      .selectFrom('staff_busy_blocks')
      .select((eb) => eb.fn.max('starts_at').as('latest'))
      .where('staff_id', '=', ids.staff.ana!)
      .executeTakeFirstOrThrow();
    expect(new Date(Number(latest.latest)).toISOString().slice(0, 10)).toBe(LAST_KEPT_TUESDAY);
  });

  it('keep the year to come of a calendar too large to read ten years ahead, and say so', async () => {
    await start(3660);
    // Half of every hour, from the first of November: 8,808 busy times a year, past the 20,000 a file
    // may give in the third year.
    server!.serve('/ana.ics', {
      etag: '"hourly"',
      body: ics(
        'BEGIN:VEVENT',
        'UID:hourly@example.com',
        'DTSTAMP:20261101T000000Z',
        'DTSTART:20261101T000000Z',
        'DURATION:PT30M',
        'RRULE:FREQ=HOURLY',
        'END:VEVENT',
      ),
    });
    await refresh();
    const state = () =>
      t!.database.db
        .selectFrom('staff_busy_calendars')
        .select(['busy_count', 'last_success_at', 'last_error'])
        .executeTakeFirstOrThrow();
    const read = await state();
    expect(read.last_success_at).toBe(t!.clock.nowMs());
    expect(read.last_error).toBe(
      'busy times read only until 2028-11-24: more than 20000 busy times in the window kept',
    );
    expect(Number(read.busy_count)).toBeGreaterThan(2 * 8000);
    // Blocked within the two years read, as far as they go; not beyond (as before the horizon grew).
    expect(await anaStarts('2027-11-23')).toEqual([]);
    expect(await anaStarts('2028-11-21')).toEqual([]);
    expect(await anaStarts(LAST_TUESDAY)).toContain('10:00');
    // The copy stands on a 304, and so does what it says.
    t!.clock.advance({ milliseconds: REFRESH_MS });
    await refresh();
    expect(server!.requests.at(-1)).toMatchObject({ ifNoneMatch: '"hourly"' });
    expect(await state()).toMatchObject({
      last_success_at: t!.clock.nowMs(),
      last_error: read.last_error,
    });
    // A failed fetch says why; the 304 after it is the same copy, which says again what it said.
    server!.serve('/ana.ics', { status: 503 });
    t!.clock.advance({ milliseconds: REFRESH_MS });
    await refresh();
    expect(await state()).toMatchObject({ last_error: 'the server answered 503' });
    server!.serve('/ana.ics', { etag: '"hourly"', body: 'not read: the answer is 304' });
    t!.clock.advance({ milliseconds: REFRESH_MS });
    await refresh();
    expect(server!.requests.at(-1)).toMatchObject({ ifNoneMatch: '"hourly"' });
    expect(await state()).toMatchObject({
      last_success_at: t!.clock.nowMs(),
      last_error: read.last_error,
    });
  });

  it('read an Outlook calendar, its zones defined from 1601 as Outlook writes them, whole as far ahead', async () => {
    await start(3660);
    // Outlook's zones by their Windows names, each change's rule from 1 January 1601; every Tuesday
    // 10:00-11:00 London time, without end.
    const windowsZone = (name: string, standard: string, daylight: string) => [
      'BEGIN:VTIMEZONE',
      `TZID:${name}`,
      'BEGIN:STANDARD',
      'DTSTART:16010101T020000',
      `TZOFFSETFROM:${daylight}`,
      `TZOFFSETTO:${standard}`,
      'RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=-1SU;BYMONTH=10',
      'END:STANDARD',
      'BEGIN:DAYLIGHT',
      'DTSTART:16010101T010000',
      `TZOFFSETFROM:${standard}`,
      `TZOFFSETTO:${daylight}`,
      'RRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=-1SU;BYMONTH=3',
      'END:DAYLIGHT',
      'END:VTIMEZONE',
    ];
    server!.serve('/ana.ics', {
      etag: '"outlook"',
      body: ics(
        ...windowsZone('GMT Standard Time', '+0000', '+0100'),
        ...windowsZone('W. Europe Standard Time', '+0100', '+0200'),
        'BEGIN:VEVENT',
        'UID:outlook-standing@example.com',
        'DTSTAMP:20261101T000000Z',
        'DTSTART;TZID=GMT Standard Time:20261124T100000',
        'DTEND;TZID=GMT Standard Time:20261124T110000',
        'RRULE:FREQ=WEEKLY;INTERVAL=1;BYDAY=TU',
        'SUMMARY:Standing appointment',
        'END:VEVENT',
        'BEGIN:VEVENT',
        'UID:outlook-call@example.com',
        'DTSTAMP:20261101T000000Z',
        'DTSTART;TZID=W. Europe Standard Time:20270601T160000',
        'DTEND;TZID=W. Europe Standard Time:20270601T170000',
        'SUMMARY:Call with Paris',
        'END:VEVENT',
      ),
    });
    await refresh();
    const state = await t!.database.db
      .selectFrom('staff_busy_calendars')
      .select(['last_success_at', 'last_error'])
      .executeTakeFirstOrThrow();
    expect(state).toEqual({ last_success_at: t!.clock.nowMs(), last_error: null });
    expect(await anaStarts('2027-11-23')).not.toContain('10:00');
    // 16:00 in Paris is 15:00 in London, in summer as in winter.
    const call = await anaStarts('2027-06-01');
    expect(call).toContain('14:00');
    expect(call).not.toContain('15:00');
    expect(call).toContain('16:00');
    const last = await anaStarts(LAST_TUESDAY);
    expect(last).toContain('09:00');
    expect(last).not.toContain('10:00');
    expect(last).toContain('11:00');
  });

  it('block the later visits of a recurring series, which may lie beyond max_advance_days', async () => {
    // max_advance_days 60 (the default): a series whose first visit is within it may reach 2,100 days
    // further (every 12 weeks, 26 visits). Ana's calendar is busy on one Tuesday two years on.
    await start(undefined);
    server!.serve('/ana.ics', {
      etag: '"far"',
      body: ics(
        'BEGIN:VEVENT',
        'UID:far@example.com',
        'DTSTAMP:20261101T000000Z',
        'DTSTART;TZID=Europe/London:20281226T100000',
        'DTEND;TZID=Europe/London:20281226T110000',
        'SUMMARY:Away',
        'END:VEVENT',
      ),
    });
    await refresh();
    const ids = await catalogueIds(t!.database.db);
    // Tuesdays every 12 weeks from 1 December 2026: the tenth is 26 December 2028, 10:00.
    const series = await t!.request({
      method: 'POST',
      url: '/v1/bookings',
      payload: {
        location_slug: 'soho',
        service_ids: [ids.services.cut],
        staff_id: ids.staff.ana,
        client_id: ids.jo,
        starts_at: '2026-12-01T10:00:00Z',
        repeat: { every_weeks: 12, count: 10 },
      },
    });
    expect(series.statusCode, series.body).toBe(409);
    expect(series.json().error.details.clashes).toMatchObject([{ occurrence: 10, date: '2028-12-26' }]);
  });

  it('read further once an import lets the location take bookings further ahead, though the calendar is unchanged', async () => {
    await start(undefined);
    await refresh();
    expect(await anaStarts('2026-12-01')).not.toContain('10:00');
    t!.clock.advance({ minutes: 1 });
    await importCatalogue(t!.database.db, catalogueWith(3660, server!.url('/ana.ics')), t!.clock.nowMs());
    // Before the calendar is read again the far Tuesday is offered: nothing is fetched on a request.
    expect(await anaStarts(LAST_TUESDAY)).toContain('10:00');
    t!.clock.advance({ milliseconds: REFRESH_MS });
    await refresh();
    // Fetched whole (no validators: the copy kept covers a shorter window) and read to the new horizon.
    expect(server!.requests.at(-1)).toMatchObject({ path: '/ana.ics', ifNoneMatch: undefined });
    expect(await anaStarts(LAST_TUESDAY)).not.toContain('10:00');
  });
});
