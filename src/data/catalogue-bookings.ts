import { createHash } from 'node:crypto';
import {
  type BookingOutline,
  type CatalogueProblem,
  firstLocalInstant,
  formatPath,
  offeredAt,
  outlineBooking,
  type PathSegment,
} from '../app/catalogue-checks.ts';
import type { Catalogue, CatalogueBooking } from '../app/catalogue-schema.ts';
import { REFERENCE_ALPHABET } from '../domain/booking/reference.ts';
import { LIVE_STATUSES } from '../domain/booking/state-machine.ts';
import { catalogueId } from '../domain/ids.ts';
import { appendEvent } from './booking-repository.ts';
import type { IdentityPlan } from './catalogue-identities.ts';
import { atPath, type EntityCounts, flag, groupBy, insertAll, sameRows } from './catalogue-write-support.ts';
import type { Db } from './database.ts';
import type { BookingServicesTable, BookingsTable } from './tables.ts';

/**
 * Existing appointments brought over from another system (design.md section 5). Each is matched to
 * its row by explicit id, else by reference, else by an id derived from its staff member and start,
 * so a re-import finds what the last one wrote. What the last import took from the file is kept in
 * its event's details: a re-import compares the file with that, not with the row, so changes the
 * engine made since (a lapsed hold expired, a cancellation) survive re-importing an unchanged file,
 * and an edited entry re-applies only the fields that were edited.
 */

const MINUTE = 60_000;
const ACTOR = 'import';
const CHUNK = 500;

/** One file booking as planned: the row it becomes, and that row as stored (when it exists). */
export interface PlannedBooking {
  id: string;
  reference: string;
  stored: StoredBooking | undefined;
}

interface StoredBooking {
  row: BookingsTable;
  segments: BookingServicesTable[];
  /** The entry as the last import that wrote an event for this booking read it. */
  imported: ImportedEntry | undefined;
}

/** The fields of a file entry a re-import compares, in a fixed shape (the event details' `import`). */
type ImportedEntry = Required<Omit<CatalogueBooking, 'id' | 'reference'>>;
type Field = keyof ImportedEntry;

const FIELDS: readonly Field[] = [
  'location',
  'services',
  'staff',
  'client',
  'starts_at',
  'status',
  'notes',
  'deposit_paid',
  'protection',
];
const SCHEDULE_FIELDS: readonly Field[] = ['location', 'services', 'staff', 'starts_at'];

type Column = keyof BookingsTable;
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

