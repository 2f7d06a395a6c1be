import type { Db } from '../../../data/database.ts';
import { LIVE_STATUSES } from '../../../domain/booking/state-machine.ts';
import type { Report } from '../format/problems.ts';
import type { Catalogue } from '../format/schema.ts';
import { editedFields, importedEntry, type PlannedBooking, resolve } from './booking-entries.ts';
import type { IdentityPlan } from './identities.ts';
import { groupBy } from './write-support.ts';

/**
 * Stored live bookings (not in this file) that a new or edited file booking would overlap: found
 * here so that every one is reported, rather than the first the database trigger refuses.
 */
export async function checkStoredOverlaps(
  trx: Db,
  catalogue: Catalogue,
  plan: IdentityPlan,
  planned: readonly PlannedBooking[],
  now: number,
  report: Report,
): Promise<void> {
  if (plan.existingOrganisation === undefined) return;
  const fileIds = new Set(planned.map((p) => p.id));
  const wanted = catalogue.bookings.flatMap((booking, i) => {
    const stored = planned[i]!.stored;
    if (!LIVE_STATUSES.includes(booking.status)) return [];
    if (stored && editedFields(importedEntry(booking), stored.imported).length === 0) return [];
    const { outline, staffId } = resolve(catalogue, plan, booking);
    return [{ i, staffId, start: outline.startsAt, end: outline.blockedUntil }];
  });
  if (wanted.length === 0) return;
  const staffIds = [...new Set(wanted.map((w) => w.staffId))];
  const rows = await trx
    .selectFrom('bookings')
    .select(['id', 'reference', 'staff_id', 'starts_at', 'blocked_until'])
    .where('organisation_id', '=', plan.organisationId)
    .where('staff_id', 'in', staffIds)
    .where('status', 'in', [...LIVE_STATUSES])
    .where((eb) => eb.or([eb('hold_expires_at', 'is', null), eb('hold_expires_at', '>', now)]))
    .where(
      'starts_at',
      '<',
      wanted.reduce((max, w) => Math.max(max, w.end), -Infinity),
    )
    .where(
      'blocked_until',
      '>',
      wanted.reduce((min, w) => Math.min(min, w.start), Infinity),
    )
    .execute();
  const others = groupBy(
    rows.filter((r) => !fileIds.has(r.id)),
    'staff_id',
  );
  for (const w of wanted) {
    const clash = others.get(w.staffId)?.find((r) => r.starts_at < w.end && w.start < r.blocked_until);
    if (clash) {
      report(
        ['bookings', w.i, 'starts_at'],
        `overlaps booking ${clash.reference} of the same staff member, already in the database (buffers included)`,
      );
    }
  }
}
