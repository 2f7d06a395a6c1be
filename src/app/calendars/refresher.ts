import { createHash } from 'node:crypto';
import {
  type BusyCalendarRow,
  claimBusyCalendar,
  dueBusyCalendars,
  recordBusyFailure,
  recordBusyNotModified,
  saveBusyCopy,
} from '../../data/calendar-repository.ts';
import type { Db } from '../../data/database.ts';
import { writeStatement, writeTransaction } from '../../data/write-transaction.ts';
import { REPEAT_LIMITS, seriesSpanDays } from '../../domain/booking/series.ts';
import { withoutDirectionControls } from '../../domain/text-rules.ts';
import type { Clock } from '../clock.ts';
import { allEnded, startPeriodicWork } from '../periodic-work.ts';
import { rescanWaitlists } from '../waitlist/rescans.ts';
import type { CalendarFetcher } from './busy-fetch.ts';
import type { BusyRead } from './busy-times.ts';

/**
 * The background refresher of external busy calendars (design.md 9.6): every few seconds it takes
 * the calendars that are due (just imported, or CALENDAR_REFRESH_SECONDS after their last fetch),
 * fetches each (conditional GET), expands it over the window kept and saves the busy times. A
 * calendar that fails keeps its last good copy and its error is recorded for the console. Several
 * processes may refresh one database: each calendar is claimed before it is fetched.
 */

export interface RefresherDeps {
  db: Db;
  clock: Clock;
  fetcher: CalendarFetcher;
  /** CALENDAR_REFRESH_SECONDS in milliseconds. */
  refreshMs: number;
}

/**
 * The window of busy times kept: from a day back (a booking's check near midnight) to as far ahead as
 * the staff member's locations take bookings (busyWindowAheadMs); read a year at a time (the pass).
 */
export const BUSY_WINDOW_BACK_MS = 86_400_000;
export const BUSY_WINDOW_AHEAD_MS = 366 * 86_400_000;

/**
 * How far a recurring series' last visit may lie beyond its first, and so beyond max_advance_days (a
 * series is booked when its first visit is within it: withSeriesHorizon): every 12 weeks, 26 visits,
 * 2,100 days.
 */
const SERIES_REACH_DAYS = seriesSpanDays({
  everyWeeks: REPEAT_LIMITS.everyWeeks.max,
  count: REPEAT_LIMITS.count.max,
});

/**
 * How far ahead a staff member's busy times are kept: past the last local date their locations take
 * bookings on (today + the largest max_advance_days, up to 3660, + the furthest a series' later visits
 * reach beyond it), by two days more (that date's end in the location's zone, and an appointment that
 * runs past its midnight). The expansion's bounds (busy-times.ts) do not grow with it: a file costs at
 * most as much CPU over sixteen years as over one, and is refused past them as it was.
 */
export function busyWindowAheadMs(maxAdvanceDays: number): number {
  return (maxAdvanceDays + SERIES_REACH_DAYS + 2) * 86_400_000;
}

/** A copy older than this is fetched whole again (no validators): its window has slid on. */
const REPARSE_AFTER_MS = 86_400_000;

/** Calendars taken per pass, and fetched at once. */
const BATCH = 32;
const PARALLEL = 4;

/** How often the refresher looks for due calendars (a cheap indexed query). */
export const REFRESHER_TICK_MS = 5_000;

/** One pass: every calendar due now (in batches), until none is left or a stop is asked. */
export async function refreshDueCalendars(deps: RefresherDeps, stopping: () => boolean = () => false) {
  let refreshed = 0;
  for (;;) {
    const due = await dueBusyCalendars(deps.db, deps.clock.nowMs(), deps.refreshMs, BATCH);
    if (due.length === 0 || stopping()) return refreshed;
    const queue = [...due];
    const worker = async () => {
      try {
        for (let calendar = queue.shift(); calendar && !stopping(); calendar = queue.shift()) {
          if (await refreshOne(deps, calendar)) refreshed++;
        }
      } catch (error) {
        // Something the pass cannot go on from (a database gone): the others start nothing more.
        queue.length = 0;
        throw error;
      }
    };
    await allEnded(Array.from({ length: PARALLEL }, worker));
  }
}