function importedEntry(booking: CatalogueBooking): ImportedEntry {
  return {
    location: booking.location,
    services: booking.services,
    staff: booking.staff,
    client: booking.client,
    starts_at: booking.starts_at,
    status: booking.status,
    notes: booking.notes,
    deposit_paid: booking.deposit_paid,
    protection: {
      setup_status: booking.protection.setup_status,
      payment_method_saved: booking.protection.payment_method_saved,
    },
  };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function editedFields(entry: ImportedEntry, imported: ImportedEntry | undefined): Field[] {
  return imported === undefined ? [...FIELDS] : FIELDS.filter((f) => !same(entry[f], imported[f]));
}

/**
 * The id a booking without an explicit id gets, so the same file gives the same ids on every import:
 * derived from its reference when it has one (references are unique), else from its staff member and
 * local start, with an occurrence number for a second booking at the same staff and start (a
 * cancelled one and its replacement).
 */
function derivedIds(slug: string, bookings: readonly CatalogueBooking[]): string[] {
  const seen = new Map<string, number>();
  return bookings.map((booking) => {
    if (booking.reference !== undefined) {
      return catalogueId(slug, 'booking', `reference:${booking.reference}`);
    }
    const key = `${booking.staff}|${booking.starts_at}`;
    const n = (seen.get(key) ?? 0) + 1;
    if (booking.id === undefined) seen.set(key, n);
    return catalogueId(slug, 'booking', n === 1 ? key : `${key}|${n}`);
  });
}

/** A reference derived from the booking id (attempt 0, then 1, ... on a clash): stable across imports. */
export function derivedReference(prefix: string, bookingId: string, attempt: number): string {
  const digest = createHash('sha256').update(`${bookingId}#${attempt}`).digest();
  let code = '';
  for (let i = 0; i < 6; i++) code += REFERENCE_ALPHABET[digest[i]! % REFERENCE_ALPHABET.length];
  return `${prefix}-${code}`;
}

type Report = (path: PathSegment[], message: string) => void;
type Known = Pick<BookingsTable, 'id' | 'organisation_id' | 'reference' | 'source'>;

async function knownBookings(
  trx: Db,
  column: 'id' | 'reference',
  values: readonly string[],
  orgId: string,
): Promise<Known[]> {
  const rows: Known[] = [];
  const unique = [...new Set(values)];
  for (let i = 0; i < unique.length; i += CHUNK) {
    let query = trx
      .selectFrom('bookings')
      .select(['id', 'organisation_id', 'reference', 'source'])
      .where(column, 'in', unique.slice(i, i + CHUNK));
    // Ids are unique across organisations; references only within one.
    if (column === 'reference') query = query.where('organisation_id', '=', orgId);
    rows.push(...(await query.execute()));
  }
  return rows;
}

/**
 * Matches every file booking to its stored row (or plans a new one) and settles its reference,
 * reporting instead of writing whatever would clash: an id or reference held by another booking, a
 * reference that would change, a match that was not imported, an overlap with a stored live booking.
 */
export async function planBookings(
  trx: Db,
  catalogue: Catalogue,
  plan: IdentityPlan,
  now: number,
): Promise<{ bookings: PlannedBooking[] } | { problems: CatalogueProblem[] }> {
  const bookings = catalogue.bookings;
  if (bookings.length === 0) return { bookings: [] };
  const problems: CatalogueProblem[] = [];
  const report: Report = (path, message) => problems.push({ path: formatPath(path), message });
  const orgId = plan.organisationId;
  const { slug, booking_reference_prefix: prefix } = catalogue.organisation;
  const derived = derivedIds(slug, bookings);
  const explicit = bookings.flatMap((b) => (b.id === undefined ? [] : [b.id]));
  const byId = new Map(
    (await knownBookings(trx, 'id', [...explicit, ...derived], orgId)).map((r) => [r.id, r]),
  );
  const given = bookings.flatMap((b) => (b.reference === undefined ? [] : [b.reference]));
  const byReference = new Map(
    (await knownBookings(trx, 'reference', given, orgId)).map((r) => [r.reference, r]),
  );

  const claimedBy = new Map<string, number>();
  const matches = bookings.map((booking, i) => {
    const path: PathSegment[] = ['bookings', i];
    const byGiven = booking.reference === undefined ? undefined : byReference.get(booking.reference);
    const match =
      booking.id === undefined ? (byGiven ?? byId.get(derived[i]!)) : (byId.get(booking.id) ?? byGiven);
    if (match === undefined) return undefined;
    const at = [...path, booking.id === undefined ? 'reference' : 'id'];
    if (match.organisation_id !== orgId) {
      report([...path, 'id'], 'already belongs to a booking of another organisation');
      return undefined;
    }
    if (match.source !== 'import') {
      report(at, `matches booking ${match.reference}, which was not imported (source ${match.source})`);
      return undefined;
    }
    if (booking.id !== undefined && byGiven !== undefined && byGiven.id !== match.id) {
      report([...path, 'id'], `belongs to booking ${match.reference}, not to ${byGiven.reference}`);
      return undefined;
    }
    if (booking.id !== undefined && match.id !== booking.id) {
      report([...path, 'id'], `this booking already exists with id ${match.id}; ids cannot change`);
      return undefined;
    }
    if (booking.reference !== undefined && match.reference !== booking.reference) {
      const other = byGiven !== undefined && byGiven.id !== match.id;
      report(
        [...path, 'reference'],
        other
          ? `is already the reference of another booking (${byGiven.id})`
          : `this booking was imported with reference ${match.reference}; references cannot change`,
      );
      return undefined;
    }
    const first = claimedBy.get(match.id);
    if (first !== undefined) {
      report(at, `matches the same stored booking as ${formatPath(['bookings', first])}`);
      return undefined;
    }
    claimedBy.set(match.id, i);
    return match;
  });

  const ids = bookings.map((b, i) => matches[i]?.id ?? b.id ?? derived[i]!);
  const references = await settleReferences(trx, orgId, prefix, bookings, matches, ids);
  const stored = await storedBookings(
    trx,
    matches.flatMap((m) => (m ? [m.id] : [])),
  );
  const planned = bookings.map((_, i) => ({
    id: ids[i]!,
    reference: references[i]!,
    stored: stored.get(ids[i]!),
  }));
  if (problems.length > 0) return { problems };
  await checkStoredOverlaps(trx, catalogue, plan, planned, now, report);
  return problems.length > 0 ? { problems } : { bookings: planned };
}

/** Given references as given; stored ones kept; new ones derived from the id, skipping taken ones. */
async function settleReferences(
  trx: Db,
  orgId: string,
  prefix: string,
  bookings: readonly CatalogueBooking[],
  matches: readonly (Known | undefined)[],
  ids: readonly string[],
): Promise<string[]> {
  const references = bookings.map((b, i) => b.reference ?? matches[i]?.reference);
  const taken = new Set(references.filter((r) => r !== undefined));
  let pending = bookings.flatMap((_, i) => (references[i] === undefined ? [{ i, attempt: 0 }] : []));
  while (pending.length > 0) {
    const candidates = pending.map(({ i, attempt }) => derivedReference(prefix, ids[i]!, attempt));
    const stored = new Set(
      (await knownBookings(trx, 'reference', candidates, orgId)).map((r) => r.reference),
    );
    const clashing: typeof pending = [];
    pending.forEach((entry, k) => {
      const candidate = candidates[k]!;
      if (stored.has(candidate) || taken.has(candidate)) {
        clashing.push({ i: entry.i, attempt: entry.attempt + 1 });
      } else {
        taken.add(candidate);
        references[entry.i] = candidate;
      }
    });
    pending = clashing;
  }
  return references as string[];
}

async function storedBookings(trx: Db, ids: readonly string[]): Promise<Map<string, StoredBooking>> {
  const result = new Map<string, StoredBooking>();
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK);
    const rows = await trx.selectFrom('bookings').selectAll().where('id', 'in', chunk).execute();
    const segments = groupBy(
      await trx
        .selectFrom('booking_services')
        .selectAll()
        .where('booking_id', 'in', chunk)
        .orderBy('position')
        .execute(),
      'booking_id',
    );
    const events = await trx
      .selectFrom('booking_events')
      .select(['booking_id', 'details'])
      .where('booking_id', 'in', chunk)
      .where('actor', '=', ACTOR)
      .where('details', 'is not', null)
      .orderBy('booking_id')
      .orderBy('seq')
      .execute();
    const imported = new Map<string, ImportedEntry>();
    for (const event of events) {
      const details = JSON.parse(event.details!) as { import?: ImportedEntry };
      if (details.import) imported.set(event.booking_id, details.import);
    }
    for (const row of rows) {
      result.set(row.id, { row, segments: segments.get(row.id) ?? [], imported: imported.get(row.id) });
    }
  }
  return result;
}

