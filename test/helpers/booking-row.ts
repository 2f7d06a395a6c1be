import { randomUUID } from 'node:crypto';
import { generateReference } from '../../src/app/booking-reference.ts';
import type { BookingsTable } from '../../src/data/tables.ts';

/** What every bookings row needs and no default can supply (times in epoch milliseconds). */
export interface BookingRowBasics {
  organisationId: string;
  locationId: string;
  staffId: string;
  clientId: string;
  startsAt: number;
  endsAt: number;
  /** When the staff member is free again; endsAt (no buffer) unless given. */
  blockedUntil?: number;
}

/**
 * A complete bookings row, for inserting straight into the database: a confirmed £40 booking made
 * through the API, with no deposit, no Booking Protection and nothing cancelled, a random id and a
 * random `AC-` reference (the small catalogue's prefix), created and updated at 0. `overrides` replace
 * any column.
 */
export function bookingRow(basics: BookingRowBasics, overrides: Partial<BookingsTable> = {}): BookingsTable {
  return {
    id: randomUUID(),
    organisation_id: basics.organisationId,
    reference: generateReference('AC'),
    location_id: basics.locationId,
    staff_id: basics.staffId,
    client_id: basics.clientId,
    status: 'confirmed',
    starts_at: basics.startsAt,
    ends_at: basics.endsAt,
    blocked_until: basics.blockedUntil ?? basics.endsAt,
    currency: 'GBP',
    total_price_minor: 4000,
    deposit_minor: null,
    deposit_status: 'not_required',
    notes: null,
    hold_expires_at: null,
    pending_requirements: null,
    protection_applies: 0,
    late_cancellation_fee_percentage: null,
    no_show_fee_percentage: null,
    protection_setup_status: null,
    payment_method_saved: 0,
    protection_setup_completed_at: null,
    cancelled_at: null,
    cancel_reason: null,
    deposit_refunded: null,
    source: 'api',
    series_id: null,
    created_at: 0,
    updated_at: 0,
    ...overrides,
  };
}

/** bookingRow as the bookings table held it before series_id (migration 2026-11-28-0027). */
export function bookingRowBeforeSeries(
  basics: BookingRowBasics,
  overrides: Partial<BookingsTable> = {},
): Omit<BookingsTable, 'series_id'> {
  const { series_id: _, ...row } = bookingRow(basics, overrides);
  return row;
}
