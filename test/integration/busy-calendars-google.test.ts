import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CalendarFetcher } from '../../src/app/calendars/busy-fetch.ts';
import { refreshDueCalendars } from '../../src/app/calendars/refresher.ts';
import { appWithAnaCalendars } from '../helpers/ana-calendars.ts';
import { type CalendarServer, LONDON_VTIMEZONE, startCalendarServer } from '../helpers/calendar-server.ts';
import type { TestApp } from '../helpers/test-app.ts';

/**
 * Ana pastes her Google Calendar's "secret address in iCal format"
 * (…/calendar/ical/<her address>/private-<secret>/basic.ics), served here from this machine with
 * Google's path, and the file as Google writes it: its zone defined, UNTIL in UTC, an occurrence
 * excluded (EXDATE), one cancelled and one moved (overrides by RECURRENCE-ID), events shown as free
 * (TRANSP:TRANSPARENT, Google's default for all-day events), and the invitations she answered, declined
 * ones included (ATTENDEE;PARTSTAT=DECLINED with her address): Google keeps those in the file though
 * her calendar no longer shows them. What blocks is what her calendar shows as busy: a declined
 * invitation does not, a tentative one does. The clock starts Monday 2026-11-23 09:00 UTC; Ana works
 * Mondays and Tuesdays 09:00-17:00 (London, UTC in winter).
 */
let t: TestApp;
let server: CalendarServer;
let anaStarts: (date: string) => Promise<string[]>;
const fetcher = new CalendarFetcher(true, { timeoutMs: 2_000, maxBytes: 1 << 20 });
const GOOGLE_PATH =
  '/calendar/ical/ana.stylist%40gmail.com/private-5d1c9f0e2b7a4c3d8e6f1a2b3c4d5e6f/basic.ics';

const ana = (partstat: string) =>
  `ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=${partstat};CN=ana.stylist@gmail.com;X-NUM-GUESTS=0:mailto:ana.stylist@gmail.com`;
const bob = (partstat: string) =>
  `ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=${partstat};RSVP=TRUE;CN=Bob Supplier;X-NUM-GUESTS=0:mailto:bob@supplies.example`;
const event = (uid: string, ...lines: string[]) => [
  'BEGIN:VEVENT',
  ...lines,
  'DTSTAMP:20261123T080000Z',
  `UID:${uid}@google.com`,
  'CREATED:20261101T100000Z',
  'LAST-MODIFIED:20261110T100000Z',
  'SEQUENCE:0',
  'END:VEVENT',
];
const invitation = (uid: string, ...lines: string[]) =>
  event(
    uid,
    ...lines,
    'ORGANIZER;CN=Bob Supplier:mailto:bob@supplies.example',
    'STATUS:CONFIRMED',
    'TRANSP:OPAQUE',
  );

