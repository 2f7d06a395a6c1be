import type { Db } from '../data/database.ts';
import type { SeriesNote } from '../domain/outbox.ts';

/**
 * The later visits of a series with another stylist than its first, and who (in visit order), for the
 * series' confirmation to say; undefined when all share one. A series booked with no stylist named
 * keeps the first one's where free and takes anyone free otherwise: "Cut with Ana" alone would have
 * the customer expect Ana every time.
 */
export async function otherStaffOf(
  trx: Db,
  organisationId: string,
  firstStaffId: string,
  later: readonly { staffId: string }[],
): Promise<SeriesNote['otherStaff']> {
  const others = later.filter((visit) => visit.staffId !== firstStaffId);
  if (others.length === 0) return undefined;
  const ids = [...new Set(others.map((visit) => visit.staffId))];
  const rows = await trx
    .selectFrom('staff')
    .select(['id', 'name'])
    .where('organisation_id', '=', organisationId)
    .where('id', 'in', ids)
    .execute();
  const nameOf = new Map(rows.map((row) => [row.id, row.name]));
  const names = ids.flatMap((id) => nameOf.get(id) ?? []);
  return names.length > 0 ? { visits: others.length, names } : undefined;
}
