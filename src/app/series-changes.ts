import { findBookingsOfSeries } from '../data/booking-repository.ts';
import type { Db } from '../data/database.ts';
import { findLocationById } from '../data/location-repository.ts';
import { bookingTurn, takeTurn } from '../data/write-locks.ts';
import { writeTransaction } from '../data/write-transaction.ts';
import { type Booking, CANCEL_REASON_MAX_LENGTH } from '../domain/booking/booking.ts';
import { heldTermsOf } from '../domain/booking/holds.ts';
import { followingMove, wallTimeOf } from '../domain/booking/series.ts';
import { effectiveStatus, LIVE_STATUSES } from '../domain/booking/state-machine.ts';
import { isAppError, type Refusal, refusalOf } from '../domain/errors.ts';
import { localDateAt } from '../domain/time-format.ts';
import { requireWritableStart } from './availability-service.ts';
import {
  type CancellationResult,
  type Changer,
  cancelInTransaction,
  cancelOrPreview,
  cancelRefunded,
  pastCancellation,
  type RescheduleResult,
  rescheduleHorizon,
  rescheduleInTransaction,
  rescheduleOrPreview,
  type Telling,
  type TimeChange,
} from './booking-changes.ts';
import {
  clashOf,
  missingWallTime,
  refusesAnyTime,
  type SeriesClash,
  seriesClashError,
} from './booking-series.ts';
import { getBooking, SlotTakenMeanwhile } from './booking-service.ts';
import { checkFreeText } from './free-text.ts';
import { type DepositRefunds, withRefundsFirst } from './payment-calls.ts';
import { otherStaffOf } from './series-note.ts';

/**
 * "This and the following" (design.md 9.5): a change to one occurrence of a series, and with scope
 * `following` to every later live occurrence too, in one transaction: all of them or none. Each
 * occurrence is changed as a single booking would be, so fees, deposits and the policy window apply to
 * each on its own. Scope `one`, or a booking outside any series, is the single change.
 */
export type ChangeScope = 'one' | 'following';

/** The later live occurrences of the booking's series that have not started, in time order. */
function laterOccurrences(series: readonly Booking[], booking: Booking, now: number): Booking[] {
  return series.filter(
    (b) =>
      b.id !== booking.id &&
      b.startsAt > booking.startsAt &&
      b.startsAt > now &&
      LIVE_STATUSES.includes(effectiveStatus(b, now)),
  );
}

/**
 * The visits a change of `booking` with scope `following` would take along: its series' later live
 * visits that have not started, in time order (none for a booking of no series). For the console's
 * forms, which offer the choice before it is made.
 */
export async function followingVisits(db: Db, booking: Booking, now: number): Promise<Booking[]> {
  if (booking.seriesId === null) return [];
  const series = await findBookingsOfSeries(db, booking.organisationId, booking.seriesId);
  return laterOccurrences(series, booking, now);
}

/** A work that must leave nothing behind: its transaction is rolled back once it has answered. */
class DryRunDone<T> extends Error {
  readonly value: T;
  constructor(value: T) {
    super('dry run');
    this.value = value;
  }
}

/**
 * Runs `work` in a write transaction and rolls it back, answering what it answered: the exact preview
 * of a change whose steps depend on each other (moving several occurrences, each freeing time the
 * next may take).
 */
async function rolledBack<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  try {
    await writeTransaction(db, async (trx) => {
      throw new DryRunDone(await work(trx));
    });
  } catch (error) {
    if (error instanceof DryRunDone) return error.value as T;
    throw error;
  }
  throw new Error('unreachable: a dry run always rolls back');
}

export interface SeriesRescheduleResult extends RescheduleResult {
  /** The later occurrences moved with it (scope following), in time order. */
  following: RescheduleResult[];
}

/**
 * Moves an occurrence, and with scope `following` every later live occurrence by the same number of
 * days to the same new wall time (its own date's offset), keeping the staff member each has unless one
 * is named. Any that cannot move: 409 conflict (series_clash) listing each with alternatives, nothing
 * moved.
 */
export async function rescheduleWithScope(
  db: Db,
  changer: Changer,
  reference: string,
  change: TimeChange,
  scope: ChangeScope,
  now: number,
  dryRun: boolean,
): Promise<SeriesRescheduleResult> {
  if (scope === 'one') {
    return { ...(await rescheduleOrPreview(db, changer, reference, change, now, dryRun)), following: [] };
  }
  const work = (trx: Db) => rescheduleFollowing(trx, changer, reference, change, now);
  return dryRun ? rolledBack(db, work) : writeTransaction(db, work);
}

