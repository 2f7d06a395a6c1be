import { describe, expect, it } from 'vitest';
import { expireLapsedHolds } from '../../src/app/hold-sweeper.ts';
import { migrateToLatest } from '../../src/data/migrate.ts';
import type { BookingsTable } from '../../src/data/tables.ts';
import { catalogueIds } from '../helpers/booking-fixtures.ts';
import { bookingRow } from '../helpers/booking-row.ts';
import { catalogueAtMigration } from '../helpers/older-schema.ts';
import { emptyDatabasePerTest } from '../helpers/temp-database.ts';

/**
 * Migration 0032: a pending hold ends at its appointment's start at the latest (holdEnd and heldUntil,
 * src/domain/booking/state-machine.ts). Holds stored by earlier versions could end later (an import,
 * a hold moved to an earlier start, hold minutes longer than the notice); the migration caps them, so
 * the sweeper writes them expired (and booking.expired goes) when their appointment begins, as it does
 * for holds made today. Nothing else is touched.
 */
const minute = 60_000;
const hour = 60 * minute;
const t0 = Date.parse('2026-11-23T09:00:00Z');

const empty = emptyDatabasePerTest('hold-end-');

describe('migration 0032: pending holds end at their start at the latest', () => {
  it('caps the expiry of pending holds stored past their start, and leaves every other row as it was', async () => {
    const { db } = empty;
    await catalogueAtMigration(db, '2026-11-30-0031-oauth-client-lifetime', t0);
    const ids = await catalogueIds(db);
    const at = (startsAt: number, overrides: Partial<BookingsTable>) =>
      bookingRow(
        {
          organisationId: ids.organisation,
          locationId: ids.locations.soho!,
          staffId: ids.staff.ana!,
          clientId: ids.jo,
          startsAt,
          endsAt: startsAt + 45 * minute,
        },
        { created_at: t0, updated_at: t0, ...overrides },
      );
    const start = (h: number) => t0 + h * hour;
    // As older versions stored them: holds ending after their start.
    const payment = at(start(2), { status: 'pending_payment', hold_expires_at: start(2) + 30 * minute });
    const confirmation = at(start(3), {
      status: 'pending_confirmation',
      hold_expires_at: start(3) + 2 * hour,
      pending_requirements: '["protection_setup"]',
      protection_applies: 1,
    });
    // Rows the migration leaves alone: a hold ending before its start, one ending at it, and bookings
    // no longer pending whatever their old hold said.
    const early = at(start(4), { status: 'pending_payment', hold_expires_at: start(4) - hour });
    const exact = at(start(5), { status: 'pending_payment', hold_expires_at: start(5) });
    const confirmed = at(start(7), { status: 'confirmed', hold_expires_at: start(7) + hour });
    const expired = at(start(1), { status: 'expired', hold_expires_at: start(1) + hour });
    const rows = [payment, confirmation, early, exact, confirmed, expired];
    await db.insertInto('bookings').values(rows).execute();

    expect((await migrateToLatest(db)).applied[0]).toBe('2026-11-30-0032-holds-end-at-start');

    const stored = await db.selectFrom('bookings').selectAll().execute();
    const byId = new Map(stored.map((row) => [row.id, row]));
    expect(byId.get(payment.id)).toEqual({ ...payment, hold_expires_at: payment.starts_at });
    expect(byId.get(confirmation.id)).toEqual({ ...confirmation, hold_expires_at: confirmation.starts_at });
    for (const row of [early, exact, confirmed, expired]) expect(byId.get(row.id)).toEqual(row);

    // The sweeper now writes each capped hold expired as its appointment begins.
    const statusOf = async (id: string) =>
      (await db.selectFrom('bookings').select('status').where('id', '=', id).executeTakeFirstOrThrow())
        .status;
    await expireLapsedHolds(db, start(2));
    expect([await statusOf(payment.id), await statusOf(confirmation.id)]).toEqual([
      'expired',
      'pending_confirmation',
    ]);
    await expireLapsedHolds(db, start(3));
    expect(await statusOf(confirmation.id)).toBe('expired');
  });
});
