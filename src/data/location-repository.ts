import type { Location, NameKey, Page } from '../domain/catalogue.ts';
import type { Db } from './database.ts';
import { afterNameKey, toPage } from './page-query.ts';
import type { LocationsTable } from './tables.ts';

/** The one mapper from a locations row to the domain Location. */
export function toLocation(row: LocationsTable): Location {
  const applies = row.protection_applies === 1;
  return {
    id: row.id,
    organisationId: row.organisation_id,
    slug: row.slug,
    name: row.name,
    timezone: row.timezone,
    streetAddress: row.street_address,
    city: row.city,
    postalCode: row.postal_code,
    country: row.country,
    phone: row.phone,
    active: row.active === 1,
    policy: {
      slotIntervalMinutes: row.slot_interval_minutes,
      minNoticeMinutes: row.min_notice_minutes,
      maxAdvanceDays: row.max_advance_days,
      cancellationWindowHours: row.cancellation_window_hours,
      lateCancellation: row.late_cancellation,
      lateReschedule: row.late_reschedule,
      pendingConfirmationHoldMinutes: row.pending_confirmation_hold_minutes,
      pendingPaymentHoldMinutes: row.pending_payment_hold_minutes,
      reminderHoursBefore: row.reminder_hours_before,
      waitlistOfferMinutes: row.waitlist_offer_minutes,
    },
    protection: {
      applies,
      late_cancellation_fee_percentage: applies ? row.late_cancellation_fee_percentage : null,
      no_show_fee_percentage: applies ? row.no_show_fee_percentage : null,
    },
  };
}

export async function listActiveLocations(
  db: Db,
  organisationId: string,
  after: NameKey | null,
  limit: number,
): Promise<Page<Location>> {
  const query = db
    .selectFrom('locations')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .where('active', '=', 1);
  const rows = await afterNameKey(query, 'locations.name', 'locations.id', after, limit).execute();
  return toPage(rows, limit, toLocation);
}

/** An active location of the organisation; inactive ones are not visible through the API. */
export async function findActiveLocationBySlug(
  db: Db,
  organisationId: string,
  slug: string,
): Promise<Location | undefined> {
  const location = await findLocationBySlug(db, organisationId, slug);
  return location?.active ? location : undefined;
}

/**
 * A location by slug, active or not: the one a booking is at, which keeps being read (named, its
 * policy said, the booking cancelled) after the location stops taking bookings.
 */
export async function findLocationBySlug(
  db: Db,
  organisationId: string,
  slug: string,
): Promise<Location | undefined> {
  const row = await db
    .selectFrom('locations')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .where('slug', '=', slug)
    .executeTakeFirst();
  return row ? toLocation(row) : undefined;
}

/** A location by id, active or not: a booking keeps its location whatever happens to it later. */
export async function findLocationById(
  db: Db,
  organisationId: string,
  id: string,
): Promise<Location | undefined> {
  const row = await db
    .selectFrom('locations')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toLocation(row) : undefined;
}

/** The countries of each organisation's locations (inactive ones too: their customers stay). */
export async function locationCountriesOf(
  db: Db,
  organisationIds: readonly string[],
): Promise<Map<string, string[]>> {
  const countries = new Map<string, string[]>();
  if (organisationIds.length === 0) return countries;
  const rows = await db
    .selectFrom('locations')
    .select(['organisation_id', 'country'])
    .distinct()
    .where('organisation_id', 'in', organisationIds)
    .where('country', 'is not', null)
    .execute();
  for (const row of rows) {
    const list = countries.get(row.organisation_id) ?? [];
    list.push(row.country!);
    countries.set(row.organisation_id, list);
  }
  return countries;
}

/** A list of country codes as organisations.sms_countries keeps it (comma-separated). */
export function storedCountries(stored: string): string[] {
  return stored === '' ? [] : stored.split(',');
}