const GOOGLE_EXPORT = [
  'BEGIN:VCALENDAR',
  'PRODID:-//Google Inc//Google Calendar 70.9054//EN',
  'VERSION:2.0',
  'CALSCALE:GREGORIAN',
  'METHOD:PUBLISH',
  'X-WR-CALNAME:ana.stylist@gmail.com',
  'X-WR-TIMEZONE:Europe/London',
  ...LONDON_VTIMEZONE,
  // Pilates, Tuesdays 10:00-11:00 until 22 December; not on 1 December (EXDATE), called off on the
  // 8th, moved to 14:00 on the 15th.
  ...event(
    'pilates',
    'DTSTART;TZID=Europe/London:20261124T100000',
    'DTEND;TZID=Europe/London:20261124T110000',
    'RRULE:FREQ=WEEKLY;WKST=MO;UNTIL=20261222T235959Z;BYDAY=TU',
    'EXDATE;TZID=Europe/London:20261201T100000',
    'STATUS:CONFIRMED',
    'SUMMARY:Pilates',
    'TRANSP:OPAQUE',
  ),
  ...event(
    'pilates',
    'DTSTART;TZID=Europe/London:20261208T100000',
    'DTEND;TZID=Europe/London:20261208T110000',
    'RECURRENCE-ID;TZID=Europe/London:20261208T100000',
    'STATUS:CANCELLED',
    'SUMMARY:Pilates',
    'TRANSP:OPAQUE',
  ),
  ...event(
    'pilates',
    'DTSTART;TZID=Europe/London:20261215T140000',
    'DTEND;TZID=Europe/London:20261215T150000',
    'RECURRENCE-ID;TZID=Europe/London:20261215T100000',
    'STATUS:CONFIRMED',
    'SUMMARY:Pilates',
    'TRANSP:OPAQUE',
  ),
  // Monday 30 November: a lunch shown as free, and an invitation Ana declined.
  ...event(
    'lunch',
    'DTSTART:20261130T120000Z',
    'DTEND:20261130T130000Z',
    'STATUS:CONFIRMED',
    'SUMMARY:Lunch with Sam?',
    'TRANSP:TRANSPARENT',
  ),
  ...invitation(
    'declined',
    'DTSTART:20261130T150000Z',
    'DTEND:20261130T160000Z',
    ana('DECLINED'),
    bob('ACCEPTED'),
    'SUMMARY:New colour range',
  ),
  // Monday 7 December: one she accepted (Bob since declined), one she may go to (tentative).
  ...invitation(
    'accepted',
    'DTSTART:20261207T150000Z',
    'DTEND:20261207T160000Z',
    ana('ACCEPTED'),
    bob('DECLINED'),
    'SUMMARY:Stock take',
  ),
  ...invitation(
    'tentative',
    'DTSTART:20261207T100000Z',
    'DTEND:20261207T110000Z',
    ana('TENTATIVE'),
    bob('ACCEPTED'),
    'SUMMARY:Trade show',
  ),
  // A weekly call, Mondays 13:00 from 30 November, accepted; declined for 14 December only.
  ...invitation(
    'weekly-call',
    'DTSTART;TZID=Europe/London:20261130T130000',
    'DTEND;TZID=Europe/London:20261130T140000',
    'RRULE:FREQ=WEEKLY;BYDAY=MO',
    ana('ACCEPTED'),
    bob('ACCEPTED'),
    'SUMMARY:Weekly call',
  ),
  ...invitation(
    'weekly-call',
    'DTSTART;TZID=Europe/London:20261214T130000',
    'DTEND;TZID=Europe/London:20261214T140000',
    'RECURRENCE-ID;TZID=Europe/London:20261214T130000',
    ana('DECLINED'),
    bob('ACCEPTED'),
    'SUMMARY:Weekly call',
  ),
  // Christmas week off (Monday 28 and Tuesday 29), a birthday on Monday 21 December shown as free.
  ...event(
    'holiday',
    'DTSTART;VALUE=DATE:20261228',
    'DTEND;VALUE=DATE:20261230',
    'SUMMARY:Christmas off',
    'TRANSP:OPAQUE',
  ),
  ...event(
    'birthday',
    'DTSTART;VALUE=DATE:20261221',
    'DTEND;VALUE=DATE:20261222',
    'SUMMARY:Mum',
    'TRANSP:TRANSPARENT',
  ),
  'END:VCALENDAR',
  '',
].join('\r\n');

beforeAll(async () => {
  server = await startCalendarServer();
  server.serve(GOOGLE_PATH, { body: GOOGLE_EXPORT });
  ({ t, anaStarts } = await appWithAnaCalendars(server, [GOOGLE_PATH]));
  await refreshDueCalendars({ db: t.database.db, clock: t.clock, fetcher, refreshMs: 300_000 });
});
afterAll(async () => {
  await t.close();
  await server.close();
});

describe('a Google Calendar secret address', () => {
  it('blocks a weekly event, but not the occurrence excluded or cancelled, and at its moved time', async () => {
    expect(await anaStarts('2026-11-24')).not.toContain('10:00');
    expect(await anaStarts('2026-12-01')).toContain('10:00');
    expect(await anaStarts('2026-12-08')).toContain('10:00');
    const moved = await anaStarts('2026-12-15');
    expect(moved).toContain('10:00');
    expect(moved).not.toContain('14:00');
    expect(await anaStarts('2026-12-22')).not.toContain('10:00');
  });

  it('leaves free what is shown as free, and an invitation Ana declined', async () => {
    const monday = await anaStarts('2026-11-30');
    expect(monday).toContain('12:00');
    expect(monday).toContain('15:00');
    expect(monday).not.toContain('13:00');
    expect(await anaStarts('2026-12-21')).toContain('12:00');
  });

  it('blocks an invitation she accepted or may go to, and a series but the occurrence she declined', async () => {
    const monday = await anaStarts('2026-12-07');
    expect(monday).not.toContain('10:00');
    expect(monday).not.toContain('13:00');
    expect(monday).not.toContain('15:00');
    expect(await anaStarts('2026-12-14')).toContain('13:00');
  });

  it('blocks each day of an all-day event of several days', async () => {
    expect(await anaStarts('2026-12-28')).toEqual([]);
    expect(await anaStarts('2026-12-29')).toEqual([]);
  });
});
