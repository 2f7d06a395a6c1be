import { updateBooking } from '../../data/booking-repository.ts';
import { findClientByEmail, findClientById, findClientByPhone } from '../../data/client-repository.ts';
import type { Db } from '../../data/database.ts';
import { expireHolds, OFFER_LET_GO } from '../../data/hold-expiry.ts';
import { findLocationById } from '../../data/location-repository.ts';
import { endWaitlistEntry, offerOfBooking } from '../../data/waitlist-repository.ts';
import { bookingTurn, takeTurn } from '../../data/write-locks.ts';
import { writeTransaction } from '../../data/write-transaction.ts';
import { claimedHold } from '../../domain/booking/holds.ts';
import { effectiveStatus, holdEnd } from '../../domain/booking/state-machine.ts';
import { AppError } from '../../domain/errors.ts';
import { WAITLIST_CLAIM } from '../../domain/waitlist.ts';
import { logBookingEvent } from '../booking-event-log.ts';
import { type Settled, settleRequirement } from '../booking-requirements.ts';
import { adoptProvenClient } from '../client-service.ts';

/**
 * What the customer does with an offer, from its link (the booking page): claim it, let it go, or
 * leave the waitlist. Each takes the booking's turn, so a link used twice at once, or on two
 * instances, claims once: the second finds the step done.
 */

export interface OfferTarget {
  organisationId: string;
  bookingId: string;
  reference: string;
}

/**
 * Claims the offered time: the claim step is taken off the hold (the last step confirms it, through
 * the normal path: event, messages, reminder, and the entry booked); a deposit or Booking Protection's
 * card may remain, and the entry waits on that.
 */
export async function claimOffer(db: Db, target: OfferTarget, now: number): Promise<Settled> {
  return writeTransaction(db, async (trx) => {
    await takeTurn(trx, bookingTurn(target.organisationId, target.reference));
    const hold = await trx
      .selectFrom('bookings')
      .select([
        'status',
        'starts_at',
        'hold_expires_at',
        'location_id',
        'protection_applies',
        'deposit_minor',
        'client_id',
        'pending_requirements',
      ])
      .where('organisation_id', '=', target.organisationId)
      .where('id', '=', target.bookingId)
      .executeTakeFirst();
    // A lapsed offer is gone (its time may be someone else's by now, or has begun), whatever steps
    // it had left.
    const clock = hold && {
      status: hold.status,
      startsAt: hold.starts_at,
      holdExpiresAt: hold.hold_expires_at,
    };
    if (!clock || effectiveStatus(clock, now) === 'expired') return 'not_held';
    await adoptClaimant(trx, target, hold, now);
    // The last step confirms it, and its entry ends as booked there (offer-outcomes.ts).
    const settled = await settleRequirement(trx, target, WAITLIST_CLAIM, {}, now, 'page:customer');
    if (settled === 'outstanding') await holdForSteps(trx, target, hold, now);
    return settled;
  });
}

/**
 * An offer to an entry made on the public page (its client an unproven record of its own, design.md
 * 9.1) went to the contact typed there, and its claim link is what proves it: once claimed, the booking
 * and its entry go to the client on file with that contact, or the record goes on file with it, as a
 * public booking's code does (adoptProvenClient). An offer sent to a phone and an e-mail does not say
 * which of them opened it: then only a client on file with both takes it, and otherwise the booking
 * stays on its own record, as before.
 */
async function adoptClaimant(
  trx: Db,
  target: OfferTarget,
  booking: { client_id: string; pending_requirements: string | null },
  now: number,
): Promise<void> {
  // Only the claim itself proves the contact: not a second press once it is made.
  if (!(JSON.parse(booking.pending_requirements ?? '[]') as string[]).includes(WAITLIST_CLAIM)) return;
  const client = await findClientById(trx, target.organisationId, booking.client_id);
  if (!client || client.contact_proven === 1) return;
  const proven = await provenByClaim(trx, target.organisationId, client);
  if (!proven) return;
  const adopted = await adoptProvenClient(trx, target.organisationId, booking.client_id, proven, now);
  if (adopted.clientId === booking.client_id) return;
  await updateBooking(trx, target.organisationId, target.bookingId, {
    client_id: adopted.clientId,
    updated_at: now,
  });
  const offer = await offerOfBooking(trx, target.organisationId, target.bookingId);
  if (offer) {
    await trx
      .updateTable('waitlist_entries')
      .set({ client_id: adopted.clientId, updated_at: now })
      .where('organisation_id', '=', target.organisationId)
      .where('id', '=', offer.entry_id)
      .where('client_id', '=', booking.client_id)
      .execute();
  }
  // Gone unless another booking (an earlier offer let go) still names it.
  await adopted.release();
}

/** The contact a claim proved, of those its unproven record holds; null when it cannot be told. */
async function provenByClaim(
  trx: Db,
  organisationId: string,
  client: { phone: string | null; email: string | null },
): Promise<{ channel: 'sms' | 'email'; contact: string } | null> {
  const { phone, email } = client;
  if (phone !== null && email === null) return { channel: 'sms', contact: phone };
  if (email !== null && phone === null) return { channel: 'email', contact: email };
  if (phone === null || email === null) return null;
  const [byPhone, byEmail] = await Promise.all([
    findClientByPhone(trx, organisationId, phone),
    findClientByEmail(trx, organisationId, email),
  ]);
  return byPhone && byPhone.id === byEmail?.id ? { channel: 'sms', contact: phone } : null;
}