async function rescheduleFollowing(
  trx: Db,
  changer: Changer,
  reference: string,
  change: TimeChange,
  now: number,
): Promise<SeriesRescheduleResult> {
  const { booking, series } = await seriesUnderTurns(trx, changer.organisationId, reference);
  requireWritableStart(change.startsAt, booking.timezone);
  const later = laterOccurrences(series, booking, now);
  const move = { from: booking.startsAt, to: change.startsAt };
  const step = (occurrence: Booking) => ({
    occurrence,
    // Its place in the series, as createSeries numbers a clash.
    position: series.indexOf(occurrence) + 1,
    target:
      occurrence === booking
        ? { date: localDateAt(change.startsAt, booking.timezone), startsAt: change.startsAt }
        : followingMove(occurrence.startsAt, move, booking.timezone),
  });
  // Moving later, the last moves first (each then moves into time the one after it has left);
  // moving earlier, the one asked about first, then on in time order: a series never stands in its
  // own way, whatever its interval and the move.
  const steps = [booking, ...later].map(step);
  const order = change.startsAt > booking.startsAt ? [...steps].reverse() : steps;
  // One message tells the move: the first visit (in time) that moves, naming the others that move
  // with it. A visit asked to stay where it is (lining the rest up with it) moves nothing and tells nothing.
  const moving = steps.filter(
    ({ occurrence, target }) =>
      target.startsAt !== occurrence.startsAt ||
      (change.staffId !== undefined && change.staffId !== occurrence.staffId),
  );
  const teller = moving[0]?.occurrence;
  // Each visit keeps its own stylist unless one is named: a series booked with anyone may have later
  // visits with another than the one telling the move, whose message names its own alone.
  const staffAfter = (occurrence: Booking) => change.staffId ?? occurrence.staffId;
  const otherStaff =
    teller &&
    (await otherStaffOf(
      trx,
      changer.organisationId,
      staffAfter(teller),
      moving.slice(1).map(({ occurrence }) => ({ staffId: staffAfter(occurrence) })),
    ));
  const note = { following: moving.length - 1, movedTo: change.startsAt, otherStaff };
  const clashes: SeriesClash[] = [];
  const moved = new Map<string, RescheduleResult>();
  let refusalOfAsked: { error: unknown; reason: string } | undefined;
  const location = await findLocationById(trx, changer.organisationId, booking.locationId);
  if (!location) throw new Error(`Booking ${booking.reference} refers to a missing location`);
  // A clash's free times are those a move of that visit could take: as far ahead as the series
  // reaches (a later visit may lie beyond max_advance_days), its own time not busy.
  const reach = await rescheduleHorizon(trx, booking, location);
  for (const { occurrence, position, target } of order) {
    const asked = {
      location: reach,
      serviceIds: occurrence.serviceIds,
      staffId: change.staffId ?? occurrence.staffId,
      excludeBookingId: occurrence.id,
      movesHold: heldTermsOf(occurrence, now),
    };
    const at = { position, ...target };
    if (target.startsAt === null) {
      // The new wall time of day, which the clocks skip on this visit's date: the times nearest it.
      const { minute } = wallTimeOf(change.startsAt, booking.timezone);
      clashes.push(await clashOf(trx, changer.organisationId, asked, at, missingWallTime(at), now, minute));
      continue;
    }
    try {
      const telling = occurrence === teller ? { series: note } : { quiet: true };
      const result = await rescheduleInTransaction(
        trx,
        changer,
        occurrence.reference,
        { startsAt: target.startsAt, staffId: change.staffId },
        now,
        telling,
      );
      moved.set(occurrence.id, result);
    } catch (error) {
      const refusal = refusalOf(error) ?? (occurrence === booking ? undefined : catalogueRefusal(error));
      // The database's own overlap guard ends the transaction on PostgreSQL: nothing more can be asked.
      if (!refusal || error instanceof SlotTakenMeanwhile) throw error;
      if (occurrence === booking) refusalOfAsked = { error, reason: refusal.reason };
      clashes.push(await clashOf(trx, changer.organisationId, asked, at, refusal, now));
    }
  }
  // The occurrence asked about alone refused, or refused whatever the time (too late to change, not
  // live): its own 409 (late_change, not_on_grid...), as a change of it alone answers. Listed as a
  // clash it read "not free", with free times that day the same refusal awaits.
  if (refusalOfAsked && (clashes.length === 1 || refusesAnyTime(refusalOfAsked.reason))) {
    throw refusalOfAsked.error;
  }
  if (clashes.length > 0) {
    throw seriesClashError(
      clashes.sort((a, b) => a.position - b.position),
      booking.timezone,
      'moved',
    );
  }
  return { ...moved.get(booking.id)!, following: later.map((o) => moved.get(o.id)!) };
}

/**
 * A later visit the catalogue no longer allows as it is (its stylist gone or no longer doing its
 * services, a service no longer online: a 409 without a reason, param staff_id or service_ids) is a
 * clash of that visit, named as MCP names such a refusal, not a refusal of the visit asked about.
 */
function catalogueRefusal(error: unknown): Refusal | undefined {
  if (!isAppError(error) || error.code !== 'conflict' || error.reason !== undefined) return undefined;
  if (error.param === 'staff_id')
    return { reason: 'staff_not_working', message: error.message, param: 'staff_id' };
  if (error.param === 'service_ids') {
    return { reason: 'not_changeable', message: error.message, param: 'service_ids' };
  }
  return undefined;
}

/**
 * The booking and every occurrence of its series (time order), read once the turn of each of them is
 * taken, in one order for everyone (their references sorted), before any location's: a change of
 * "this and the following" and a change of one occurrence then never wait on each other crosswise.
 */
