import type { Updateable } from 'kysely';
import { updateBooking, updateBookingIn } from '../data/booking-repository.ts';
import type { Db } from '../data/database.ts';
import type { BookingsTable } from '../data/tables.ts';
import { effectiveStatus, transition } from '../domain/booking/state-machine.ts';
import type { SeriesNote } from '../domain/outbox.ts';
import { logBookingEvent } from './booking-event-log.ts';
import { announceChange } from './outbox-service.ts';
import { bookEntriesFilledBy, bookEntryOfOffer } from './waitlist/offer-outcomes.ts';

/**
 * THE place that decides "a step of Booking Protection's hold is done -> confirm when none is left",
 * whoever reports the step: the card saved (card-setup-service.ts, from Stripe's webhook or the local
 * test page), the deposit paid (checkout-service.ts confirmDeposit, from Stripe's webhook or the
 * local checkout) or a public booking's contact proven (contact-proof.ts).
 */

export type Requirement = 'deposit' | 'protection_setup' | 'contact_verification' | 'waitlist_claim';

/**
 * What settling did: `confirmed` (it was the last step), `outstanding` (other steps remain), or
 * `not_held` (the booking was not waiting for this step: confirmed already, or its hold lapsed; only
 * `changes` were written, so a card saved late is kept but the booking is not revived).
 */
export type Settled = 'confirmed' | 'outstanding' | 'not_held';

/**
 * Inside the caller's transaction: writes `changes` (what the step records: the card, the deposit) and,
 * when the booking is a pending_confirmation hold waiting for `requirement`, takes the step off its
 * requirements; the last one confirms it (hold cleared, event logged, the customer told and the
 * reminder scheduled through the outbox, the unsent booking-page link dropped).
 */
export async function settleRequirement(
  trx: Db,
  target: { organisationId: string; bookingId: string },
  requirement: Requirement,
  changes: Omit<Updateable<BookingsTable>, 'status' | 'pending_requirements' | 'hold_expires_at'>,
  now: number,
  actor: string,
  /**
   * silent: a later visit of a series, confirmed with its first: its reminder, but no message of its
   * own. series: the first visit's confirmation names the later visits confirmed with it.
   */
  options: { silent?: boolean; series?: SeriesNote | undefined } = {},
): Promise<Settled> {
  const { organisationId, bookingId } = target;
  const row = await trx
    .selectFrom('bookings')
    .select(['status', 'starts_at', 'hold_expires_at', 'pending_requirements'])
    .where('organisation_id', '=', organisationId)
    .where('id', '=', bookingId)
    .executeTakeFirstOrThrow();
  const pending = JSON.parse(row.pending_requirements ?? '[]') as string[];
  const clock = { status: row.status, startsAt: row.starts_at, holdExpiresAt: row.hold_expires_at };
  const left = pending.filter((step) => step !== requirement);
  // A hold that lapsed (its minutes ran out, or its appointment began) waits for nothing any more.
  const waiting = effectiveStatus(clock, now) === 'pending_confirmation' && left.length < pending.length;
  const moved = waiting && left.length === 0 ? transition(clock, 'requirements_completed', now) : null;
  // A hold that lapsed meanwhile stays lapsed: what the step saved is kept, the booking is not revived.
  if (!waiting || (moved && !moved.ok)) {
    await updateBooking(trx, organisationId, bookingId, { ...changes, updated_at: now });
    return 'not_held';
  }
  if (!moved) {
    // Still held as read, as the confirmation below: a hold another instance's sweeper expired since
    // keeps the step's changes but no requirements, and is not held (nothing is asked of it any more).
    const outstanding = await updateBookingIn(trx, organisationId, bookingId, 'pending_confirmation', {
      ...changes,
      pending_requirements: JSON.stringify(left),
      updated_at: now,
    });
    if (!outstanding) {
      await updateBooking(trx, organisationId, bookingId, { ...changes, updated_at: now });
      return 'not_held';
    }
    return 'outstanding';
  }
  // Confirmed only if still held as read: on PostgreSQL a cancellation (or a lapse) committed since the
  // read is not written over (card setups and codes take no booking turn); the step's own changes stay.
  const confirmed = await updateBookingIn(trx, organisationId, bookingId, 'pending_confirmation', {
    ...changes,
    status: 'confirmed',
    pending_requirements: null,
    hold_expires_at: null,
    updated_at: now,
  });
  if (!confirmed) {
    await updateBooking(trx, organisationId, bookingId, { ...changes, updated_at: now });
    return 'not_held';
  }
  await logBookingEvent(trx, {
    organisationId,
    bookingId,
    from: 'pending_confirmation',
    to: 'confirmed',
    actor,
    at: now,
    details: { completed: requirement },
  });
  await announceChange(
    trx,
    organisationId,
    bookingId,
    {
      kind: 'confirmed',
      drop: ['payment_link', 'booking_page_link', 'verification_code'],
      remind: true,
      silent: options.silent === true,
      series: options.series,
    },
    now,
  );
  // A waitlist offer confirmed: its entry is booked (and integrators hear waitlist.claimed).
  await bookEntryOfOffer(trx, organisationId, bookingId, now);
  await bookEntriesFilledBy(trx, organisationId, bookingId, now);
  return 'confirmed';
}
