import type { BookingServicesTable, BookingsTable } from '../../../data/tables.ts';
import { heldUntil, holdEnd } from '../../../domain/booking/state-machine.ts';
import type { BookingOutline } from '../format/booking-outline.ts';
import {
  type Field,
  type ImportedEntry,
  type PlannedBooking,
  type Resolved,
  SCHEDULE_FIELDS,
  type StoredBooking,
} from './booking-entries.ts';
import { flag, sameRows } from './write-support.ts';

export type Column = keyof BookingsTable;
const SCHEDULE_COLUMNS: readonly Column[] = [
  'location_id',
  'staff_id',
  'starts_at',
  'ends_at',
  'blocked_until',
  'currency',
  'total_price_minor',
  'deposit_minor',
  'protection_applies',
  'late_cancellation_fee_percentage',
  'no_show_fee_percentage',
];
const DEPOSIT_COLUMNS: readonly Column[] = ['deposit_status', 'pending_requirements'];
const PROTECTION_COLUMNS: readonly Column[] = [
  'protection_setup_status',
  'payment_method_saved',
  'protection_setup_completed_at',
  'pending_requirements',
];
const STATUS_COLUMNS: readonly Column[] = [
  'status',
  'hold_expires_at',
  'pending_requirements',
  'cancelled_at',
  'cancel_reason',
  'deposit_refunded',
];
/** The columns each edited field of an entry re-applies. */
const COLUMNS_OF: Record<Field, readonly Column[]> = {
  location: [...SCHEDULE_COLUMNS, ...DEPOSIT_COLUMNS, ...PROTECTION_COLUMNS],
  services: [...SCHEDULE_COLUMNS, ...DEPOSIT_COLUMNS, ...PROTECTION_COLUMNS],
  staff: SCHEDULE_COLUMNS,
  starts_at: SCHEDULE_COLUMNS,
  client: ['client_id'],
  status: STATUS_COLUMNS,
  notes: ['notes'],
  deposit_paid: DEPOSIT_COLUMNS,
  protection: PROTECTION_COLUMNS,
};
/** Stamped when a status is entered; kept while the status stays what it is. */
const STATUS_STAMPS: readonly Column[] = [
  'hold_expires_at',
  'cancelled_at',
  'cancel_reason',
  'deposit_refunded',
];
const SEGMENT_COLUMNS = [
  'position',
  'service_id',
  'starts_at',
  'ends_at',
  'duration_minutes',
  'buffer_after_minutes',
  'price_minor',
  'deposit_minor',
] as const;

function depositStatus(booking: ImportedEntry, outline: BookingOutline): BookingsTable['deposit_status'] {
  if (outline.depositMinor === null) return 'not_required';
  return booking.deposit_paid ? 'paid' : 'pending';
}

export interface WantedBooking {
  row: BookingsTable;
  segments: BookingServicesTable[];
  /** The steps a pending_confirmation booking waits for, as stored (JSON). */
  outstanding: string;
}

export function wantedRow(
  ctx: { orgId: string; currency: string; now: number },
  planned: PlannedBooking,
  resolved: Resolved,
): WantedBooking {
  const { entry, outline } = resolved;
  const { orgId, now } = ctx;
  const applies = outline.protection.applies;
  const outstanding = JSON.stringify(outline.outstanding);
  const setup = applies ? entry.protection.setup_status : null;
  const hold =
    entry.status === 'pending_payment' || entry.status === 'pending_confirmation'
      ? holdEnd(now, resolved.holdMinutes[entry.status], outline.startsAt)
      : null;
  const row: BookingsTable = {
    id: planned.id,
    organisation_id: orgId,
    reference: planned.reference,
    location_id: resolved.locationId,
    staff_id: resolved.staffId,
    client_id: resolved.clientId,
    status: entry.status,
    starts_at: outline.startsAt,
    ends_at: outline.endsAt,
    blocked_until: outline.blockedUntil,
    currency: ctx.currency,
    total_price_minor: outline.totalPriceMinor,
    deposit_minor: outline.depositMinor,
    deposit_status: depositStatus(entry, outline),
    notes: entry.notes,
    hold_expires_at: hold,
    pending_requirements: entry.status === 'pending_confirmation' ? outstanding : null,
    protection_applies: flag(applies),
    late_cancellation_fee_percentage: outline.protection.late_cancellation_fee_percentage,
    no_show_fee_percentage: outline.protection.no_show_fee_percentage,
    protection_setup_status: setup,
    payment_method_saved: flag(applies && entry.protection.payment_method_saved),
    // The other system does not say when the setup finished; the import is when it became known.
    protection_setup_completed_at: setup === 'succeeded' ? now : null,
    cancelled_at: entry.status === 'cancelled' ? now : null,
    cancel_reason: null,
    deposit_refunded: null,
    source: 'import',
    series_id: null,
    created_at: now,
    updated_at: now,
  };
  const segments = outline.segments.map((segment, position) => ({
    organisation_id: orgId,
    booking_id: planned.id,
    position,
    service_id: segment.service.id,
    starts_at: segment.startsAt,
    ends_at: segment.endsAt,
    duration_minutes: segment.service.durationMinutes,
    buffer_after_minutes: segment.service.bufferAfterMinutes,
    price_minor: segment.service.priceMinor,
    deposit_minor: segment.service.depositMinor,
  }));
  return { row, segments, outstanding };
}

