import { generateReference } from '../../src/app/booking-reference.ts';
import { insertBooking } from '../../src/data/booking-repository.ts';
import type { Db } from '../../src/data/database.ts';
import { catalogueIds } from './booking-fixtures.ts';
import { bookingRow } from './booking-row.ts';

/**
 * Writes, straight into the demo catalogue's database, a confirmed hour's cut with Ben at Islington at
 * Islington's £62, under Booking Protection with Jo's card saved (late cancellation 50%, no-show
 * 100%), starting at `startsAt` (epoch ms): what the console shows fees and waivers of. Its reference.
 */
export async function insertProtectedIslingtonCut(db: Db, startsAt: number): Promise<string> {
  const ids = await catalogueIds(db);
  const endsAt = startsAt + 3_600_000;
  const row = bookingRow(
    {
      organisationId: ids.organisation,
      locationId: ids.locations.islington!,
      staffId: ids.staff.ben!,
      clientId: ids.jo,
      startsAt,
      endsAt,
    },
    {
      reference: generateReference('NHC'),
      total_price_minor: 6200,
      protection_applies: 1,
      late_cancellation_fee_percentage: 50,
      no_show_fee_percentage: 100,
      protection_setup_status: 'succeeded',
      payment_method_saved: 1,
      source: 'staff',
    },
  );
  await insertBooking(db, row, [
    {
      organisation_id: ids.organisation,
      booking_id: row.id,
      position: 0,
      service_id: ids.services.cut!,
      starts_at: startsAt,
      ends_at: endsAt,
      duration_minutes: 60,
      buffer_after_minutes: 0,
      price_minor: 6200,
      deposit_minor: null,
    },
  ]);
  return row.reference;
}
