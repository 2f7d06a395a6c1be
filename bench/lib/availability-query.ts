import { loadQuery } from '../../src/app/availability-service.ts';
import { requireLocation } from '../../src/app/directory-service.ts';
import type { Db } from '../../src/data/database.ts';
import type { AvailabilityQuery } from '../../src/domain/availability/types.ts';

/** The AvailabilityQuery that getAvailability builds for an any-staff search: the service's own loader. */
export async function loadAvailabilityQuery(
  db: Db,
  organisationId: string,
  request: { locationSlug: string; serviceIds: string[]; fromDate: string; days: number },
  now: number,
): Promise<AvailabilityQuery> {
  const location = await requireLocation(db, organisationId, request.locationSlug);
  const { query } = await loadQuery(
    db,
    organisationId,
    { location, serviceIds: request.serviceIds },
    request.fromDate,
    request.days,
    now,
  );
  if (!query) throw new Error('Nobody at the bench location delivers the benchmark services.');
  return query;
}
