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

function nightBarber(calendar: string) {
  return nightBarberCatalogue({ sundayUntil: '04:00', busyCalendars: [calendar] });
}

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
async function restartWith(path: string): Promise<void> {
  await t.close();
  t = await startTestApp({ catalogues: [nightBarber(server.url(path))], now: '2027-10-20T09:00:00Z' });
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
});
