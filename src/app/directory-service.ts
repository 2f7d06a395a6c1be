import { SLUG_MAX_LENGTH } from '../contract/common.ts';
import { aliasesOf } from '../data/alias-repository.ts';
import type { Db } from '../data/database.ts';
import {
  findActiveLocationBySlug,
  findLocationBySlug,
  listActiveLocations,
} from '../data/location-repository.ts';
import { findOrganisationBySlug } from '../data/organisation-repository.ts';
import { listOfferedServices, staffDeliveringAt } from '../data/service-repository.ts';
import { listStaffAt, servicesDeliveredAt } from '../data/staff-repository.ts';
import type { Location, NameKey, Page, ServiceWithStaff, StaffWithServices } from '../domain/catalogue.ts';
import { AppError } from '../domain/errors.ts';
import { readCatalogue } from './catalogue-cache.ts';

/**
 * The read side of the catalogue: locations, the services offered at each and the staff working
 * there. Every function is scoped to one organisation.
 */
export interface PageRequest {
  after: NameKey | null;
  limit: number;
}

export function listLocations(db: Db, organisationId: string, page: PageRequest): Promise<Page<Location>> {
  return listActiveLocations(db, organisationId, page.after, page.limit);
}

/**
 * 404 not_found unless the slug names an active location of the organisation. `param` is the name
 * the caller gave the slug: `slug` in paths, `location_slug` in a booking's body. With the
 * catalogue_version the caller read first, the lookup is reused while it stays (readCatalogue).
 */
export async function requireLocation(
  db: Db,
  organisationId: string,
  slug: string,
  param = 'slug',
  catalogueVersion?: number,
): Promise<Location> {
  // Longer than any slug can be: no location, and nothing kept of it in the catalogue cache.
  if (slug.length > SLUG_MAX_LENGTH) throw noLocation(slug, param);
  const location = await readCatalogue(db, organisationId, catalogueVersion, `location|${slug}`, () =>
    findActiveLocationBySlug(db, organisationId, slug),
  );
  if (!location) throw noLocation(slug, param);
  return location;
}

/** The 404 of a slug no location has, quoting at most its first 60 characters. */
function noLocation(slug: string, param: string): AppError {
  const quoted = slug.length > 60 ? `${Array.from(slug).slice(0, 57).join('')}...` : slug;
  return new AppError('not_found', `No location has the slug "${quoted}".`, param);
}

/**
 * The location a booking (or a waitlist entry) is at, by slug, active or not (404 not_found when the
 * organisation has none): a location made inactive takes no bookings, but its bookings are still read,
 * named and cancelled, and its entries listed. `param` as requireLocation's.
 */
export async function requireBookedLocation(
  db: Db,
  organisationId: string,
  slug: string,
  param = 'slug',
): Promise<Location> {
  if (slug.length > SLUG_MAX_LENGTH) throw noLocation(slug, param);
  const location = await findLocationBySlug(db, organisationId, slug);
  if (!location) throw noLocation(slug, param);
  return location;
}

/** The id of the organisation with this slug (the operator's commands name it so), or 404. */
export async function requireOrganisationId(db: Db, slug: string): Promise<string> {
  const organisation = await findOrganisationBySlug(db, slug);
  if (!organisation) throw new AppError('not_found', `No organisation has the slug "${slug}".`, 'org');
  return organisation.id;
}

export async function listServicesAt(
  db: Db,
  organisationId: string,
  location: Location,
  page: PageRequest,
): Promise<Page<ServiceWithStaff>> {
  const services = await listOfferedServices(db, organisationId, location.id, page.after, page.limit);
  const ids = services.items.map((s) => s.id);
  const staff = await staffDeliveringAt(db, organisationId, location.id, ids);
  const aliases = await aliasesOf(db, organisationId, 'services', ids);
  return {
    ...services,
    items: services.items.map((s) => ({
      ...s,
      staff: staff.get(s.id) ?? [],
      aliases: aliases.get(s.id) ?? [],
    })),
  };
}

export async function listStaffWorkingAt(
  db: Db,
  organisationId: string,
  location: Location,
  page: PageRequest,
): Promise<Page<StaffWithServices>> {
  const staff = await listStaffAt(db, organisationId, location.id, page.after, page.limit);
  const ids = staff.items.map((s) => s.id);
  const services = await servicesDeliveredAt(db, organisationId, location.id, ids);
  const aliases = await aliasesOf(db, organisationId, 'staff', ids);
  return {
    ...staff,
    items: staff.items.map((s) => ({
      ...s,
      serviceIds: services.get(s.id) ?? [],
      aliases: aliases.get(s.id) ?? [],
    })),
  };
}
