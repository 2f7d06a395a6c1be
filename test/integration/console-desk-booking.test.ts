import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../src/app/staff-account-service.ts';
import { type CatalogueIds, catalogueIds } from '../helpers/booking-fixtures.ts';
import { signInToConsole } from '../helpers/console-session.ts';
import { demoCatalogue } from '../helpers/mcp-harness.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The desk's Book form (console), as a salon's front desk uses it for a phone caller or a walk-in,
 * through HTTP (inject). The demo catalogue: Islington has Booking Protection (a card saved through
 * the booking page), Ben works there on Mondays and Wednesdays; Monday 23 November 2026, 09:00 in
 * London.
 */
const NOW = '2026-11-23T09:00:00Z';
const PASSWORD = 'correct horse battery';

let t: TestApp;
let ids: CatalogueIds;
afterEach(async () => {
  await t?.close();
});

async function start() {
  t = await startTestApp({ catalogues: [demoCatalogue()], now: NOW });
  ids = await catalogueIds(t.database.db);
  await createUser(
    t.database.db,
    { organisationSlug: 'northside-hair', email: 'desk@northside.test', role: 'staff', password: PASSWORD },
    t.clock.nowMs(),
  );
  return signInToConsole(t, 'northside-hair', 'desk@northside.test', PASSWORD);
}

describe('booking a caller at a location with Booking Protection', () => {
  it('holds the time and sends the caller the booking page, as the phone agent does', async () => {
    const desk = await start();
    const booked = await desk.post('/console/book', {
      location: 'islington',
      service_id: ids.services.cut!,
      slot: `2026-11-25T10:00:00.000Z|${ids.staff.ben}`,
      first_name: 'Priya',
      last_name: 'Shah',
      phone: '07911 123987',
    });
    expect(booked.statusCode, booked.body).toBe(303);
    const page = (await desk.get(String(booked.headers.location))).body;
    expect(page).toContain('Booking NHC-');
    expect(page).toContain('Awaiting confirmation');
    expect(page).toContain('Send the booking-page link again');
    expect(page).toContain('<td>Booking-page link</td><td>SMS to +447911123987</td>');
    const row = await t.database.db
      .selectFrom('bookings')
      .select(['status', 'source', 'protection_applies'])
      .where('location_id', '=', ids.locations.islington!)
      .where('starts_at', '=', Date.parse('2026-11-25T10:00:00Z'))
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'pending_confirmation', source: 'staff', protection_applies: 1 });
  });
});
