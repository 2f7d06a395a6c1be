import { calendarsOf, closuresBetween, eligibleStaff } from '../data/availability-repository.ts';
import type { Db } from '../data/database.ts';
import { allOfferedServices } from '../data/service-repository.ts';
import { activeStaffAt, activeWorkingHoursAt } from '../data/staff-repository.ts';
import { dayClosure } from '../domain/availability/diagnose-start.ts';
import { type DayHours, weeklyHours } from '../domain/availability/opening-hours.ts';
import { addDays, searchWindow } from '../domain/availability/zone-calendar.ts';
import type { LocationPolicy } from '../domain/catalogue.ts';
import { AppError } from '../domain/errors.ts';
import { localDateAt } from '../domain/time-format.ts';
import { requireLocation } from './directory-service.ts';

/** How far ahead a location's closures are told. */
export const CLOSURE_HORIZON_DAYS = 60;

/**
 * What a caller may ask a receptionist about a location, as data (the MCP layer puts it into words):
 * where it is, when it is open, when it is closed, what booking there asks of them, and the policy.
 */
export interface LocationInfo {
  id: string;
  slug: string;
  name: string;
  timezone: string;
  streetAddress: string | null;
  city: string | null;
  postalCode: string | null;
  country: string | null;
  phone: string | null;
  /** The location's local date now. */
  today: string;
  /** The union of its active staff's working hours there, per weekday from Monday. */
  openingHours: DayHours[];
  /** Closures from today to CLOSURE_HORIZON_DAYS days ahead (local dates, inclusive), by date. */
  closures: { date: string; reason: string | null }[];
  /** Whether any service bookable online there asks for a deposit. */
  depositsApply: boolean;
  protection: {
    applies: boolean;
    lateCancellationFeePercentage: number | null;
    noShowFeePercentage: number | null;
  };
  /** Windows, late changes, notice, advance and holds. */
  policy: LocationPolicy;
}

export async function getLocationInfo(
  db: Db,
  organisationId: string,
  locationSlug: string,
  now: number,
): Promise<LocationInfo> {
  const location = await requireLocation(db, organisationId, locationSlug, 'location');
  const today = localDateAt(now, location.timezone);
  const [hours, closures, services] = await Promise.all([
    activeWorkingHoursAt(db, organisationId, location.id),
    closuresBetween(db, organisationId, location.id, today, addDays(today, CLOSURE_HORIZON_DAYS)),
    allOfferedServices(db, organisationId, location.id),
  ]);
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
    depositsApply: services.some((s) => s.onlineBookable && (s.depositMinor ?? 0) > 0),
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