/** Fetches one calendar if this process claims it; whether it did. */
async function refreshOne(deps: RefresherDeps, calendar: BusyCalendarRow): Promise<boolean> {
  const { db, clock } = deps;
  const started = clock.nowMs();
  // Every write here is one statement: through writeStatement, as every write of the engine goes
  // (on SQLite, the one writer's transactions).
  const claimed = await writeStatement(db, (trx) =>
    claimBusyCalendar(trx, calendar, calendar.next_fetch_at, started + deps.refreshMs, started),
  );
  if (!claimed) return false;
  const places = await staffPlaces(db, calendar);
  // A copy is read whole again once a day (its window slides on), and once the staff member or one of
  // their locations changed since it was read (an import: the window follows max_advance_days).
  const fresh =
    calendar.parsed_at !== null &&
    started - calendar.parsed_at < REPARSE_AFTER_MS &&
    calendar.parsed_at >= places.changedAt;
  const outcome = await deps.fetcher.fetch(
    calendar.url,
    fresh
      ? { etag: calendar.etag, lastModified: calendar.last_modified }
      : { etag: null, lastModified: null },
  );
  const now = clock.nowMs();
  if (outcome.kind === 'not_modified') {
    await writeStatement(db, (trx) => recordBusyNotModified(trx, calendar, now));
    return true;
  }
  if (outcome.kind === 'failed') {
    await writeStatement(db, (trx) => recordBusyFailure(trx, calendar, keptReason(outcome.reason), now));
    return true;
  }
  // The same text as the copy read within the day (a server that sends no validators answers it
  // whole every time) gives the same blocks: not read again, which for a few MB holds the event loop
  // for a second.
  const hash = createHash('sha256').update(outcome.text).digest('hex');
  if (fresh && calendar.copy_hash === hash) {
    await writeStatement(db, (trx) => recordBusyNotModified(trx, calendar, now));
    return true;
  }
  // ical.js (with its source, 0.5 MB that V8 holds at two bytes a character) is loaded by the first
  // calendar to read, not at start: most servers have none (docs/decisions/memory-under-load.md).
  const { BusyCalendarError, calendarOwner, readBusyCalendar } = await import('./busy-times.ts');
  let read: BusyRead;
  try {
    // The year to come first, as it always was: a file too costly to read further still blocks it.
    read = readBusyCalendar(
      outcome.text,
      { start: now - BUSY_WINDOW_BACK_MS, end: now + busyWindowAheadMs(places.maxAdvanceDays) },
      places.zone,
      BUSY_WINDOW_BACK_MS + BUSY_WINDOW_AHEAD_MS,
      calendarOwner(calendar.url),
    );
  } catch (error) {
    if (!(error instanceof BusyCalendarError)) throw error;
    await writeStatement(db, (trx) => recordBusyFailure(trx, calendar, keptReason(error.message), now));
    return true;
  }
  const note =
    read.shortBy === null
      ? null
      : keptReason(
          `busy times read only until ${new Date(read.readUntil).toISOString().slice(0, 10)}: ${read.shortBy}`,
        );
  await writeTransaction(db, async (trx) => {
    const copy = { etag: outcome.etag, lastModified: outcome.lastModified, busy: read.busy, note, hash };
    const { changed } = await saveBusyCopy(trx, calendar, copy, now);
    // A busy time gone (a meeting called off) may free a time someone on the waitlist wants.
    if (changed) await rescanWaitlists(trx, calendar.organisation_id, now);
  });
  return true;
}

/**
 * A failure's reason as it is kept and shown (console, `booking calendars list`). ical.js quotes the
 * line it could not read, which is text from someone else's server: a NUL in it is refused by
 * PostgreSQL (the pass would fail and the reason be lost), and terminal escapes or direction controls
 * would act on the terminal or the page that shows it.
 */
function keptReason(reason: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced.
  return withoutDirectionControls(reason).replace(/[\u0000-\u001f\u007f-\u009f]/g, '\ufffd');
}

/**
 * Where the staff member's calendar is read for: the zone a floating time is read in, that of a
 * location where they work (by name, for a stable choice), else the organisation's first location's;
 * the furthest ahead those locations take bookings (the largest max_advance_days, 0 for none); and
 * when the staff member (their locations among what they own) or one of those locations last changed.
 */
async function staffPlaces(
  db: Db,
  calendar: BusyCalendarRow,
): Promise<{ zone: string; maxAdvanceDays: number; changedAt: number }> {
  const worked = await db
    .selectFrom('staff_locations')
    .innerJoin('locations', (j) =>
      j
        .onRef('locations.id', '=', 'staff_locations.location_id')
        .onRef('locations.organisation_id', '=', 'staff_locations.organisation_id'),
    )
    .select(['locations.timezone', 'locations.max_advance_days', 'locations.updated_at'])
    .where('staff_locations.organisation_id', '=', calendar.organisation_id)
    .where('staff_locations.staff_id', '=', calendar.staff_id)
    .orderBy('locations.name')
    .execute();
  const staff = await db
    .selectFrom('staff')
    .select('updated_at')
    .where('organisation_id', '=', calendar.organisation_id)
    .where('id', '=', calendar.staff_id)
    .executeTakeFirst();
  const maxAdvanceDays = Math.max(0, ...worked.map((place) => Number(place.max_advance_days)));
  const changedAt = Math.max(
    Number(staff?.updated_at ?? 0),
    ...worked.map((place) => Number(place.updated_at)),
  );
  if (worked[0]) return { zone: worked[0].timezone, maxAdvanceDays, changedAt };
  const any = await db
    .selectFrom('locations')
    .select('timezone')
    .where('organisation_id', '=', calendar.organisation_id)
    .orderBy('name')
    .executeTakeFirst();
  return { zone: any?.timezone ?? 'UTC', maxAdvanceDays, changedAt };
}

/** Starts the refresher (booking serve); the returned stop waits for a pass in progress. */
export function startCalendarRefresher(
  deps: RefresherDeps,
  onError: (error: unknown) => void,
  tickMs = Math.min(REFRESHER_TICK_MS, deps.refreshMs),
): () => Promise<void> {
  return startPeriodicWork((stopping) => refreshDueCalendars(deps, stopping), onError, tickMs);
}
