import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CalendarFetcher } from '../../src/app/calendars/busy-fetch.ts';
import { refreshDueCalendars } from '../../src/app/calendars/refresher.ts';
import {
  type CalendarServer,
  ics,
  LONDON_VTIMEZONE,
  startCalendarServer,
} from '../helpers/calendar-server.ts';
import { nightBarberCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A busy calendar's times on the night the clocks go back, through REST availability: a wall time
 * that happens twice means its first occurrence (RFC 5545 3.3.5), whether its zone is defined by the
 * file (VTIMEZONE), an IANA name without one, or the time is floating (read in the location's zone). A London barber open
 * through the small hours of Sundays; on Sunday 31 October 2027 01:00-02:00 happens twice (BST, then
 * GMT). Kit's calendar says 01:00-02:00 that night, from the first 01:00 (00:00 UTC) to 02:00 GMT
 * (02:00 UTC): both passes of the hour are busy.
 */
let t: TestApp;
let server: CalendarServer;
let service: string;

const fetcher = new CalendarFetcher(true, { timeoutMs: 1_000, maxBytes: 4096 });

function nightBarber(calendar: string, sundayUntil = '04:00') {
  return nightBarberCatalogue({ sundayUntil, busyCalendars: [calendar] });
}

/** New York's zone as Google writes it: the clocks go back at 02:00 EDT on the first Sunday of November. */
const NEW_YORK_VTIMEZONE = [
  'BEGIN:VTIMEZONE',
  'TZID:America/New_York',
  'BEGIN:DAYLIGHT',
  'TZOFFSETFROM:-0500',
  'TZOFFSETTO:-0400',
  'TZNAME:EDT',
  'DTSTART:19700308T020000',
  'RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU',
  'END:DAYLIGHT',
  'BEGIN:STANDARD',
  'TZOFFSETFROM:-0400',
  'TZOFFSETTO:-0500',
  'TZNAME:EST',
  'DTSTART:19701101T020000',
  'RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU',
  'END:STANDARD',
  'END:VTIMEZONE',
];

beforeAll(async () => {
  server = await startCalendarServer();
  server.serve('/kit.ics', {
    body: ics(
      'BEGIN:VEVENT',
      'UID:night-shift@example.com',
      'DTSTAMP:20271001T000000Z',
      'DTSTART;TZID=Europe/London:20271031T010000',
      'DTEND;TZID=Europe/London:20271031T020000',
      'SUMMARY:Night shift',
      'END:VEVENT',
    ),
  });
  server.serve('/defined.ics', {
    body: ics(
      ...LONDON_VTIMEZONE,
      'BEGIN:VEVENT',
      'UID:night-shift@example.com',
      'DTSTAMP:20271001T000000Z',
      'DTSTART;TZID=Europe/London:20271031T010000',
      'DTEND;TZID=Europe/London:20271031T020000',
      'SUMMARY:Night shift',
      'END:VEVENT',
    ),
  });
  server.serve('/new-york.ics', {
    body: ics(
      ...NEW_YORK_VTIMEZONE,
      'BEGIN:VEVENT',
      'UID:call@example.com',
      'DTSTAMP:20271001T000000Z',
      'DTSTART;TZID=America/New_York:20271107T010000',
      'DTEND;TZID=America/New_York:20271107T013000',
      'SUMMARY:Call home',
      'END:VEVENT',
    ),
  });
  for (const [path, zone] of [
    ['/gap-named.ics', []],
    ['/gap-defined.ics', LONDON_VTIMEZONE],
  ] as const) {
    server.serve(path, {
      body: ics(
        ...zone,
        'BEGIN:VEVENT',
        'UID:gap@example.com',
        'DTSTAMP:20280301T000000Z',
        'DTSTART;TZID=Europe/London:20280326T013000',
        'DTEND;TZID=Europe/London:20280326T030000',
        'SUMMARY:From a time the clocks skip',
        'END:VEVENT',
      ),
    });
  }
  server.serve('/floating.ics', {
    body: ics(
      'BEGIN:VEVENT',
      'UID:floating@example.com',
      'DTSTAMP:20271001T000000Z',
      'DTSTART:20271031T013000',
      'DTEND:20271031T020000',
      'SUMMARY:Floating',
      'END:VEVENT',
    ),
  });
  t = await startTestApp({
    catalogues: [nightBarber(server.url('/kit.ics'))],
    now: '2027-10-20T09:00:00Z',
  });
  service = (await t.database.db.selectFrom('services').select('id').executeTakeFirstOrThrow()).id;
});
afterAll(async () => {
  await t.close();
  await server.close();
});

async function startsOn(date: string): Promise<string[]> {
  const response = await t.request({
    method: 'GET',
    url: `/v1/locations/soho/availability?service_ids=${service}&date=${date}`,
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data.slots.map((s: { starts_at: string }) => s.starts_at);
}

const refresh = () => refreshDueCalendars({ db: t.database.db, clock: t.clock, fetcher, refreshMs: 300_000 });

/** A fresh app whose Kit has the calendar at `path`, fetched. */
async function restartWith(path: string, sundayUntil?: string, now = '2027-10-20T09:00:00Z'): Promise<void> {
  await t.close();
  t = await startTestApp({ catalogues: [nightBarber(server.url(path), sundayUntil)], now });
  service = (await t.database.db.selectFrom('services').select('id').executeTakeFirstOrThrow()).id;
  await refresh();
}

describe('a busy calendar on the night the clocks go back', () => {
  it('reads a repeated wall time written with an IANA zone name as its first occurrence', async () => {
    await refresh();
    expect(await startsOn('2027-10-31')).toEqual([
      '2027-10-31T00:00:00+01:00',
      '2027-10-31T00:30:00+01:00',
      '2027-10-31T02:00:00+00:00',
      '2027-10-31T02:30:00+00:00',
      '2027-10-31T03:00:00+00:00',
      '2027-10-31T03:30:00+00:00',
    ]);
  });

  it('reads it as its first occurrence where the file defines the zone (VTIMEZONE, as Google writes)', async () => {
    await restartWith('/defined.ics');
    expect(await startsOn('2027-10-31')).toEqual([
      '2027-10-31T00:00:00+01:00',
      '2027-10-31T00:30:00+01:00',
      '2027-10-31T02:00:00+00:00',
      '2027-10-31T02:30:00+00:00',
      '2027-10-31T03:00:00+00:00',
      '2027-10-31T03:30:00+00:00',
    ]);
  });

  it('reads a floating repeated wall time in the location’s zone as its first occurrence', async () => {
    await restartWith('/floating.ics');
    // 01:30-02:00 floating: from the first 01:30 (00:30 UTC) to 02:00 GMT (02:00 UTC).
    expect(await startsOn('2027-10-31')).toEqual([
      '2027-10-31T00:00:00+01:00',
      '2027-10-31T00:30:00+01:00',
      '2027-10-31T01:00:00+01:00',
      '2027-10-31T02:00:00+00:00',
      '2027-10-31T02:30:00+00:00',
      '2027-10-31T03:00:00+00:00',
      '2027-10-31T03:30:00+00:00',
    ]);
  });

  it('reads a repeated wall time of a zone the file defines that shifts by more than London (New York)', async () => {
    // New York's 01:00-01:30 on Sunday 7 November 2027 happens at 05:00 UTC (EDT), then at 06:00 UTC
    // (EST); London keeps GMT by then, so the first pass is Kit's 05:00, the second his 06:00.
    await restartWith('/new-york.ics', '07:00');
    const starts = await startsOn('2027-11-07');
    expect(starts).not.toContain('2027-11-07T05:00:00+00:00');
    expect(starts).toContain('2027-11-07T06:00:00+00:00');
  });

  it('reads a wall time the clocks skip with the offset before the gap, zone defined or named alike', async () => {
    // London skips 01:00-02:00 on Sunday 26 March 2028. 01:30 is read as 01:30 GMT (02:30 BST), as
    // RFC 5545 3.3.5 says: busy 02:30-03:00 BST, whether the file defines the zone or only names it
    // (ical.js alone reads it with the offset after, 00:30 GMT, blocking an hour and a half more).
    const expected = [
      '2028-03-26T00:00:00+00:00',
      '2028-03-26T00:30:00+00:00',
      '2028-03-26T02:00:00+01:00',
      '2028-03-26T03:00:00+01:00',
      '2028-03-26T03:30:00+01:00',
    ];
    for (const path of ['/gap-named.ics', '/gap-defined.ics']) {
      await restartWith(path, '04:00', '2028-03-20T09:00:00Z');
      expect(await startsOn('2028-03-26'), path).toEqual(expected);
    }
  });
});
