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
 * A busy calendar whose events are timed by DURATION (as Fastmail, Nextcloud and many booking tools
 * write them, RFC 5545 allowing it in place of DTEND), through REST availability on the nights the
 * clocks change in London. Weeks and days are nominal (P1D from Saturday 10:00 ends at Sunday 10:00,
 * 25 hours later when the clocks go back between), hours exact (PT2H from Sunday 00:00 ends two hours
 * later: 03:00 BST on 29 March 2026, 01:00 GMT on 25 October 2026). Kit, a London night barber, works
 * Sundays from 00:00; 30-minute trims every 30 minutes.
 */
let t: TestApp | undefined;
let server: CalendarServer;
const fetcher = new CalendarFetcher(true, { timeoutMs: 1_000, maxBytes: 8192 });

/** Kit's late-night standing call: Sundays 00:00 for two hours, weekly since March 2026. */
const hoursEvent = (zone: readonly string[]) =>
  ics(
    ...zone,
    'BEGIN:VEVENT',
    'UID:standing-call@example.com',
    'DTSTAMP:20260301T000000Z',
    'DTSTART;TZID=Europe/London:20260322T000000',
    'DURATION:PT2H',
    'RRULE:FREQ=WEEKLY;BYDAY=SU',
    'SUMMARY:Standing call',
    'END:VEVENT',
  );

/** Kit's weekend away: Saturdays 10:00 for one day, weekly. */
const dayEvent = ics(
  'BEGIN:VEVENT',
  'UID:weekend@example.com',
  'DTSTAMP:20260301T000000Z',
  'DTSTART;TZID=Europe/London:20261017T100000',
  'DURATION:P1D',
  'RRULE:FREQ=WEEKLY;BYDAY=SA',
  'SUMMARY:Away',
  'END:VEVENT',
);

beforeAll(async () => {
  server = await startCalendarServer();
  server.serve('/hours-named.ics', { body: hoursEvent([]) });
  server.serve('/hours-defined.ics', { body: hoursEvent(LONDON_VTIMEZONE) });
  server.serve('/day.ics', { body: dayEvent });
});
afterAll(async () => {
  await t?.close();
  await server.close();
});

/** A fresh app on `now` whose Kit has the calendar at `path`, fetched: Kit's free starts on `date`. */
async function kitStarts(path: string, now: string, date: string, sundayUntil: string): Promise<string[]> {
  await t?.close();
  t = await startTestApp({
    catalogues: [nightBarberCatalogue({ sundayUntil, busyCalendars: [server.url(path)] })],
    now,
  });
  await refreshDueCalendars({ db: t.database.db, clock: t.clock, fetcher, refreshMs: 300_000 });
  const service = (await t.database.db.selectFrom('services').select('id').executeTakeFirstOrThrow()).id;
  const response = await t.request({
    method: 'GET',
    url: `/v1/locations/soho/availability?service_ids=${service}&date=${date}`,
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data.slots.map((s: { starts_at: string }) => s.starts_at);
}

describe('a busy calendar of events timed by DURATION, across a clock change', () => {
  it('blocks exactly the hours of PT2H on the night the clocks go forward', async () => {
    for (const path of ['/hours-named.ics', '/hours-defined.ics']) {
      // 00:00 GMT + 2 hours = 03:00 BST (not 02:00 BST, an hour short).
      expect(await kitStarts(path, '2026-03-20T09:00:00Z', '2026-03-29', '04:00'), path).toEqual([
        '2026-03-29T03:00:00+01:00',
        '2026-03-29T03:30:00+01:00',
      ]);
    }
  });

  it('blocks exactly the hours of PT2H on the night the clocks go back', async () => {
    for (const path of ['/hours-named.ics', '/hours-defined.ics']) {
      // 00:00 BST + 2 hours = 01:00 GMT (not 02:00 GMT, an hour more).
      expect(await kitStarts(path, '2026-10-20T09:00:00Z', '2026-10-25', '03:00'), path).toEqual([
        '2026-10-25T01:00:00+00:00',
        '2026-10-25T01:30:00+00:00',
        '2026-10-25T02:00:00+00:00',
        '2026-10-25T02:30:00+00:00',
      ]);
      // An ordinary Sunday: 00:00-02:00 GMT.
      expect(await kitStarts(path, '2026-10-20T09:00:00Z', '2026-11-01', '03:00'), path).toEqual([
        '2026-11-01T02:00:00+00:00',
        '2026-11-01T02:30:00+00:00',
      ]);
    }
  });

  it('blocks P1D to the same wall time the next day, the clocks gone back between', async () => {
    // Saturday 10:00 BST to Sunday 10:00 GMT (25 hours), not to 09:00 GMT.
    expect(await kitStarts('/day.ics', '2026-10-20T09:00:00Z', '2026-10-25', '11:00')).toEqual([
      '2026-10-25T10:00:00+00:00',
      '2026-10-25T10:30:00+00:00',
    ]);
  });
});
