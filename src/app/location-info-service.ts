import { calendarsOf, closuresBetween, eligibleStaff } from '../data/availability-repository.ts';
import type { Db } from '../data/database.ts';
import { findOrganisationById } from '../data/organisation-repository.ts';
import { allOfferedServices } from '../data/service-repository.ts';
import { activeStaffAt, activeWorkingHoursAt } from '../data/staff-repository.ts';
import { dayClosure } from '../domain/availability/diagnose-start.ts';
import { weeklyHours } from '../domain/availability/opening-hours.ts';
import { addDays, searchWindow } from '../domain/availability/zone-calendar.ts';
import { AppError } from '../domain/errors.ts';
import type { LocationInfo } from '../domain/location-info.ts';
import { localDateAt } from '../domain/time-format.ts';
import { requireLocation } from './directory-service.ts';

/** How far ahead a location's closures are told. */
export const CLOSURE_HORIZON_DAYS = 60;

export async function getLocationInfo(
  db: Db,
  organisationId: string,
  locationSlug: string,
  now: number,
): Promise<LocationInfo> {
  const location = await requireLocation(db, organisationId, locationSlug, 'location');
  const today = localDateAt(now, location.timezone);
  const [hours, closures, services, organisation] = await Promise.all([
    activeWorkingHoursAt(db, organisationId, location.id),
    closuresBetween(db, organisationId, location.id, today, addDays(today, CLOSURE_HORIZON_DAYS)),
    allOfferedServices(db, organisationId, location.id),
    findOrganisationById(db, organisationId),
  ]);
  const currency = organisation?.currency ?? '';
  const { protection } = location;
  return {
    id: location.id,
    slug: location.slug,
    name: location.name,
    timezone: location.timezone,
    streetAddress: location.streetAddress,
    city: location.city,
    postalCode: location.postalCode,
    country: location.country,
    phone: location.phone,
    today,
    openingHours: weeklyHours(hours),
    closures,
    deposits: services
      .filter((s) => s.onlineBookable && (s.depositMinor ?? 0) > 0)
      .map((s) => ({ serviceId: s.id, serviceName: s.name, depositMinor: s.depositMinor!, currency })),
    protection: {
      applies: protection.applies,
      lateCancellationFeePercentage: protection.late_cancellation_fee_percentage,
      noShowFeePercentage: protection.no_show_fee_percentage,
    },
    policy: location.policy,
  };
}

/** Whether a location is open on a local date, or closed and why. */
export type DayStatus =
  | { date: string; open: true }
  | { date: string; open: false; closedBecause: 'closure'; closureReason: string | null }
  | { date: string; open: false; closedBecause: 'nobody_works' };

/**
 * Whether the location is closed on `date` (its local 'YYYY-MM-DD') and why: a closure (with its
 * reason), or nobody works that day (no active staff member there, or with `serviceIds` none who
 * delivers them all, has working hours left that day after time off). The same rule as a booking's
 * `closed` refusal, so "closed" on a day's search and on a booking agree.
 */
export async function getDayStatus(
  db: Db,
  organisationId: string,
  locationSlug: string,
  date: string,
  options: { serviceIds?: readonly string[] | undefined } = {},
): Promise<DayStatus> {
  if (!/^\d{4}-\d\d-\d\d$/.test(date) || addDays(date, 0) !== date) {
    throw new AppError('invalid_request', 'A date is a real calendar date, YYYY-MM-DD.', 'date');
  }
  const location = await requireLocation(db, organisationId, locationSlug, 'location');
  const staff =
    options.serviceIds === undefined
      ? await activeStaffAt(db, organisationId, location.id)
      : await eligibleStaff(db, organisationId, location.id, options.serviceIds);
  const ids = staff.map((s) => s.id);
  const [calendars, closures] = await Promise.all([
    calendarsOf(db, organisationId, location.id, ids, searchWindow(date, 1)),
    closuresBetween(db, organisationId, location.id, date, date),
  ]);
  const cause = dayClosure(
    {
      timezone: location.timezone,
      closedDates: new Set(closures.map((c) => c.date)),
      staff: ids.map((id) => ({
        workingHours: calendars.workingHours.get(id) ?? [],
        timeOff: calendars.timeOff.get(id) ?? [],
      })),
    },
    date,
  );
  if (cause === null) return { date, open: true };
  if (cause === 'closure') {
    return { date, open: false, closedBecause: 'closure', closureReason: closures[0]?.reason ?? null };
  }
  return { date, open: false, closedBecause: 'nobody_works' };
}