/**
 * A booking the import moved to another time, staff member or location with its status kept: logged
 * as the engine logs a reschedule (`rescheduled`), which is what sends integrators booking.rescheduled
 * (domain/webhooks.ts bookingEventType). A change of status says so itself.
 */
function movedBy(current: BookingsTable, changes: Partial<Record<Column, unknown>>) {
  if ('status' in changes || !MOVE_COLUMNS.some((column) => column in changes)) return {};
  const to = (changes.starts_at as number | undefined) ?? current.starts_at;
  const staffId = (changes.staff_id as string | undefined) ?? current.staff_id;
  return { rescheduled: { from: current.starts_at, to, staff_id: staffId } };
}

const MOVE_COLUMNS: readonly Column[] = ['starts_at', 'staff_id', 'location_id'];

/** A stored booking's update, worked out before anything is written. */
export interface Update {
  current: BookingsTable;
  changes: Partial<BookingsTable>;
  segments: BookingServicesTable[] | undefined;
  /** What the update's event records: the entry, which the next import compares with, and its edits. */
  log: Record<string, unknown>;
}

/**
 * Re-applies the columns the edited fields drive, where they differ from the row. A status the row
 * already has keeps its stamps (hold expiry, cancellation), so an unrelated edit restarts no hold.
 * Every update is logged with the entry it applied: the next import tells what its file edited by
 * that entry (an edit of notes or client alone left the entry before it there, so an edit put back
 * was taken for no edit at all). A change of status or schedule is logged as the engine logs its own;
 * another edit keeps the status (no webhook event: the contract has none for it). Undefined: nothing
 * to do.
 */
export function plannedUpdate(
  stored: StoredBooking,
  wanted: WantedBooking,
  entry: ImportedEntry,
  edited: readonly Field[],
): Update | undefined {
  const current = stored.row;
  const sameStatus = wanted.row.status === current.status;
  const columns = new Set(edited.flatMap((field) => COLUMNS_OF[field]));
  const status = columns.has('status') ? wanted.row.status : current.status;
  // The outstanding steps belong to the status the row ends up with, which may be the engine's.
  const target: BookingsTable = {
    ...wanted.row,
    pending_requirements: status === 'pending_confirmation' ? wanted.outstanding : null,
  };
  const changes: Partial<Record<Column, unknown>> = {};
  for (const column of columns) {
    if (sameStatus && STATUS_STAMPS.includes(column)) continue;
    if (column === 'protection_setup_completed_at' && current.protection_setup_status === 'succeeded') {
      if (target.protection_setup_status === 'succeeded') continue;
    }
    if (target[column] !== current[column]) changes[column] = target[column];
  }
  // A kept hold moved to an earlier start ends there at the latest, as a rescheduled one does.
  const startsAt = (changes.starts_at ?? current.starts_at) as number;
  const hold = ('hold_expires_at' in changes ? changes.hold_expires_at : current.hold_expires_at) as
    | number
    | null;
  if (heldUntil(hold, startsAt) !== hold) changes.hold_expires_at = heldUntil(hold, startsAt);
  const rescheduled = edited.some((field) => SCHEDULE_FIELDS.includes(field));
  const segmentsChanged = rescheduled && !sameRows(stored.segments, wanted.segments, SEGMENT_COLUMNS);
  if (Object.keys(changes).length === 0 && !segmentsChanged) return undefined;
  return {
    current,
    changes: changes as Partial<BookingsTable>,
    segments: segmentsChanged ? wanted.segments : undefined,
    log: { import: entry, changed: edited, ...movedBy(current, changes) },
  };
}
