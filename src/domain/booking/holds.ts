import type { LocationPolicy } from '../catalogue.ts';
import { CONTACT_VERIFICATION } from '../public-booking-policy.ts';
import { WAITLIST_CLAIM } from '../waitlist.ts';
import type { Booking } from './booking.ts';
import { isHeld, noticeMinutes } from './state-machine.ts';

/**
 * How long a booking is held for its customer, and the notice that hold therefore needs
 * (docs/decisions/holds-leave-time-to-finish.md), decided here alone: for the booking made
 * (createBooking), the availability that offers it and re-checks it (bookingNotice), a waitlist offer
 * once claimed (claims.ts), and what MCP says of the notice (hold-notice.ts).
 */

/** What a hold waits for its customer to do through its link first: the step its minutes are the policy's for. */
export type HoldStep = 'waitlist_claim' | 'protection_setup' | 'deposit' | 'contact_verification';

/** The terms a booking is held under. */
export interface HoldTerms {
  /** Booking Protection applies to it: a card to save. */
  protection: boolean;
  /** A deposit is due. */
  deposit: boolean;
  /** A public booking whose contact is proven first (its code). */
  proofFirst?: boolean | undefined;
  /** A freed time offered to a waitlist entry: claimed first, then held afresh for what is left (claimedHold). */
  offer?: boolean | undefined;
}

export type HoldPolicy = Pick<
  LocationPolicy,
  'pendingConfirmationHoldMinutes' | 'pendingPaymentHoldMinutes' | 'waitlistOfferMinutes'
>;

/** A hold: what it waits for first, and for how many minutes it is held (ending at the start at the latest: holdEnd). */
export interface BookingHold {
  step: HoldStep;
  minutes: number;
}

/**
 * The hold a booking made on `terms` is given, or null when it is confirmed at once: a waitlist offer
 * for waitlist_offer_minutes; else under Booking Protection pending_confirmation_hold_minutes; else a
 * deposit pending_payment_hold_minutes; else a contact to prove pending_confirmation_hold_minutes.
 */
export function bookingHold(policy: HoldPolicy, terms: HoldTerms): BookingHold | null {
  if (terms.offer) return { step: 'waitlist_claim', minutes: policy.waitlistOfferMinutes };
  if (terms.protection) return { step: 'protection_setup', minutes: policy.pendingConfirmationHoldMinutes };
  if (terms.deposit) return { step: 'deposit', minutes: policy.pendingPaymentHoldMinutes };
  if (terms.proofFirst)
    return { step: 'contact_verification', minutes: policy.pendingConfirmationHoldMinutes };
  return null;
}

/**
 * The hold a claimed waitlist offer is given, from the claim, for the steps it has left (Booking
 * Protection's card, its deposit): as a booking made at the claim would be; null when the claim
 * confirms it.
 */
export function claimedHold(policy: HoldPolicy, terms: HoldTerms): BookingHold | null {
  return bookingHold(policy, { ...terms, offer: false });
}

/**
 * The notice a booking held on `terms` needs (null terms: one confirmed at once, or a move of one that
 * is): the location's min_notice_minutes, or longer so that each hold it passes through (an offer's,
 * then its claim's) leaves its customer time to finish before the start (noticeMinutes). `step` names
 * the hold that asks for more than the location's notice, for a too_soon refusal's words; null when
 * the location's own is as long.
 */
export function holdNotice(
  policy: HoldPolicy & Pick<LocationPolicy, 'minNoticeMinutes'>,
  terms: HoldTerms | null,
): { minutes: number; step: HoldStep | null } {
  const first = terms && bookingHold(policy, terms);
  const then = terms?.offer ? claimedHold(policy, terms) : null;
  let notice: { minutes: number; step: HoldStep | null } = { minutes: policy.minNoticeMinutes, step: null };
  for (const hold of [first, then]) {
    if (!hold) continue;
    const minutes = noticeMinutes(policy.minNoticeMinutes, hold.minutes);
    if (minutes > notice.minutes) notice = { minutes, step: hold.step };
  }
  return notice;
}

/**
 * The terms a booking still held at `now` is held under, as it was made (its Booking Protection and
 * deposit snapshots, the code or claim it still waits for), whatever its location or services ask of
 * a booking made now: what a move of it must leave time for (holdNotice). null once it is not held.
 */
export function heldTermsOf(
  booking: Pick<
    Booking,
    'status' | 'startsAt' | 'holdExpiresAt' | 'protection' | 'depositMinor' | 'pendingRequirements'
  >,
  now: number,
): HoldTerms | null {
  if (!isHeld(booking, now)) return null;
  return {
    protection: booking.protection.applies,
    deposit: (booking.depositMinor ?? 0) > 0,
    proofFirst: booking.pendingRequirements.includes(CONTACT_VERIFICATION),
    offer: booking.pendingRequirements.includes(WAITLIST_CLAIM),
  };
}
