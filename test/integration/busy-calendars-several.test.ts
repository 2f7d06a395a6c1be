import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CalendarFetcher } from '../../src/app/calendars/busy-fetch.ts';
import { refreshDueCalendars } from '../../src/app/calendars/refresher.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { type CalendarServer, ics, startCalendarServer } from '../helpers/calendar-server.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * A busy calendar file of several VCALENDAR objects, one after the other (RFC 5545 3.4 allows it, and
 * some exports write one per calendar): every one is read, each TZID by its own VTIMEZONE, under the
 * bounds of one file. The clock starts Monday 2026-11-23 09:00 UTC.
 */

let t: TestApp;
let server: CalendarServer;
let ids: { cut: string; ana: string };
const fetcher = new CalendarFetcher(true, { timeoutMs: 5_000, maxBytes: 1 << 20 });

const event = (...lines: string[]) => ['BEGIN:VEVENT', 'DTSTAMP:20261101T000000Z', ...lines, 'END:VEVENT'];
/** A zone of a fixed offset, under a name both calendars use for different zones. */
const office = (offset: string) => [
  'BEGIN:VTIMEZONE',
  'TZID:Office',
  'BEGIN:STANDARD',
  `TZOFFSETFROM:${offset}`,
  `TZOFFSETTO:${offset}`,
  'DTSTART:19700101T000000',
  'END:STANDARD',
  'END:VTIMEZONE',
];
/** 12,000 half-hours back to back from Tuesday: within the file's bound of 20,000 busy times alone. */
const halfHours = (uid: string) =>
  event(
    `UID:${uid}`,
    'DTSTART:20261124T000000Z',
    'DTEND:20261124T003000Z',
    'RRULE:FREQ=MINUTELY;INTERVAL=30;COUNT=12000',
  );

beforeAll(async () => {
  server = await startCalendarServer();
  server.serve('/two.ics', {
    body:
      ics(
        ...office('+0100'),
        ...event('UID:a', 'DTSTART;TZID=Office:20261124T110000', 'DTEND;TZID=Office:20261124T120000'),
      ) +
      ics(
        ...office('-0500'),
        ...event('UID:b', 'DTSTART;TZID=Office:20261124T080000', 'DTEND;TZID=Office:20261124T090000'),
        ...event('UID:c', 'DTSTART:20261124T150000Z', 'DTEND:20261124T160000Z', 'RRULE:FREQ=WEEKLY'),
      ),
  });
  server.serve('/one-heavy.ics', { body: ics(...halfHours('x')) });
  server.serve('/two-heavy.ics', { body: ics(...halfHours('x')) + ics(...halfHours('y')) });
  const catalogue = smallCatalogue();
  const [ana, bo] = catalogue.staff as Record<string, unknown>[];
  ana!.busy_calendars = [server.url('/two.ics')];
  bo!.busy_calendars = [server.url('/one-heavy.ics'), server.url('/two-heavy.ics')];
  t = await startTestApp({ catalogues: [catalogue] });
  const known = await catalogueIds(t.database.db);
  ids = { cut: known.services.cut!, ana: known.staff.ana! };
  await refreshDueCalendars({ db: t.database.db, clock: t.clock, fetcher, refreshMs: 300_000 });
});

afterAll(async () => {
  await t.close();
  await server.close();
});

async function calendarState(path: string) {
  return t.database.db
    .selectFrom('staff_busy_calendars')
    .select(['last_error', 'last_success_at', 'busy_count'])
    .where('url', '=', server.url(path))
    .executeTakeFirstOrThrow();
}

describe('a busy calendar file of several VCALENDARs', () => {
  it('blocks the events of every one, each zone as its own calendar defines it', async () => {
    expect(await calendarState('/two.ics')).toMatchObject({ last_error: null });
    const response = await t.request({
      method: 'GET',
      url: `/v1/locations/soho/availability?service_ids=${ids.cut}&date=2026-11-24&staff_id=${ids.ana}`,
      key: t.keys.read,
    });
    expect(response.statusCode, response.body).toBe(200);
    const starts = response.json().data.slots.map((s: { starts_at: string }) => s.starts_at.slice(11, 16));
    // 10:00-11:00 UTC (the first calendar's Office, +01:00), 13:00-14:00 UTC (the second's, -05:00) and
    // 15:00-16:00 UTC (the second's weekly series) are busy; the hours around them are free.
    expect(starts).toContain('09:00');
    expect(starts).toContain('11:00');
    expect(starts).toContain('14:00');
    expect(starts).toContain('16:00');
    for (const busy of ['10:00', '10:30', '13:00', '13:30', '15:00', '15:30'])
      expect(starts).not.toContain(busy);
    const weekly = await t.database.db
      .selectFrom('staff_busy_blocks')
      .select('starts_at')
      .where('staff_id', '=', ids.ana)
      .where('starts_at', '=', Date.parse('2026-12-01T15:00:00Z'))
      .execute();
    expect(weekly).toHaveLength(1);
  });

  it('counts the busy times of all of them against the one bound of the file', async () => {
    expect(await calendarState('/one-heavy.ics')).toMatchObject({ last_error: null });
    expect(await calendarState('/two-heavy.ics')).toMatchObject({
      last_success_at: null,
      last_error: 'more than 20000 busy times in the window kept',
    });
  });
});
