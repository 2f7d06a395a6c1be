import type { NameKey, Page, StaffRef } from '../domain/catalogue.ts';
import type { Db } from './database.ts';
import { afterNameKey, toPage } from './page-query.ts';

/** Active staff with working hours at a location. */
export async function listStaffAt(
  db: Db,
  organisationId: string,
  locationId: string,
  after: NameKey | null,
  limit: number,
): Promise<Page<StaffRef>> {
  const query = db
    .selectFrom('staff_locations')
    .innerJoin('staff', 'staff.id', 'staff_locations.staff_id')
    .select(['staff.id', 'staff.name'])
    .where('staff_locations.organisation_id', '=', organisationId)
    .where('staff_locations.location_id', '=', locationId)
    .where('staff.active', '=', 1);
  const rows = await afterNameKey(query, 'staff.name', 'staff.id', after, limit).execute();
  return toPage(rows, limit, (row) => ({ id: row.id, name: row.name }));
}

/** For each given staff member, the services they deliver that are offered at the location. */
export async function servicesDeliveredAt(
  db: Db,
  organisationId: string,
  locationId: string,
  staffIds: readonly string[],
): Promise<Map<string, string[]>> {
  const byStaff = new Map<string, string[]>(staffIds.map((id) => [id, []]));
  if (staffIds.length === 0) return byStaff;
  const rows = await db
    .selectFrom('staff_services')
    .innerJoin('service_locations', (join) =>
      join
        .onRef('service_locations.service_id', '=', 'staff_services.service_id')
        .on('service_locations.location_id', '=', locationId),
    )
    .innerJoin('services', 'services.id', 'staff_services.service_id')
    .select(['staff_services.staff_id', 'staff_services.service_id'])
    .where('staff_services.organisation_id', '=', organisationId)
    .where('staff_services.staff_id', 'in', staffIds)
    .orderBy('services.name')
    .orderBy('services.id')
    .execute();
  for (const row of rows) byStaff.get(row.staff_id)?.push(row.service_id);
  return byStaff;
}
