import { bookingHold, type HoldStep, type HoldTerms, holdNotice } from '../domain/booking/holds.ts';
import { CONTACT_VERIFICATION } from '../domain/public-booking-policy.ts';
import { WAITLIST_CLAIM } from '../domain/waitlist.ts';
import type { Booking, LocationInfo } from './booking-api.ts';

/**
 * A booking its customer finishes through a link (a deposit to pay, Booking Protection's card to save,
 * a public booking's code to enter, a waitlist offer to claim) may need more notice than the location's
 * own (holdNotice, docs/decisions/holds-leave-time-to-finish.md).
 * The tools say what that notice is for, so "bookings there need 15 minutes' notice" is never heard
 * where a cut without a deposit can be booked for now.
 */
export interface HoldNotice {
  minutes: number;
  /** What such a booking waits for, as the tools say it: "a deposit paid first", "a card saved first". */
  needing: string;
}

/** What a hold waits for, as the tools say it. */
const NEEDING: Readonly<Record<HoldStep, string>> = {
  deposit: 'a deposit paid first',
  protection_setup: 'a card saved first',
  contact_verification: 'a code entered first',
  waitlist_claim: 'an offer claimed first',
};

/** What a booking made at this location is held for: under Booking Protection, the card; else a deposit. */
function needingAt(info: LocationInfo): string {
  return NEEDING[info.booking_protection_policy.applies ? 'protection_setup' : 'deposit'];
}

/**
 * The notice the location's held bookings need when it is longer than its own min_notice_minutes, with
 * what they wait for; null when every booking there needs just the location's notice (no deposit and no
 * protection, or a notice already as long).
 */
export function holdNoticeAt(info: LocationInfo): HoldNotice | null {
  const { policy } = info;
  const protectedHere = info.booking_protection_policy.applies;
  if (!protectedHere && info.deposits.length === 0) return null;
  const notice = holdNotice(
    {
      minNoticeMinutes: policy.min_notice_minutes,
      pendingConfirmationHoldMinutes: policy.pending_confirmation_hold_minutes,
      pendingPaymentHoldMinutes: policy.pending_payment_hold_minutes,
      // Not a waitlist offer: a booking the caller makes.
      waitlistOfferMinutes: 0,
    },
    { protection: protectedHere, deposit: true },
  );
  return notice.step ? { minutes: notice.minutes, needing: needingAt(info) } : null;
}

/**
 * What a too_soon refusal's notice (its details.min_notice_minutes) was needed for: null when it is
 * the location's own, else what the booking waits for (the engine asks more only of a held booking):
 * a booking made, its deposit or card; a held booking moved, its own hold's step (its code, or an
 * offered time's claim, too).
 */
export function refusedNoticeNeeding(
  info: LocationInfo,
  refusedMinutes: number,
  moved?: Booking,
): string | null {
  if (refusedMinutes <= info.policy.min_notice_minutes) return null;
  const terms = moved && heldTermsOf(moved);
  // The step a hold is for does not depend on its minutes (bookingHold): those of a waitlist offer,
  // which LocationInfo does not carry, are not needed.
  const hold = terms && bookingHold({ ...holdPolicyOf(info), waitlistOfferMinutes: 0 }, terms);
  return hold ? NEEDING[hold.step] : needingAt(info);
}

function holdPolicyOf(info: LocationInfo) {
  return {
    pendingConfirmationHoldMinutes: info.policy.pending_confirmation_hold_minutes,
    pendingPaymentHoldMinutes: info.policy.pending_payment_hold_minutes,
  };
}

/**
 * The terms a booking as the API answers it is still held under, as the engine reads them from its
 * row (heldTermsOf): null once it is not a hold. A code or an offer's claim is held in
 * pending_confirmation, its requirements listed; pending_payment waits for its deposit alone.
 */
function heldTermsOf(booking: Booking): HoldTerms | null {
  if (booking.status !== 'pending_payment' && booking.status !== 'pending_confirmation') return null;
  const requirements = booking.pending_confirmation?.requirements ?? [];
  return {
    protection: booking.booking_protection.applies,
    deposit: (booking.deposit?.amount ?? 0) > 0,
    proofFirst: requirements.includes(CONTACT_VERIFICATION),
    offer: requirements.includes(WAITLIST_CLAIM),
  };
}