/**
 * A claimed offer with steps left (its deposit, Booking Protection's card) is held for them as a hold
 * made at the claim would be (claimedHold, from the claim), never past its start. That may be
 * longer than the offer had left (a claim in the offer's last minute still leaves the hold's minutes
 * to pay) or shorter (an offer held an hour, claimed at once, holds a 10-minute deposit hold 10
 * minutes): the claimer is in the same place as anyone who just booked, and an unpaid claim does not
 * keep the time from others for the rest of the offer. Its unpaid checkouts end with it, so their
 * pages say when it lapses (an offer's checkout is opened to last to the latest such end already:
 * booking-service.ts, so this rarely lengthens one).
 */
async function holdForSteps(
  trx: Db,
  target: OfferTarget,
  hold: {
    starts_at: number;
    hold_expires_at: number | null;
    location_id: string;
    protection_applies: number;
    deposit_minor: number | null;
  },
  now: number,
): Promise<void> {
  const location = await findLocationById(trx, target.organisationId, hold.location_id);
  if (!location) return;
  const claimed = claimedHold(location.policy, {
    protection: hold.protection_applies === 1,
    deposit: (hold.deposit_minor ?? 0) > 0,
  });
  if (!claimed) return;
  const until = holdEnd(now, claimed.minutes, hold.starts_at);
  if (until === hold.hold_expires_at) return;
  await trx
    .updateTable('bookings')
    .set({ hold_expires_at: until, updated_at: now })
    .where('organisation_id', '=', target.organisationId)
    .where('id', '=', target.bookingId)
    .where('status', '=', 'pending_confirmation')
    .execute();
  await trx
    .updateTable('checkout_sessions')
    .set({ expires_at: until })
    .where('organisation_id', '=', target.organisationId)
    .where('booking_id', '=', target.bookingId)
    .where('status', 'in', ['open', 'abandoned'])
    .where('expires_at', '!=', until)
    .execute();
}

/**
 * Lets the offered time go: the hold is released at once (expired), which frees it for the next
 * entry; with `leave`, the entry ends too (status left), otherwise it waits for another time.
 */
export async function declineOffer(db: Db, target: OfferTarget, leave: boolean, now: number): Promise<void> {
  await writeTransaction(db, async (trx) => {
    await takeTurn(trx, bookingTurn(target.organisationId, target.reference));
    const offer = await offerOfBooking(trx, target.organisationId, target.bookingId);
    if (!offer) throw new AppError('conflict', 'This booking is not a waitlist offer.');
    // Claimed meanwhile (the other button, or another tab, went first): the time is the customer's
    // booking now, and letting it go would release what they just booked.
    if (await isClaimed(trx, target)) {
      throw new AppError(
        'conflict',
        'You have booked this time already; to give it up, cancel the booking on its page.',
      );
    }
    // The booking, then the entry (the order every change to both keeps). The worker reads the
    // release's rescan only once this has committed, with the entry left.
    await releaseOffer(trx, target.organisationId, target.bookingId, now);
    if (leave) await leaveOnceOfferEnded(trx, target.organisationId, offer.entry_id, now);
  });
}

/**
 * Ends an entry as left once its offer has been let go or withdrawn; false when it had ended before.
 * Letting the offer go can itself end the entry, as booked: its client booked a time it waits for while
 * the offer held its own (offer-outcomes.ts). Leaving is what was asked, so the entry says left.
 */
export async function leaveOnceOfferEnded(trx: Db, organisationId: string, entryId: string, now: number) {
  return endWaitlistEntry(trx, organisationId, entryId, { status: 'left' }, now, ['waiting', 'booked']);
}

/**
 * Withdraws an offer its customer has not claimed (the entry taken off the waitlist by the desk or an
 * integrator). One claimed already, its deposit or card still to come, is the customer's booking in
 * progress: it stays, to be given up only by cancelling it, as "Take me off the waitlist" on its page
 * leaves it too. Under the booking's turn, so a claim made meanwhile is seen.
 */
export async function withdrawUnclaimedOffer(trx: Db, target: OfferTarget, now: number, actor: string) {
  if (await isClaimed(trx, target)) return;
  await releaseOffer(trx, target.organisationId, target.bookingId, now, actor);
}

/** The offer's claim step is done: confirmed, or a hold waiting only for its deposit or card. */
async function isClaimed(trx: Db, target: OfferTarget): Promise<boolean> {
  const booking = await trx
    .selectFrom('bookings')
    .select(['status', 'pending_requirements'])
    .where('organisation_id', '=', target.organisationId)
    .where('id', '=', target.bookingId)
    .executeTakeFirst();
  if (booking?.status === 'confirmed') return true;
  const pending = JSON.parse(booking?.pending_requirements ?? '[]') as string[];
  return booking?.status === 'pending_confirmation' && !pending.includes(WAITLIST_CLAIM);
}

/**
 * Expires an offer's hold now, if it is still held (the time goes to the next entry); `actor` is who
 * the booking's event log says did it (the customer from the link, unless told otherwise).
 */
export async function releaseOffer(
  trx: Db,
  organisationId: string,
  bookingId: string,
  now: number,
  actor = 'page:customer',
) {
  const held = await trx
    .selectFrom('bookings')
    .select(['id', 'organisation_id', 'status'])
    .where('organisation_id', '=', organisationId)
    .where('id', '=', bookingId)
    .where('status', '=', 'pending_confirmation')
    .execute();
  // Let go, not lapsed: an entry from the public page keeps waiting (offer-outcomes.ts).
  await expireHolds(trx, held, now, actor, logBookingEvent, OFFER_LET_GO);
}