/** What writing one file booking needs: its entry, its outline, and the ids it points at. */
interface Resolved {
  entry: ImportedEntry;
  outline: BookingOutline;
  locationId: string;
  staffId: string;
  clientId: string;
  holdMinutes: { pending_payment: number; pending_confirmation: number };
}

function resolve(catalogue: Catalogue, plan: IdentityPlan, booking: CatalogueBooking): Resolved {
  const index = <T extends { ref: string }>(items: readonly T[], ref: string) =>
    items.findIndex((item) => item.ref === ref);
  const l = index(catalogue.locations, booking.location);
  const location = catalogue.locations[l]!;
  const services = booking.services.map((ref) => {
    const s = index(catalogue.services, ref);
    return offeredAt(catalogue.services[s]!, plan.services[s]!, booking.location);
  });
  const startsAt = firstLocalInstant(booking.starts_at, location.timezone)!;
  return {
    entry: importedEntry(booking),
    outline: outlineBooking(booking, services, location.booking_protection, startsAt),
    locationId: plan.locations[l]!,
    staffId: plan.staff[index(catalogue.staff, booking.staff)]!,
    clientId: plan.clients[index(catalogue.clients, booking.client)]!,
    holdMinutes: {
      pending_payment: location.policy.pending_payment_hold_minutes,
      pending_confirmation: location.policy.pending_confirmation_hold_minutes,
    },
  };
}

