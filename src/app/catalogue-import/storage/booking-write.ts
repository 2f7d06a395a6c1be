import type { Db } from '../../../data/database.ts';
import { expireLapsedHoldsInBlock } from '../../../data/hold-expiry.ts';
import type { BookingsTable } from '../../../data/tables.ts';
import { LIVE_STATUSES } from '../../../domain/booking/state-machine.ts';
import { logBookingEvent } from '../../booking-event-log.ts';
import type { PathSegment } from '../format/problems.ts';
import type { Catalogue } from '../format/schema.ts';
import { type Column, plannedUpdate, type Update, type WantedBooking, wantedRow } from './booking-changes.ts';
import {
  ACTOR,
  editedFields,
  FIELDS,
  type ImportedEntry,
  importedEntry,
  type PlannedBooking,
  resolve,
} from './booking-entries.ts';
import type { IdentityPlan } from './identities.ts';
import { atPath, type EntityCounts, insertAll } from './write-support.ts';

type Step = { path: PathSegment[] } & (
  | { kind: 'unchanged'; recorded?: { row: BookingsTable; log: Record<string, unknown> } }
  | { kind: 'insert'; wanted: WantedBooking; entry: ImportedEntry }
  | { kind: 'update'; update: Update }
);

/** Columns the overlap trigger watches. */
const TRIGGER_COLUMNS: readonly Column[] = ['staff_id', 'starts_at', 'blocked_until', 'status'];

/**
 * Writes the planned bookings after the catalogue they point at; counts as the other writers do.
 * Live bookings the file moves are parked out of the overlap trigger's sight first, so that two
 * bookings trading places do not collide half-way; each gets its final status back when written.
 */
export async function writeBookings(
  trx: Db,
  catalogue: Catalogue,
  plan: IdentityPlan,
  planned: readonly PlannedBooking[],
  now: number,
): Promise<EntityCounts> {
  const ctx = { orgId: plan.organisationId, currency: catalogue.organisation.currency, now };
  const steps = catalogue.bookings.map((booking, i): Step => {
    const path: PathSegment[] = ['bookings', i];
    const target = planned[i]!;
    const entry = importedEntry(booking);
    const edited = target.stored === undefined ? [...FIELDS] : editedFields(entry, target.stored.imported);
    if (edited.length === 0) return { path, kind: 'unchanged' };
    const wanted = wantedRow(ctx, target, resolve(catalogue, plan, booking));
    if (target.stored === undefined) return { path, kind: 'insert', wanted, entry };
    const update = plannedUpdate(target.stored, wanted, entry, edited);
    if (update !== undefined) return { path, kind: 'update', update };
    // Edited in the file to what the row already holds (the engine made the same change): nothing to
    // write, but the entry is what the next import compares with, so that a file putting the field
    // back is an edit again.
    return {
      path,
      kind: 'unchanged',
      recorded: { row: target.stored.row, log: { import: entry, changed: edited } },
    };
  });
  for (const step of steps) {
    if (step.kind !== 'update') continue;
    const { current, changes } = step.update;
    if (!LIVE_STATUSES.includes(current.status) || !TRIGGER_COLUMNS.some((c) => c in changes)) continue;
    await trx
      .updateTable('bookings')
      .set({ status: 'expired' })
      .where('organisation_id', '=', current.organisation_id)
      .where('id', '=', current.id)
      .execute();
    changes.status = changes.status ?? current.status;
  }
  const counts: EntityCounts = { created: 0, updated: 0, unchanged: 0 };
  for (const step of steps) {
    if (step.kind === 'unchanged') {
      const { recorded } = step;
      if (recorded)
        await logImport(trx, { ...recorded.row, updated_at: now }, recorded.row.status, recorded.log);
      counts.unchanged += 1;
    } else if (step.kind === 'insert') {
      const { row, segments } = step.wanted;
      await atPath(step.path, async () => {
        if (LIVE_STATUSES.includes(row.status)) {
          const block = { organisationId: row.organisation_id, staffId: row.staff_id, from: row.starts_at };
          await expireLapsedHoldsInBlock(trx, { ...block, to: row.blocked_until }, now, logBookingEvent);
        }
        await trx.insertInto('bookings').values(row).execute();
        await insertAll(trx, 'booking_services', segments);
        await logImport(trx, row, null, { import: step.entry });
      });
      counts.created += 1;
    } else {
      await atPath(step.path, () => applyUpdate(trx, step.update, now));
      counts.updated += 1;
    }
  }
  return counts;
}

async function applyUpdate(trx: Db, update: Update, now: number): Promise<void> {
  const { current, changes, segments, log } = update;
  await trx
    .updateTable('bookings')
    .set({ ...changes, updated_at: now })
    .where('organisation_id', '=', current.organisation_id)
    .where('id', '=', current.id)
    .execute();
  if (segments) {
    await trx
      .deleteFrom('booking_services')
      .where('organisation_id', '=', current.organisation_id)
      .where('booking_id', '=', current.id)
      .execute();
    await insertAll(trx, 'booking_services', segments);
  }
  await logImport(trx, { ...current, ...changes, updated_at: now }, current.status, log);
}

function logImport(
  trx: Db,
  row: BookingsTable,
  from: BookingsTable['status'] | null,
  details: Record<string, unknown>,
): Promise<void> {
  return logBookingEvent(trx, {
    organisationId: row.organisation_id,
    bookingId: row.id,
    from,
    to: row.status,
    actor: ACTOR,
    at: row.updated_at,
    details,
  });
}
