import { holdNotice } from '../domain/booking/holds.ts';
import type { LocationInfo } from './booking-api.ts';

/**
 * A booking its customer finishes through a link (a deposit to pay, Booking Protection's card to save)
 * may need more notice than the location's own (holdNotice, docs/decisions/holds-leave-time-to-finish.md).
 * The tools say what that notice is for, so "bookings there need 15 minutes' notice" is never heard
 * where a cut without a deposit can be booked for now.
 */
export interface HoldNotice {
  minutes: number;
  /** What such a booking waits for, as the tools say it: "a deposit paid first", "a card saved first". */
  needing: string;
}

/** What a booking held at this location waits for: under Booking Protection, the card; else a deposit. */
function needingAt(info: LocationInfo): string {
  return info.booking_protection_policy.applies ? 'a card saved first' : 'a deposit paid first';
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
 * the location's own, else what the booking waits for (the engine asks more only of a held booking).
 */
export function refusedNoticeNeeding(info: LocationInfo, refusedMinutes: number): string | null {
  return refusedMinutes > info.policy.min_notice_minutes ? needingAt(info) : null;
}
