import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CalendarFetcher } from '../../src/app/calendars/busy-fetch.ts';
import { refreshDueCalendars } from '../../src/app/calendars/refresher.ts';
import { appWithAnaCalendars } from '../helpers/ana-calendars.ts';
import { type CalendarServer, ics, startCalendarServer } from '../helpers/calendar-server.ts';
import type { TestApp } from '../helpers/test-app.ts';

/**
 * An all-day event written with its DTEND on its start day (DTSTART;VALUE=DATE:20261124 and
 * DTEND;VALUE=DATE:20261124), as leave planners, school and waste calendars and older tools publish a
 * one-day event: Google, Apple and Outlook show it as that day taken, and so it blocks that day, as an
 * all-day event without an end does (RFC 5545 3.6.1). It blocked nothing: a stylist on leave was
 * offered all day. The clock starts Monday 2026-11-23 09:00 UTC; Ana works Mondays and Tuesdays.
 */

let t: TestApp;
let server: CalendarServer;
let anaStarts: (date: string) => Promise<string[]>;
const fetcher = new CalendarFetcher(true, { timeoutMs: 2_000, maxBytes: 1 << 20 });
const event = (...lines: string[]) => ['BEGIN:VEVENT', 'DTSTAMP:20261101T000000Z', ...lines, 'END:VEVENT'];

beforeAll(async () => {
  server = await startCalendarServer();
  server.serve('/leave.ics', {
    body: ics(
      // Tuesday 24 November, one day.
      ...event('UID:leave@example.com', 'DTSTART;VALUE=DATE:20261124', 'DTEND;VALUE=DATE:20261124'),
      // Every Monday from 30 November, one day each.
      ...event(
        'UID:mondays@example.com',
        'DTSTART;VALUE=DATE:20261130',
        'DTEND;VALUE=DATE:20261130',
        'RRULE:FREQ=WEEKLY',
      ),
      // A meeting of no length on Tuesday 1 December blocks nothing.
      ...event('UID:ping@example.com', 'DTSTART:20261201T100000Z', 'DTEND:20261201T100000Z'),
    ),
  });
  ({ t, anaStarts } = await appWithAnaCalendars(server, ['/leave.ics']));
  await refreshDueCalendars({ db: t.database.db, clock: t.clock, fetcher, refreshMs: 300_000 });
});

afterAll(async () => {
  await t.close();
  await server.close();
});

describe('an all-day event whose DTEND is its start day', () => {
  it('blocks that day', async () => {
    expect(await anaStarts('2026-11-24')).toEqual([]);
  });

  it('blocks each day of a weekly one', async () => {
    expect(await anaStarts('2026-11-30')).toEqual([]);
    expect(await anaStarts('2026-12-07')).toEqual([]);
  });

  it('leaves the other days, and a timed event of no length blocks nothing', async () => {
    const tuesday = await anaStarts('2026-12-01');
    expect(tuesday).toContain('09:00');
    expect(tuesday).toContain('10:00');
    expect(tuesday).toContain('16:00');
  });
});
