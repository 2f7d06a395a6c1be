import ICAL from 'ical.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createFeed } from '../../src/app/calendars/feeds.ts';
import { insertBooking } from '../../src/data/booking-repository.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { bookingRow } from '../helpers/booking-row.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * What a staff member's feed (design.md 9.6) reaches and carries, read back with ical.js: bookings
 * starting from 60 days back to 365 ahead and none beyond, only this staff member's, and of the client
 * only the first name, whatever it holds (commas, semicolons, a line break written by the client), with
 * neither the client's other details nor the booking's notes.
 */
const DAY = 86_400_000;
const HOUR = 3_600_000;
let t: TestApp;
let body: string;
const refs: Record<string, string> = {};

beforeAll(async () => {
  t = await startTestApp();
  const ids = await catalogueIds(t.database.db);
  const now = t.clock.nowMs();
  await t.database.db
    .updateTable('clients')
    .set({ first_name: 'Jo, "JJ"; Ann\nLine two', last_name: 'Bloggs-Private' })
    .where('id', '=', ids.jo)
    .execute();
  const at = {
    pastOut: now - 60 * DAY - HOUR,
    pastIn: now - 60 * DAY + HOUR,
    aheadIn: now + 365 * DAY - HOUR,
    aheadOut: now + 365 * DAY + HOUR,
    otherStaff: now + DAY,
  };
  for (const [name, startsAt] of Object.entries(at)) {
    const row = bookingRow(
      {
        organisationId: ids.organisation,
        locationId: ids.locations.soho!,
        staffId: name === 'otherStaff' ? ids.staff.bo! : ids.staff.ana!,
        clientId: ids.jo,
        startsAt,
        endsAt: startsAt + 45 * 60_000,
      },
      { notes: 'Door code 4411, allergic to latex', created_at: now, updated_at: now },
    );
    refs[name] = row.reference;
    await insertBooking(t.database.db, row, [
      {
        organisation_id: ids.organisation,
        booking_id: row.id,
        position: 0,
        service_id: ids.services.cut!,
        starts_at: startsAt,
        ends_at: startsAt + 45 * 60_000,
        duration_minutes: 45,
        buffer_after_minutes: 0,
        price_minor: 4000,
        deposit_minor: null,
      },
    ]);
  }
  const { token } = await createFeed(t.database.db, ids.organisation, 'ana', now);
  const response = await t.app.inject({ method: 'GET', url: `/ical/${token}.ics` });
  expect(response.statusCode).toBe(200);
  body = response.body;
});

afterAll(async () => {
  await t.close();
});

function events() {
  const calendar = new ICAL.Component(ICAL.parse(body) as unknown[]);
  return calendar.getAllSubcomponents('vevent').map((c) => new ICAL.Event(c));
}

it('reaches from 60 days back to 365 ahead, for this staff member only', () => {
  const shown = events().map((e) => /Booking (\S+)/.exec(e.description)![1]);
  expect(shown.sort()).toEqual([refs.pastIn, refs.aheadIn].sort());
});

it('carries the first name as the client wrote it, escaped, and nothing else of theirs', () => {
  for (const event of events()) expect(event.summary).toBe('Cut – Jo, "JJ"; Ann\nLine two');
  expect(body).toContain('SUMMARY:Cut – Jo\\, "JJ"\\; Ann\\nLine two');
  expect(body).not.toContain('Bloggs');
  expect(body).not.toContain('Door code');
  expect(body).not.toContain('latex');
  for (const line of body.split('\r\n')) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(75);
});
