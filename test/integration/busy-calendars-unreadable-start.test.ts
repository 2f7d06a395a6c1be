import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CalendarFetcher } from '../../src/app/calendars/busy-fetch.ts';
import { refreshDueCalendars } from '../../src/app/calendars/refresher.ts';
import { appWithAnaCalendars } from '../helpers/ana-calendars.ts';
import { type CalendarServer, ics, startCalendarServer } from '../helpers/calendar-server.ts';
import type { TestApp } from '../helpers/test-app.ts';

/**
 * A busy calendar whose next copy has an event with a start that cannot be read (a DTSTART that is no
 * date, or an override's RECURRENCE-ID that is none, which ical.js cannot relate to its series) is
 * refused as one with an unreadable end is: the last good copy keeps blocking and the reason is shown.
 * The event was dropped without a word instead, its time (a whole weekly series) offered to customers.
 * The clock starts Monday 2026-11-23 09:00 UTC.
 */

let t: TestApp;
let server: CalendarServer;
let anaStarts: (date: string) => Promise<string[]>;
const REFRESH_MS = 300_000;
const fetcher = new CalendarFetcher(true, { timeoutMs: 2_000, maxBytes: 1 << 20 });
const refresh = () =>
  refreshDueCalendars({ db: t.database.db, clock: t.clock, fetcher, refreshMs: REFRESH_MS });
const event = (...lines: string[]) => ['BEGIN:VEVENT', 'DTSTAMP:20261101T000000Z', ...lines, 'END:VEVENT'];

// Every Tuesday 10:00-11:00 UTC, the staff member's weekly meeting.
const MEETING = event(
  'UID:meeting@example.com',
  'DTSTART:20261124T100000Z',
  'DTEND:20261124T110000Z',
  'RRULE:FREQ=WEEKLY',
);
// Monday 30th 14:00-15:00 UTC, a one-off.
const DENTIST = (start: string) =>
  event('UID:dentist@example.com', `DTSTART${start}`, 'DTEND:20261130T150000Z');

beforeAll(async () => {
  server = await startCalendarServer();
  server.serve('/series.ics', { etag: '"1"', body: ics(...MEETING) });
  server.serve('/single.ics', { etag: '"1"', body: ics(...DENTIST(':20261130T140000Z')) });
  ({ t, anaStarts } = await appWithAnaCalendars(server, ['/series.ics', '/single.ics']));
});

afterAll(async () => {
  await t.close();
  await server.close();
});

async function calendarState(path: string) {
  return t.database.db
    .selectFrom('staff_busy_calendars')
    .select(['last_error', 'last_success_at'])
    .where('url', '=', server.url(path))
    .executeTakeFirstOrThrow();
}

describe('a busy calendar whose new copy has an event with a start that cannot be read', () => {
  it('blocks with its good copy first', async () => {
    await refresh();
    const tuesday = await anaStarts('2026-12-01');
    expect(tuesday).not.toContain('10:00');
    expect(tuesday).toContain('11:00');
    const monday = await anaStarts('2026-11-30');
    expect(monday).not.toContain('14:00');
    expect(monday).toContain('15:00');
  });

  it('keeps blocking with the good copy when an override of the series names no date, and says why', async () => {
    const good = (await calendarState('/series.ics')).last_success_at;
    server.serve('/series.ics', {
      etag: '"2"',
      body: ics(
        ...MEETING,
        ...event(
          'UID:meeting@example.com',
          'RECURRENCE-ID:next tuesday',
          'DTSTART:20261208T150000Z',
          'DTEND:20261208T160000Z',
        ),
      ),
    });
    t.clock.advance({ milliseconds: REFRESH_MS });
    await refresh();
    expect(await anaStarts('2026-12-01')).not.toContain('10:00');
    expect(await calendarState('/series.ics')).toMatchObject({
      last_success_at: good,
      last_error: expect.stringMatching(/^an event that cannot be read/),
    });
  });

  it('keeps blocking with the good copy when an event’s DTSTART is no date-time, and says why', async () => {
    const good = (await calendarState('/single.ics')).last_success_at;
    // A date written without VALUE=DATE, and one written as ISO 8601, as careless publishers do.
    for (const [etag, start] of [
      ['"2"', ':20261130'],
      ['"3"', ':2026-11-30T14:00:00Z'],
    ] as const) {
      server.serve('/single.ics', { etag, body: ics(...DENTIST(start)) });
      t.clock.advance({ milliseconds: REFRESH_MS });
      await refresh();
      expect(await anaStarts('2026-11-30')).not.toContain('14:00');
      expect(await calendarState('/single.ics')).toMatchObject({
        last_success_at: good,
        last_error: expect.stringMatching(/^an event that cannot be read/),
      });
    }
  });
});
