import { createHash } from 'node:crypto';
import type { Db } from '../../../data/database.ts';
import type { BookingsTable } from '../../../data/tables.ts';
import { REFERENCE_ALPHABET } from '../../../domain/booking/reference.ts';
import { catalogueId } from '../format/ids.ts';
import { type CatalogueProblem, formatPath, type PathSegment, type Report } from '../format/problems.ts';
import type { Catalogue, CatalogueBooking } from '../format/schema.ts';
import { ACTOR, type ImportedEntry, type PlannedBooking, type StoredBooking } from './booking-entries.ts';
import { checkStoredOverlaps } from './booking-overlaps.ts';
import { checkNewIds, type IdentityPlan } from './identities.ts';
import { groupBy } from './write-support.ts';

const CHUNK = 500;

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

/** What derivedIds made a booking's id of, in the operator's words; undefined for an explicit id. */
function derivedFrom(booking: CatalogueBooking): string | undefined {
  if (booking.id !== undefined) return undefined;
  return booking.reference === undefined ? 'staff and starts_at' : `reference "${booking.reference}"`;
}

/** A reference derived from the booking id (attempt 0, then 1, ... on a clash): stable across imports. */
export function derivedReference(prefix: string, bookingId: string, attempt: number): string {
  const digest = createHash('sha256').update(`${bookingId}#${attempt}`).digest();
  let code = '';
  for (let i = 0; i < 6; i++) code += REFERENCE_ALPHABET[digest[i]! % REFERENCE_ALPHABET.length];
  return `${prefix}-${code}`;
}

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
  checkNewIds(
    bookings.flatMap((b, i) =>
      matches[i] === undefined ? [{ id: ids[i]!, path: ['bookings', i], derivedFrom: derivedFrom(b) }] : [],
    ),
    report,
  );
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