async function seriesUnderTurns(
  trx: Db,
  organisationId: string,
  reference: string,
): Promise<{ booking: Booking; series: Booking[] }> {
  const seen = await getBooking(trx, organisationId, reference);
  const references =
    seen.seriesId === null
      ? [seen.reference]
      : (await findBookingsOfSeries(trx, organisationId, seen.seriesId)).map((b) => b.reference);
  for (const turn of [...references].sort()) await takeTurn(trx, bookingTurn(organisationId, turn));
  const booking = await getBooking(trx, organisationId, reference);
  const series =
    booking.seriesId === null ? [booking] : await findBookingsOfSeries(trx, organisationId, booking.seriesId);
  return { booking: series.find((b) => b.id === booking.id) ?? booking, series };
}

/**
 * A visit of a series cancelled already, on its own meanwhile or by the same ask before (one whose
 * refund was in doubt, asked again as its 503 says): "this and the following" asked of it cancels the
 * later visits still live, and answers it as it was cancelled (with none left, the ask is answered as
 * done). A visit no longer live otherwise (expired, completed...), and a booking of no series (nothing
 * follows it), is refused as on its own: 409, as any change of a booking not live (design.md 6).
 */
function isCancelledVisit(booking: Booking, now: number): boolean {
  return booking.seriesId !== null && effectiveStatus(booking, now) === 'cancelled';
}

export interface SeriesCancellationResult extends CancellationResult {
  /** The later occurrences cancelled with it (scope following), in time order. */
  following: CancellationResult[];
}

/**
 * Cancels an occurrence, and with scope `following` every later live occurrence, each under its own
 * policy window (a paid deposit refunded or kept, a fee recorded, per occurrence). A refusal of any
 * (late_change, not_changeable) cancels none; the occurrence asked about cancelled already is no
 * refusal (isCancelledVisit): the later ones are cancelled, and it is answered as it was. Deposits paid through the provider are refunded between
 * transactions (withRefundsFirst): all of them, then the cancellations. `refunds` carries answers the
 * provider gave before (the sweeper's, completing a cancellation asked earlier).
 */
export async function cancelWithScope(
  db: Db,
  changer: Changer,
  reference: string,
  reason: string | undefined,
  scope: ChangeScope,
  now: number,
  dryRun: boolean,
  refunds?: DepositRefunds,
): Promise<SeriesCancellationResult> {
  if (scope === 'one') {
    const result = await cancelOrPreview(db, changer, reference, reason, now, dryRun, refunds);
    return { ...result, following: [] };
  }
  checkFreeText(reason, CANCEL_REASON_MAX_LENGTH, 'reason');
  if (dryRun) {
    const booking = await getBooking(db, changer.organisationId, reference);
    const series =
      booking.seriesId === null
        ? [booking]
        : await findBookingsOfSeries(db, changer.organisationId, booking.seriesId);
    return cancelFromHere(db, booking, reference, laterOccurrences(series, booking, now), now, (ref) =>
      cancelOrPreview(db, changer, ref, reason, now, true),
    );
  }
  const asked = {
    organisationId: changer.organisationId,
    reference,
    scope,
    reason: reason ?? null,
    actor: changer.actor,
    requestedAt: now,
  };
  const work = async (trx: Db, made: DepositRefunds) => {
    const { booking, series } = await seriesUnderTurns(trx, changer.organisationId, reference);
    return cancelFromHere(
      trx,
      booking,
      reference,
      laterOccurrences(series, booking, now),
      now,
      (ref, telling) => cancelInTransaction(trx, changer, ref, reason, now, made, telling),
    );
  };
  return withRefundsFirst(
    db,
    changer.payments,
    asked,
    {
      turns: (trx) => seriesUnderTurns(trx, changer.organisationId, reference),
      work,
      cancelRefunded: cancelRefunded(changer.payments),
    },
    refunds,
  );
}

/**
 * "This and the following": the visit asked about (`reference`, as asked), then each later one, each
 * by `cancelOne` (a preview or a cancellation); a series visit cancelled already is answered as it was
 * cancelled, and the later ones still go. The first visit this cancels tells the customer, naming how
 * many after it went too; the others are quiet (Telling).
 */
async function cancelFromHere(
  db: Db,
  booking: Booking,
  reference: string,
  later: readonly Booking[],
  now: number,
  cancelOne: (reference: string, telling: Telling) => Promise<CancellationResult>,
): Promise<SeriesCancellationResult> {
  const toCancel = isCancelledVisit(booking, now)
    ? later.map((b) => b.reference)
    : [reference, ...later.map((b) => b.reference)];
  const results: CancellationResult[] = [];
  for (const [i, ref] of toCancel.entries()) {
    const telling = i === 0 ? { series: { following: toCancel.length - 1 } } : { quiet: true };
    results.push(await cancelOne(ref, telling));
  }
  if (toCancel[0] === reference) return { ...results[0]!, following: results.slice(1) };
  return { ...(await pastCancellation(db, booking)), following: results };
}
