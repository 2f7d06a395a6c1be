import { closuresBetween } from '../data/availability-repository.ts';
import type { Db } from '../data/database.ts';
import { findOrganisationById } from '../data/organisation-repository.ts';
import { allOfferedServices } from '../data/service-repository.ts';
import { activeWorkingHoursAt } from '../data/staff-repository.ts';
import { weeklyHours } from '../domain/availability/opening-hours.ts';
import { addDays } from '../domain/availability/zone-calendar.ts';
import type { Location } from '../domain/catalogue.ts';
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
  /** What a 404 names the slug: `slug` in a REST path. */
  param = 'location',
): Promise<LocationInfo> {
  const location = await requireLocation(db, organisationId, locationSlug, param);
  return describeLocation(db, organisationId, location, now);
}

/** What getLocationInfo tells of a location already read (active or not: a booking's own location). */
export async function describeLocation(
  db: Db,
  organisationId: string,
  location: Location,
  now: number,
): Promise<LocationInfo> {
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
