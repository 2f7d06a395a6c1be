import { timeOffId } from '../format/ids.ts';
import { localInstant, staffTimeZone } from '../format/local-times.ts';
import type { Catalogue, CatalogueStaff } from '../format/schema.ts';

/** An entry of a staff member's time off as it is stored: its instants, and its id. */
export interface TimeOffRow {
  id: string;
  /** Whether the id is derived (the entry gives none): from the staff member and the instants. */
  derived: boolean;
  startsAt: number;
  endsAt: number;
}

/**
 * A staff member's time off, read in the zone of the first location they work at: what the import
 * writes, and what its identity checks compare, from one reading. Called on a validated catalogue,
 * whose times exist in that zone.
 */
export function timeOffRowsOf(catalogue: Catalogue, staff: CatalogueStaff, staffId: string): TimeOffRow[] {
  const zoneByRef = new Map(catalogue.locations.map((l) => [l.ref, l.timezone]));
  const zone = staffTimeZone(staff, zoneByRef, catalogue.locations[0]?.timezone)!;
  return staff.time_off.map((entry) => {
    const startsAt = localInstant(entry.start, zone)!;
    const endsAt = localInstant(entry.end, zone)!;
    return {
      id: entry.id ?? timeOffId(catalogue.organisation.slug, staffId, startsAt, endsAt),
      derived: entry.id === undefined,
      startsAt,
      endsAt,
    };
  });
}
