import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CalendarFetcher } from '../../src/app/calendars/busy-fetch.ts';
import { refreshDueCalendars } from '../../src/app/calendars/refresher.ts';
import { appWithAnaCalendars } from '../helpers/ana-calendars.ts';
import {
  type CalendarServer,
  ics,
  LONDON_VTIMEZONE,
  startCalendarServer,
} from '../helpers/calendar-server.ts';
import type { TestApp } from '../helpers/test-app.ts';

/**
 * A weekly event of a set time whose rule ends on a date (UNTIL=20261208, no time), as older Outlook
 * and Lotus exports and many hand-made feeds write it, though RFC 5545 wants UNTIL of DTSTART's type:
 * UNTIL bounds the rule inclusively, so the occurrence on that date is the last, as calendar apps show
 * it. It was read as that date's midnight, leaving the last occurrence free. The clock starts Monday
 * 2026-11-23 09:00 UTC; Ana works Mondays and Tuesdays 09:00-17:00 London.
 */
let t: TestApp;
let server: CalendarServer;
let anaStarts: (date: string) => Promise<string[]>;
const fetcher = new CalendarFetcher(true, { timeoutMs: 2_000, maxBytes: 1 << 20 });
const weekly = (uid: string, zone: string, ...lines: string[]) => [
  'BEGIN:VEVENT',
  `UID:${uid}`,
  'DTSTAMP:20261101T000000Z',
  `DTSTART${zone}:20261124T100000`,
  `DTEND${zone}:20261124T110000`,
  ...lines,
  'SUMMARY:Colour course',
  'END:VEVENT',
];

beforeAll(async () => {
  server = await startCalendarServer();
  // Tuesdays 10:00 (the file's zone) and Mondays 14:00 (an IANA name only), each until a date.
  server.serve('/course.ics', {
    body: ics(
      ...LONDON_VTIMEZONE,
      ...weekly('course@example.com', ';TZID=Europe/London', 'RRULE:FREQ=WEEKLY;UNTIL=20261208'),
      'BEGIN:VEVENT',
      'UID:mondays@example.com',
      'DTSTAMP:20261101T000000Z',
      'DTSTART;TZID=Europe/Paris:20261123T150000',
      'DTEND;TZID=Europe/Paris:20261123T160000',
      'RRULE:FREQ=WEEKLY;UNTIL=20261207',
      'END:VEVENT',
    ),
  });
  ({ t, anaStarts } = await appWithAnaCalendars(server, ['/course.ics']));
  await refreshDueCalendars({ db: t.database.db, clock: t.clock, fetcher, refreshMs: 300_000 });
});
afterAll(async () => {
  await t.close();
  await server.close();
});

describe('a weekly event whose rule ends on a date', () => {
  it('blocks its occurrence on that date, and none after', async () => {
    expect(await anaStarts('2026-12-01')).not.toContain('10:00');
    expect(await anaStarts('2026-12-08')).not.toContain('10:00');
    expect(await anaStarts('2026-12-15')).toContain('10:00');
    // 15:00 in Paris is 14:00 in London.
    expect(await anaStarts('2026-11-30')).not.toContain('14:00');
    expect(await anaStarts('2026-12-07')).not.toContain('14:00');
    expect(await anaStarts('2026-12-14')).toContain('14:00');
  });
});
