import {
  applyLocationOverride,
  type NameKey,
  type OfferedService,
  type Page,
  type StaffRef,
} from '../domain/catalogue.ts';
import type { Db } from './database.ts';
import { afterNameKey, toPage } from './page-query.ts';

const offeredServiceColumns = [
  'services.id',
  'services.name',
  'services.category',
  'services.duration_minutes',
  'services.buffer_after_minutes',
  'services.price_minor',
  'services.deposit_minor',
  'services.online_bookable',
  'service_locations.duration_minutes as override_duration_minutes',
  'service_locations.price_minor as override_price_minor',
  'service_locations.deposit_overridden',
  'service_locations.deposit_minor as override_deposit_minor',
  'service_locations.online_bookable as override_online_bookable',
] as const;

interface OfferedServiceRow {
  id: string;
  name: string;
  category: string | null;
  duration_minutes: number;
  buffer_after_minutes: number;
  price_minor: number;
  deposit_minor: number | null;
  online_bookable: 0 | 1;
  override_duration_minutes: number | null;
  override_price_minor: number | null;
  deposit_overridden: 0 | 1;
  override_deposit_minor: number | null;
  override_online_bookable: 0 | 1 | null;
}

/** The one mapper from a services + service_locations row to the service as offered there. */
function toOfferedService(row: OfferedServiceRow): OfferedService {
  return applyLocationOverride(
    {
      id: row.id,
      name: row.name,
      category: row.category,
      durationMinutes: row.duration_minutes,
      bufferAfterMinutes: row.buffer_after_minutes,
      priceMinor: row.price_minor,
      depositMinor: row.deposit_minor,
      onlineBookable: row.online_bookable === 1,
    },
    {
      durationMinutes: row.override_duration_minutes,
      priceMinor: row.override_price_minor,
      depositOverridden: row.deposit_overridden === 1,
      depositMinor: row.override_deposit_minor,
      onlineBookable: row.override_online_bookable === null ? null : row.override_online_bookable === 1,
    },
  );
}

function offeredAt(db: Db, organisationId: string, locationId: string) {
  return db
    .selectFrom('service_locations')
    .innerJoin('services', 'services.id', 'service_locations.service_id')
    .select(offeredServiceColumns)
    .where('service_locations.organisation_id', '=', organisationId)
    .where('service_locations.location_id', '=', locationId);
}

/** Services offered at a location, per-location overrides applied, bookable online or not. */
export async function listOfferedServices(
  db: Db,
  organisationId: string,
  locationId: string,
  after: NameKey | null,
  limit: number,
): Promise<Page<OfferedService>> {
  const query = offeredAt(db, organisationId, locationId);
  const rows = await afterNameKey(query, 'services.name', 'services.id', after, limit).execute();
  return toPage(rows, limit, toOfferedService);
}

/** Every service offered at the location (overrides applied), bookable online or not. */
export async function allOfferedServices(
  db: Db,
  organisationId: string,
  locationId: string,
): Promise<OfferedService[]> {
  return (await offeredAt(db, organisationId, locationId).execute()).map(toOfferedService);
}

/** The given services as offered at the location (overrides applied); services not offered there are absent. */
export async function offeredServicesByIds(
  db: Db,
  organisationId: string,
  locationId: string,
  serviceIds: readonly string[],
): Promise<OfferedService[]> {
  if (serviceIds.length === 0) return [];
  const rows = await offeredAt(db, organisationId, locationId)
    .where('services.id', 'in', serviceIds)
    .execute();
  return rows.map(toOfferedService);
}

/**
 * For each given service, the active staff working at the location who deliver it, sorted by name.
 * One query for the whole page, however many services it holds.
 */
export async function staffDeliveringAt(
  db: Db,
  organisationId: string,
  locationId: string,
  serviceIds: readonly string[],
): Promise<Map<string, StaffRef[]>> {
  const byService = new Map<string, StaffRef[]>(serviceIds.map((id) => [id, []]));
  if (serviceIds.length === 0) return byService;
  const rows = await db
    .selectFrom('staff_services')
    .innerJoin('staff', 'staff.id', 'staff_services.staff_id')
    .innerJoin('staff_locations', (join) =>
      join
        .onRef('staff_locations.staff_id', '=', 'staff.id')
        .on('staff_locations.location_id', '=', locationId),
    )
    .select(['staff_services.service_id', 'staff.id', 'staff.name'])
    .where('staff_services.organisation_id', '=', organisationId)
    .where('staff_services.service_id', 'in', serviceIds)
    .where('staff.active', '=', 1)
    .orderBy('staff.name')
    .orderBy('staff.id')
    .execute();
  for (const row of rows) byService.get(row.service_id)?.push({ id: row.id, name: row.name });
  return byService;
}
