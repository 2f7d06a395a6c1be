import { type Selectable, sql } from 'kysely';
import { normalise } from '../domain/availability/intervals.ts';
import type { Interval } from '../domain/availability/types.ts';
import type { BookingStatus } from '../domain/booking/state-machine.ts';
import type { FeedBooking } from '../domain/calendar-feed.ts';
import type { Db } from './database.ts';
import { literalLimit } from './literal-limit.ts';
import { preparedQuery } from './prepared-query.ts';
import type { StaffBusyCalendarsTable, StaffCalendarFeedsTable } from './tables.ts';

/**
 * Storage of calendar feeds (design.md 9.6): the staff feeds' token hashes, the external busy
 * calendars with their refresh state, and the busy intervals of each calendar's last good copy.
 */

export type FeedRow = StaffCalendarFeedsTable;
export type BusyCalendarRow = Selectable<StaffBusyCalendarsTable>;
/** What names one busy calendar: its organisation and id. */
export type CalendarKey = Pick<BusyCalendarRow, 'organisation_id' | 'id'>;

export async function insertFeed(db: Db, row: FeedRow): Promise<void> {
  await db.insertInto('staff_calendar_feeds').values(row).execute();
}

/** Inserts the feed unless one with its id is there already; whether it was inserted. */
export async function insertFeedOnce(db: Db, row: FeedRow): Promise<boolean> {
  const result = await db
    .insertInto('staff_calendar_feeds')
    .values(row)
    .onConflict((oc) => oc.columns(['organisation_id', 'id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/**
 * The feed whose token has this hash, with what its answer needs of the staff member; none while the
 * staff member is inactive (the feed is kept, and serves again once they are active).
 */
export async function findFeedByHash(db: Db, tokenHash: string) {
  return db
    .selectFrom('staff_calendar_feeds')
    .innerJoin('staff', (j) =>
      j
        .onRef('staff.id', '=', 'staff_calendar_feeds.staff_id')
        .onRef('staff.organisation_id', '=', 'staff_calendar_feeds.organisation_id'),
    )
    .innerJoin('organisations', 'organisations.id', 'staff_calendar_feeds.organisation_id')
    .select([
      'staff_calendar_feeds.id',
      'staff_calendar_feeds.organisation_id',
      'staff_calendar_feeds.staff_id',
      'staff_calendar_feeds.revoked_at',
      'staff_calendar_feeds.last_used_at',
      'staff.name as staff_name',
      'organisations.name as organisation_name',
      'organisations.bookings_version',
      'organisations.catalogue_version',
    ])
    .where('staff_calendar_feeds.token_hash', '=', tokenHash)
    .where('staff.active', '=', 1)
    .executeTakeFirst();
}

/** Every feed of the organisation (revoked ones too), newest first, with the staff member's name. */
export async function listFeeds(db: Db, organisationId: string, staffId?: string) {
  return db
    .selectFrom('staff_calendar_feeds')
    .innerJoin('staff', (j) =>
      j
        .onRef('staff.id', '=', 'staff_calendar_feeds.staff_id')
        .onRef('staff.organisation_id', '=', 'staff_calendar_feeds.organisation_id'),
    )
    .select([
      'staff_calendar_feeds.id',
      'staff_calendar_feeds.staff_id',
      'staff_calendar_feeds.created_at',
      'staff_calendar_feeds.revoked_at',
      'staff_calendar_feeds.last_used_at',
      'staff.name as staff_name',
    ])
    .where('staff_calendar_feeds.organisation_id', '=', organisationId)
    .$if(staffId !== undefined, (q) => q.where('staff_calendar_feeds.staff_id', '=', staffId!))
    .orderBy('staff_calendar_feeds.created_at', 'desc')
    .orderBy('staff_calendar_feeds.id', 'desc')
    .execute();
}

/** Revokes a live feed; false when the organisation has no live feed with this id. */
export async function revokeFeed(db: Db, organisationId: string, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('staff_calendar_feeds')
    .set({ revoked_at: now })
    .where('organisation_id', '=', organisationId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Notes a subscriber's fetch, at most once a minute per feed (a write on every poll would be waste). */
export async function touchFeed(db: Db, organisationId: string, id: string, now: number): Promise<void> {
  await db
    .updateTable('staff_calendar_feeds')
    .set({ last_used_at: now })
    .where('organisation_id', '=', organisationId)
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', now - 60_000)]))
    .execute();
}

/**
 * The staff member's bookings starting in [from, to) whose status is among `statuses`, a pending hold
 * whose hold has lapsed left out (it is expired, whether or not the sweeper has written so yet),
 * with their services' names in booking order, the client's first name and the location's name.
 */
export async function feedBookings(
  db: Db,
  organisationId: string,
  staffId: string,
  window: Interval,
  statuses: readonly BookingStatus[],
  now: number,
): Promise<FeedBooking[]> {
  const rows = await db
    .selectFrom('bookings')
    .innerJoin('clients', (j) =>
      j
        .onRef('clients.id', '=', 'bookings.client_id')
        .onRef('clients.organisation_id', '=', 'bookings.organisation_id'),
    )
    .innerJoin('locations', (j) =>
      j
        .onRef('locations.id', '=', 'bookings.location_id')
        .onRef('locations.organisation_id', '=', 'bookings.organisation_id'),
    )
    .select([
      'bookings.id',
      'bookings.reference',
      'bookings.status',
      'bookings.starts_at',
      'bookings.ends_at',
      'bookings.created_at',
      'bookings.updated_at',
      'clients.first_name',
      'locations.name as location_name',
      // The booking's last logged change: its revision (appendEvent numbers them 1, 2, 3...).
      (eb) =>
        eb
          .selectFrom('booking_events')
          .select((e) => e.fn.max('booking_events.seq').as('seq'))
          .whereRef('booking_events.organisation_id', '=', 'bookings.organisation_id')
          .whereRef('booking_events.booking_id', '=', 'bookings.id')
          .as('last_event_seq'),
    ])
    .where('bookings.organisation_id', '=', organisationId)
    .where('bookings.staff_id', '=', staffId)
    .where('bookings.status', 'in', statuses)
    .where('bookings.starts_at', '>=', window.start)
    .where('bookings.starts_at', '<', window.end)
    .where((eb) =>
      eb.or([
        eb('bookings.status', 'not in', ['pending_payment', 'pending_confirmation']),
        eb('bookings.hold_expires_at', 'is', null),
        eb('bookings.hold_expires_at', '>', now),
      ]),
    )
    .orderBy('bookings.starts_at')
    .orderBy('bookings.id')
    .execute();
  const names = new Map<string, string[]>(rows.map((r) => [r.id, []]));
  const ids = rows.map((r) => r.id);
  // In slices: a staff member's year of bookings may be more than one statement binds comfortably.
  for (let i = 0; i < ids.length; i += 500) {
    const services = await db
      .selectFrom('booking_services')
      .innerJoin('services', (j) =>
        j
          .onRef('services.id', '=', 'booking_services.service_id')
          .onRef('services.organisation_id', '=', 'booking_services.organisation_id'),
      )
      .select(['booking_services.booking_id', 'services.name'])
      .where('booking_services.organisation_id', '=', organisationId)
      .where('booking_services.booking_id', 'in', ids.slice(i, i + 500))
      .orderBy('booking_services.booking_id')
      .orderBy('booking_services.position')
      .execute();
    for (const s of services) names.get(s.booking_id)?.push(s.name);
  }
  return rows.map((r) => ({
    id: r.id,
    reference: r.reference,
    status: r.status,
    startsAt: r.starts_at,
    endsAt: r.ends_at,
    serviceNames: names.get(r.id) ?? [],
    clientFirstName: r.first_name,
    locationName: r.location_name,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    // The first logged event is the booking's creation; each after it, a change.
    revisions: Math.max(0, Number(r.last_event_seq ?? 1) - 1),
  }));
}

/** The newest change of the staff member's bookings in the window, and how many there are (an ETag). */
export async function feedStamp(
  db: Db,
  organisationId: string,
  staffId: string,
): Promise<{ updated: number; count: number }> {
  const row = await db
    .selectFrom('bookings')
    .select((eb) => [eb.fn.max('updated_at').as('updated'), eb.fn.countAll().as('count')])
    .where('organisation_id', '=', organisationId)
    .where('staff_id', '=', staffId)
    .executeTakeFirst();
  return { updated: Number(row?.updated ?? 0), count: Number(row?.count ?? 0) };
}

// --- External busy calendars ---------------------------------------------------------------------

/** The busy calendars of the organisation with their staff member's name, by staff name then URL. */
export async function listBusyCalendars(db: Db, organisationId: string) {
  return db
    .selectFrom('staff_busy_calendars')
    .innerJoin('staff', (j) =>
      j
        .onRef('staff.id', '=', 'staff_busy_calendars.staff_id')
        .onRef('staff.organisation_id', '=', 'staff_busy_calendars.organisation_id'),
    )
    .selectAll('staff_busy_calendars')
    .select('staff.name as staff_name')
    .where('staff_busy_calendars.organisation_id', '=', organisationId)
    .orderBy('staff.name')
    .orderBy('staff_busy_calendars.url')
    .execute();
}

/**
 * Up to `limit` calendars due for a fetch at `now`, the longest overdue first. Those of an inactive
 * staff member are left (due, so fetched at once when they are active again). A calendar last tried
 * `refreshMs` ago or more is due whatever its next fetch says: that was set with the refresh period of
 * the time, and a period shortened since (CALENDAR_REFRESH_SECONDS from a day to 5 minutes) takes
 * effect at the next pass, not once each calendar has waited out the old one.
 */
export async function dueBusyCalendars(
  db: Db,
  now: number,
  refreshMs: number,
  limit: number,
): Promise<BusyCalendarRow[]> {
  return db
    .selectFrom('staff_busy_calendars')
    .innerJoin('staff', (j) =>
      j
        .onRef('staff.id', '=', 'staff_busy_calendars.staff_id')
        .onRef('staff.organisation_id', '=', 'staff_busy_calendars.organisation_id'),
    )
    .selectAll('staff_busy_calendars')
    .where((eb) =>
      eb.or([
        eb('staff_busy_calendars.next_fetch_at', '<=', now),
        eb('staff_busy_calendars.last_attempt_at', '<=', now - refreshMs),
      ]),
    )
    .where('staff.active', '=', 1)
    .orderBy('staff_busy_calendars.next_fetch_at')
    .orderBy('staff_busy_calendars.id')
    .limit(literalLimit(limit))
    .execute();
}

/**
 * Claims a due calendar for one fetch: moves its next fetch on, only if nobody else did first (another
 * process refreshing the same database). True when this caller is the one to fetch it.
 */
export async function claimBusyCalendar(
  db: Db,
  calendar: CalendarKey,
  dueAt: number,
  nextFetchAt: number,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('staff_busy_calendars')
    .set({ next_fetch_at: nextFetchAt, last_attempt_at: now })
    .where('organisation_id', '=', calendar.organisation_id)
    .where('id', '=', calendar.id)
    .where('next_fetch_at', '=', dueAt)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * The answer was 304 Not Modified: the last good copy stands, and the calendar is good again; what
 * its copy's note says (busy times read short of the window, kept in copy_note: a failed fetch since
 * may have overwritten last_error) still holds, and is shown again, dated as the copy.
 */
export async function recordBusyNotModified(db: Db, calendar: CalendarKey, now: number): Promise<void> {
  await db
    .updateTable('staff_busy_calendars')
    .set({
      last_success_at: now,
      last_error: sql<string | null>`copy_note`,
      last_error_at: sql<number | null>`case when copy_note is null then null else parsed_at end`,
    })
    .where('organisation_id', '=', calendar.organisation_id)
    .where('id', '=', calendar.id)
    .execute();
}

/** The fetch failed: the last good copy (its blocks) stands; the console says why. */
export async function recordBusyFailure(
  db: Db,
  calendar: CalendarKey,
  reason: string,
  now: number,
): Promise<void> {
  await db
    .updateTable('staff_busy_calendars')
    .set({ last_error: reason, last_error_at: now })
    .where('organisation_id', '=', calendar.organisation_id)
    .where('id', '=', calendar.id)
    .execute();
}

/**
 * A new good copy: its validators saved and, when its busy intervals differ from those kept, the
 * intervals replaced and the organisation's catalogue_version bumped in the same transaction (the
 * availability answers and catalogue reads computed without them are then never reused). Intervals
 * that did not change write nothing the caches see. Runs inside the caller's write transaction.
 */
export async function saveBusyCopy(
  trx: Db,
  calendar: Pick<BusyCalendarRow, 'id' | 'organisation_id' | 'staff_id'>,
  copy: {
    etag: string | null;
    lastModified: string | null;
    busy: readonly Interval[];
    /** Why the busy times stop short of the window (shown as the calendar's last error), or null. */
    note?: string | null;
    /** The SHA-256 of the copy's text. */
    hash?: string | null;
  },
  now: number,
): Promise<{ changed: boolean }> {
  const wanted = busyPieces(copy.busy);
  const note = copy.note ?? null;
  // The calendar's row first: an import may have taken the calendar out of the file while it was
  // fetched (its busy times must not come back, nor be refused by their key to it), and on
  // PostgreSQL this row's lock makes such an import wait (it, too, takes the row before the blocks).
  const kept = await trx
    .updateTable('staff_busy_calendars')
    .set({
      etag: copy.etag,
      last_modified: copy.lastModified,
      last_success_at: now,
      last_error: note,
      last_error_at: note === null ? null : now,
      copy_note: note,
      busy_count: wanted.length,
      parsed_at: now,
      copy_hash: copy.hash ?? null,
    })
    .where('organisation_id', '=', calendar.organisation_id)
    .where('id', '=', calendar.id)
    .executeTakeFirst();
  if (kept.numUpdatedRows === 0n) return { changed: false };
  const stored = await trx
    .selectFrom('staff_busy_blocks')
    .select(['starts_at', 'ends_at'])
    .where('organisation_id', '=', calendar.organisation_id)
    .where('calendar_id', '=', calendar.id)
    .orderBy('starts_at')
    .orderBy('ends_at')
    .execute();
  const changed =
    stored.length !== wanted.length ||
    stored.some((s, i) => Number(s.starts_at) !== wanted[i]!.start || Number(s.ends_at) !== wanted[i]!.end);
  if (changed) {
    await trx
      .deleteFrom('staff_busy_blocks')
      .where('organisation_id', '=', calendar.organisation_id)
      .where('calendar_id', '=', calendar.id)
      .execute();
    const rows = wanted.map((b) => ({
      calendar_id: calendar.id,
      organisation_id: calendar.organisation_id,
      staff_id: calendar.staff_id,
      starts_at: b.start,
      ends_at: b.end,
    }));
    for (let i = 0; i < rows.length; i += 200) {
      await trx
        .insertInto('staff_busy_blocks')
        .values(rows.slice(i, i + 200))
        .execute();
    }
    await trx
      .updateTable('organisations')
      .set({ catalogue_version: sql`catalogue_version + 1` })
      .where('id', '=', calendar.organisation_id)
      .execute();
  }
  return { changed };
}

/**
 * The longest interval kept: longer ones (a fortnight away) are kept as pieces of a day or less, so
 * that the question "which overlap this window" is one bounded range of the starts_at index.
 */
export const MAX_BUSY_PIECE_MS = 86_400_000;

/**
 * Busy intervals as they are kept: overlapping and touching ones merged (availability reads fewer
 * rows), then in pieces of at most MAX_BUSY_PIECE_MS, in order.
 */
export function busyPieces(busy: readonly Interval[]): Interval[] {
  const pieces: Interval[] = [];
  for (const b of normalise(busy)) {
    for (let start = b.start; start < b.end; start += MAX_BUSY_PIECE_MS) {
      pieces.push({ start, end: Math.min(b.end, start + MAX_BUSY_PIECE_MS) });
    }
  }
  return pieces.sort((a, b) => a.start - b.start || a.end - b.end);
}

/** The busy intervals of the staff members' external calendars that overlap the window. */
export async function busyBlocksOf(
  db: Db,
  organisationId: string,
  staffIds: readonly string[],
  window: Interval,
): Promise<{ staff_id: string; starts_at: number; ends_at: number }[]> {
  if (staffIds.length === 0) return [];
  return busyBlocks.rows(db, {
    organisationId,
    staffIds,
    windowStart: window.start,
    windowEnd: window.end,
    startsAfter: window.start - MAX_BUSY_PIECE_MS,
  });
}

/** busyBlocksOf's query, read with every availability a location's calendars are not cached for. */
const busyBlocks = preparedQuery<
  {
    organisationId: string;
    staffIds: readonly string[];
    windowStart: number;
    windowEnd: number;
    /** Implied by the window (no piece is longer), and what bounds the index range scan. */
    startsAfter: number;
  },
  { staff_id: string; starts_at: number; ends_at: number }
>((db, param, list) =>
  db
    .selectFrom('staff_busy_blocks')
    .select(['staff_id', 'starts_at', 'ends_at'])
    .where('organisation_id', '=', param('organisationId'))
    .where('staff_id', 'in', list('staffIds'))
    .where('starts_at', '<', param('windowEnd'))
    .where('starts_at', '>', param('startsAfter'))
    .where('ends_at', '>', param('windowStart')),
);
