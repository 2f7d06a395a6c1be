import { afterAll, beforeAll, expect, it } from 'vitest';
import { CalendarFetcher } from '../../src/app/calendars/busy-fetch.ts';
import { refreshDueCalendars } from '../../src/app/calendars/refresher.ts';
import { appWithAnaCalendars } from '../helpers/ana-calendars.ts';
import { type CalendarServer, ics, startCalendarServer } from '../helpers/calendar-server.ts';
import type { TestApp } from '../helpers/test-app.ts';

/**
 * A busy calendar whose server sends neither ETag nor Last-Modified answers the whole file at every
 * refresh (every 5 minutes). The same text is not read again (a few MB held the event loop for a
 * second each time); a changed one is, at once. The clock starts Monday 2026-11-23 09:00 UTC.
 */
let t: TestApp;
let server: CalendarServer;
let anaStarts: (date: string) => Promise<string[]>;
const REFRESH_MS = 300_000;
const fetcher = new CalendarFetcher(true, { timeoutMs: 2_000, maxBytes: 1 << 20 });
const refresh = () =>
  refreshDueCalendars({ db: t.database.db, clock: t.clock, fetcher, refreshMs: REFRESH_MS });
const meeting = (hour: string) =>
  ics(
    'BEGIN:VEVENT',
    'DTSTAMP:20261101T000000Z',
    'UID:meeting@example.com',
    `DTSTART:20261124T${hour}0000Z`,
    `DTEND:20261124T${hour}3000Z`,
    'END:VEVENT',
  );

beforeAll(async () => {
  server = await startCalendarServer();
  server.serve('/ana.ics', { body: meeting('10') });
  ({ t, anaStarts } = await appWithAnaCalendars(server, ['/ana.ics']));
});

afterAll(async () => {
  await t.close();
  await server.close();
});

const state = () =>
  t.database.db
    .selectFrom('staff_busy_calendars')
    .select(['parsed_at', 'last_success_at', 'last_error'])
    .executeTakeFirstOrThrow();

it('reads a copy answered again unchanged only once, and a changed one at once', async () => {
  await refresh();
  const first = await state();
  expect(first).toMatchObject({ parsed_at: t.clock.nowMs(), last_error: null });
  expect(await anaStarts('2026-11-24')).not.toContain('10:00');

  t.clock.advance({ minutes: 5 });
  await refresh();
  // Fetched and found the same: fresh as of now, not read again.
  expect(server.requests).toHaveLength(2);
  expect(await state()).toEqual({ ...first, last_success_at: t.clock.nowMs() });
  expect(await anaStarts('2026-11-24')).not.toContain('10:00');

  server.serve('/ana.ics', { body: meeting('14') });
  t.clock.advance({ minutes: 5 });
  await refresh();
  expect(await state()).toMatchObject({ parsed_at: t.clock.nowMs(), last_error: null });
  const starts = await anaStarts('2026-11-24');
  expect(starts).toContain('10:00');
  expect(starts).not.toContain('14:00');
});
