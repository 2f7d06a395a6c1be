import { afterAll, beforeAll, expect, it } from 'vitest';
import { CalendarFetcher } from '../../src/app/calendars/busy-fetch.ts';
import { refreshDueCalendars } from '../../src/app/calendars/refresher.ts';
import { appWithAnaCalendars } from '../helpers/ana-calendars.ts';
import { type CalendarServer, ics, startCalendarServer } from '../helpers/calendar-server.ts';
import type { TestApp } from '../helpers/test-app.ts';

/**
 * A busy calendar published as free/busy time (VFREEBUSY, as Outlook's Internet Free/Busy `.ifb`
 * files and CalDAV servers' free/busy addresses give it) rather than as events: its busy periods block
 * availability as events do. It blocked nothing, and was shown as read without a fault. The clock
 * starts Monday 2026-11-23 09:00 UTC; Ana works Mondays and Tuesdays at Soho (a Cut takes 45 minutes).
 */

let t: TestApp;
let server: CalendarServer;
let anaStarts: (date: string) => Promise<string[]>;
const fetcher = new CalendarFetcher(true, { timeoutMs: 2_000, maxBytes: 1 << 20 });

beforeAll(async () => {
  server = await startCalendarServer();
  server.serve('/ana.ifb', {
    body: ics(
      'BEGIN:VFREEBUSY',
      'DTSTAMP:20261120T000000Z',
      'DTSTART:20261120T000000Z',
      'DTEND:20270220T000000Z',
      // Tuesday 24 November 10:00-12:00 busy, Monday 30 November 14:00-15:00 out of office.
      'FREEBUSY:20261124T100000Z/PT2H',
      'FREEBUSY;FBTYPE=BUSY-UNAVAILABLE:20261130T140000Z/20261130T150000Z',
      // Free time blocks nothing.
      'FREEBUSY;FBTYPE=FREE:20261201T090000Z/20261201T170000Z',
      'END:VFREEBUSY',
    ),
  });
  ({ t, anaStarts } = await appWithAnaCalendars(server, ['/ana.ifb']));
  await refreshDueCalendars({ db: t.database.db, clock: t.clock, fetcher, refreshMs: 300_000 });
});

afterAll(async () => {
  await t?.close();
  await server?.close();
});

it('blocks each busy period as time off does, whatever its kind of busy', async () => {
  const tuesday = await anaStarts('2026-11-24');
  expect(tuesday).toContain('09:00');
  expect(tuesday.filter((start) => start > '09:15' && start < '12:00')).toEqual([]);
  expect(tuesday).toContain('12:00');
  const monday = await anaStarts('2026-11-30');
  expect(monday.filter((start) => start > '13:15' && start < '15:00')).toEqual([]);
  expect(monday).toContain('15:00');
});

it('leaves a free period free, and the calendar is shown read without a fault', async () => {
  const tuesday = await anaStarts('2026-12-01');
  expect(tuesday).toContain('09:00');
  expect(tuesday).toContain('12:00');
  const row = await t.database.db
    .selectFrom('staff_busy_calendars')
    .select(['last_error', 'last_success_at'])
    .executeTakeFirstOrThrow();
  expect(row).toMatchObject({ last_error: null, last_success_at: t.clock.nowMs() });
});
