import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CalendarFetcher } from '../../src/app/calendars/busy-fetch.ts';
import { refreshDueCalendars } from '../../src/app/calendars/refresher.ts';
import { appWithAnaCalendars } from '../helpers/ana-calendars.ts';
import { type CalendarServer, startCalendarServer } from '../helpers/calendar-server.ts';
import type { TestApp } from '../helpers/test-app.ts';

/**
 * Ana's Outlook calendar shared as an ICS link, as Exchange writes one: its times in zones named by
 * their Windows names ("W. Europe Standard Time", "Eastern Standard Time") with no VTIMEZONE defining
 * them, a series' UNTIL and EXDATE in UTC. Each is read in the zone the name stands for, not in Ana's
 * (London, UTC in winter): her busy times block the hours they are, not the same wall-clock hours in
 * London. The clock starts Monday 2026-11-23 09:00 UTC; Ana works Mondays and Tuesdays 09:00-17:00.
 */
let t: TestApp;
let server: CalendarServer;
let anaStarts: (date: string) => Promise<string[]>;
const fetcher = new CalendarFetcher(true, { timeoutMs: 2_000, maxBytes: 1 << 20 });

const event = (uid: string, ...lines: string[]) => [
  'BEGIN:VEVENT',
  `UID:${uid}`,
  'DTSTAMP:20261120T100000Z',
  ...lines,
  'X-MICROSOFT-CDO-BUSYSTATUS:BUSY',
  'TRANSP:OPAQUE',
  'END:VEVENT',
];
const OUTLOOK_LINK = [
  'BEGIN:VCALENDAR',
  'METHOD:PUBLISH',
  'PRODID:Microsoft Exchange Server 2010',
  'VERSION:2.0',
  'X-WR-CALNAME:Calendar',
  // Monday 30 November, 11:00-12:00 in Berlin: 10:00-11:00 UTC.
  ...event(
    'supplier',
    'DTSTART;TZID=W. Europe Standard Time:20261130T110000',
    'DTEND;TZID=W. Europe Standard Time:20261130T120000',
    'SUMMARY:Supplier call',
  ),
  // Tuesdays 09:00-10:00 in New York (14:00-15:00 UTC) until 15 December, not on the 8th.
  ...event(
    'training',
    'DTSTART;TZID=Eastern Standard Time:20261201T090000',
    'DTEND;TZID=Eastern Standard Time:20261201T100000',
    'RRULE:FREQ=WEEKLY;UNTIL=20261215T140000Z;BYDAY=TU',
    'EXDATE:20261208T140000Z',
    'SUMMARY:Training',
  ),
  'END:VCALENDAR',
  '',
].join('\r\n');

beforeAll(async () => {
  server = await startCalendarServer();
  server.serve('/owa/calendar/ana/calendar.ics', { body: OUTLOOK_LINK });
  ({ t, anaStarts } = await appWithAnaCalendars(server, ['/owa/calendar/ana/calendar.ics']));
  await refreshDueCalendars({ db: t.database.db, clock: t.clock, fetcher, refreshMs: 300_000 });
});
afterAll(async () => {
  await t.close();
  await server.close();
});

describe('an Outlook calendar naming its zones by their Windows names', () => {
  it('blocks an event at its hour in the zone it names, not at that wall-clock hour in London', async () => {
    const monday = await anaStarts('2026-11-30');
    expect(monday).not.toContain('10:00');
    expect(monday).toContain('11:00');
  });

  it('blocks a series in its zone, its UTC EXDATE and UNTIL matched to its occurrences', async () => {
    for (const tuesday of ['2026-12-01', '2026-12-15']) {
      const starts = await anaStarts(tuesday);
      expect(starts, tuesday).not.toContain('14:00');
      expect(starts, tuesday).toContain('09:00');
    }
    expect(await anaStarts('2026-12-08')).toContain('14:00');
    expect(await anaStarts('2026-12-22')).toContain('14:00');
  });
});
