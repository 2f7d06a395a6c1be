import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAvailability, getSlotAt } from '../../src/app/availability-service.ts';
import { requireLocation } from '../../src/app/directory-service.ts';
import type { Location } from '../../src/domain/catalogue.ts';
import { type CatalogueIds, catalogueIds } from '../helpers/booking-fixtures.ts';
import { bookingRow } from '../helpers/booking-row.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * The re-check a booking makes (getSlotAt, which loads less when one staff member is named) must
 * answer exactly what availability offers (getAvailability), at every grid instant of the day, for
 * each staff member and for any staff, on a real database with bookings around and across the day.
 */
let t: TestApp;
let ids: CatalogueIds;
let soho: Location;
const MINUTE = 60_000;
const at = (iso: string) => Date.parse(iso);

beforeAll(async () => {
  // Monday 30 November (London, UTC): Ana works 09:00-17:00 at Soho, Bo works Wednesdays.
  t = await startTestApp();
  ids = await catalogueIds(t.database.db);
  soho = await requireLocation(t.database.db, ids.organisation, 'soho');
  const row = (staff: string, start: string, minutes: number, buffer = 0) =>
    bookingRow({
      organisationId: ids.organisation,
      locationId: ids.locations.soho!,
      staffId: ids.staff[staff]!,
      clientId: ids.jo,
      startsAt: at(start),
      endsAt: at(start) + minutes * MINUTE,
      blockedUntil: at(start) + (minutes + buffer) * MINUTE,
    });
  await t.database.db
    .insertInto('bookings')
    .values([
      row('ana', '2026-11-30T10:00:00Z', 45, 15),
      row('ana', '2026-11-30T13:30:00Z', 30),
      row('ana', '2026-11-30T16:30:00Z', 20, 10),
      // The evening before, running into the morning: blocks until 09:20.
      row('ana', '2026-11-29T20:00:00Z', 800, 0),
    ])
    .execute();
});
afterAll(async () => {
  await t.close();
});

describe('the booking re-check', () => {
  it('agrees with availability at every grid instant, for one staff member and for any staff', async () => {
    const now = t.clock.nowMs();
    const db = t.database.db;
    for (const serviceIds of [
      [ids.services.cut!],
      [ids.services.colour!],
      [ids.services.cut!, ids.services.colour!],
    ]) {
      for (const staffId of [ids.staff.ana, undefined]) {
        const request = { location: soho, serviceIds, staffId };
        const offered = await getAvailability(
          db,
          ids.organisation,
          { ...request, fromDate: '2026-11-30', days: 1 },
          now,
        );
        expect(offered.slots.length).toBeGreaterThan(0);
        const byStart = new Map(offered.slots.map((s) => [s.startsAt, s]));
        for (
          let start = at('2026-11-30T00:00:00Z');
          start < at('2026-12-01T00:00:00Z');
          start += 5 * MINUTE
        ) {
          const { slot } = await getSlotAt(db, ids.organisation, request, start, now);
          expect(slot, new Date(start).toISOString()).toEqual(byStart.get(start) ?? null);
        }
      }
    }
  });
});