/**
 * Stored live bookings (not in this file) that a new or edited file booking would overlap: found
 * here so that every one is reported, rather than the first the database trigger refuses.
 */
async function checkStoredOverlaps(
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

function depositStatus(booking: ImportedEntry, outline: BookingOutline): BookingsTable['deposit_status'] {
  if (outline.depositMinor === null) return 'not_required';
  return booking.deposit_paid ? 'paid' : 'pending';
}

interface WantedBooking {
  row: BookingsTable;
  segments: BookingServicesTable[];
  /** The steps a pending_confirmation booking waits for, as stored (JSON). */
  outstanding: string;
}

function wantedRow(
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
      ? now + resolved.holdMinutes[entry.status] * MINUTE
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

/** A stored booking's update, worked out before anything is written. */
interface Update {
  current: BookingsTable;
  changes: Partial<BookingsTable>;
  segments: BookingServicesTable[] | undefined;
  /** The entry and its edited fields, when the update is logged. */
  log: Record<string, unknown> | undefined;
}

type Step = { path: PathSegment[] } & (
  | { kind: 'unchanged' }
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
    return update === undefined ? { path, kind: 'unchanged' } : { path, kind: 'update', update };
  });
  for (const step of steps) {
    if (step.kind !== 'update') continue;
    const { current, changes } = step.update;
    if (!LIVE_STATUSES.includes(current.status) || !TRIGGER_COLUMNS.some((c) => c in changes)) continue;
    await trx.updateTable('bookings').set({ status: 'expired' }).where('id', '=', current.id).execute();
    changes.status = changes.status ?? current.status;
  }
  const counts: EntityCounts = { created: 0, updated: 0, unchanged: 0 };
  for (const step of steps) {
    if (step.kind === 'unchanged') {
      counts.unchanged += 1;
    } else if (step.kind === 'insert') {
      const { row, segments } = step.wanted;
      await atPath(step.path, async () => {
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

/**
 * Re-applies the columns the edited fields drive, where they differ from the row. A status the row
 * already has keeps its stamps (hold expiry, cancellation), so an unrelated edit restarts no hold.
 * A change of status or of schedule is logged, as the engine logs its own. Undefined: nothing to do.
 */
function plannedUpdate(
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
  const rescheduled = edited.some((field) => SCHEDULE_FIELDS.includes(field));
  const segmentsChanged = rescheduled && !sameRows(stored.segments, wanted.segments, SEGMENT_COLUMNS);
  if (Object.keys(changes).length === 0 && !segmentsChanged) return undefined;
  const logged = 'status' in changes || segmentsChanged || SCHEDULE_COLUMNS.some((c) => c in changes);
  return {
    current,
    changes: changes as Partial<BookingsTable>,
    segments: segmentsChanged ? wanted.segments : undefined,
    log: logged ? { import: entry, changed: edited } : undefined,
  };
}

async function applyUpdate(trx: Db, update: Update, now: number): Promise<void> {
  const { current, changes, segments, log } = update;
  await trx
    .updateTable('bookings')
    .set({ ...changes, updated_at: now })
    .where('id', '=', current.id)
    .execute();
  if (segments) {
    await trx.deleteFrom('booking_services').where('booking_id', '=', current.id).execute();
    await insertAll(trx, 'booking_services', segments);
  }
  if (log) {
    const row = { ...current, ...changes, updated_at: now };
    await logImport(trx, row, current.status, log);
  }
}

function logImport(
  trx: Db,
  row: BookingsTable,
  from: BookingsTable['status'] | null,
  details: Record<string, unknown>,
): Promise<void> {
  return appendEvent(trx, {
    organisationId: row.organisation_id,
    bookingId: row.id,
    from,
    to: row.status,
    actor: ACTOR,
    at: row.updated_at,
    details,
  });
}
