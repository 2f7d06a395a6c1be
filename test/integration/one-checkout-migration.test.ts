import { describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/data/migrate.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { bookingRow } from '../helpers/booking-row.ts';
import { catalogueAtMigration } from '../helpers/older-schema.ts';
import { emptyDatabasePerTest } from '../helpers/temp-database.ts';

/**
 * Migration 0036: one checkout per booking, which a cancellation refunds. No version opened a second,
 * so a database holding two for one booking is not migrated: it stops, naming the booking, for a
 * person to settle the extra payment.
 */
const t0 = Date.parse('2026-11-23T09:00:00Z');
const empty = emptyDatabasePerTest('one-checkout-');

describe('migration 0036: one checkout per booking', () => {
  it('stops on a booking with two checkouts, naming it; migrates once it has one', async () => {
    const { db } = empty;
    await catalogueAtMigration(db, '2026-11-30-0035-payment-call-provider', t0);
    const ids = await catalogueIds(db);
    const booking = bookingRow(
      {
        organisationId: ids.organisation,
        locationId: ids.locations.soho!,
        staffId: ids.staff.ana!,
        clientId: ids.jo,
        startsAt: t0 + 24 * 60 * 60_000,
        endsAt: t0 + 25 * 60 * 60_000,
      },
      { deposit_minor: 2000, deposit_status: 'paid', created_at: t0, updated_at: t0 },
    );
    await db.insertInto('bookings').values(booking).execute();
    const checkout = (id: string, paymentRef: string) => ({
      id,
      organisation_id: ids.organisation,
      booking_id: booking.id,
      status: 'paid' as const,
      amount_minor: 2000,
      currency: 'GBP',
      success_url: null,
      cancel_url: null,
      expires_at: t0 + 30 * 60_000,
      created_at: t0,
      completed_at: t0,
      payment_ref: paymentRef,
    });
    const second = '7c1e2d3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f';
    await db
      .insertInto('checkout_sessions')
      .values([checkout('1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e', 'pi_first'), checkout(second, 'pi_second')])
      .execute();

    await expect(migrateToLatest(db)).rejects.toThrow(booking.id);

    await db.deleteFrom('checkout_sessions').where('id', '=', second).execute();
    // 0036, then any later migration.
    expect((await migrateToLatest(db)).applied[0]).toBe('2026-11-30-0036-one-checkout-per-booking');
    await expect(
      db.insertInto('checkout_sessions').values(checkout(second, 'pi_second')).execute(),
    ).rejects.toThrow(/unique/i);
  });
});
