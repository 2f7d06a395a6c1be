import type { LocationPolicy } from '../catalogue.ts';
import { counted } from '../counted.ts';
import type { Refusal } from '../errors.ts';
import { AWAITING_PROOF, awaitsContactProof } from '../public-booking-policy.ts';
import { awaitsWaitlistClaim } from '../waitlist.ts';
import type { Booking, FeeKind } from './booking.ts';
import { computeFee, type FeeFigures } from './fees.ts';
import { transition } from './state-machine.ts';

/** The step of a protected hold whose card is not saved yet (a booking's pending requirements). */
const PROTECTION_SETUP = 'protection_setup';

/**
 * What cancelling or rescheduling a booking now means under its location's policy (design.md
 * section 6), decided once for the change itself and for its preview (a dry run), so that what an
 * agent is told beforehand is what then happens:
 * - not live, or already started: refused (not_changeable);
 * - late (less than cancellation_window_hours before the current start; never a waitlist offer not
 *   claimed yet) and the policy forbids that change: refused (late_change);
 * - a cancellation on time refunds a paid deposit; a late one retains it and, when the booking's
 *   protection snapshot has a late-cancellation percentage, records the fee (credited with the
 *   retained deposit, the rest to be charged to the saved card);
 * - a reschedule, late or not, keeps a paid deposit with the booking and records no fee (the contract
 *   has no late-reschedule fee).
 */
export type ChangeKind = 'cancel' | 'reschedule';

export type ChangeRules = Pick<
  LocationPolicy,
  'cancellationWindowHours' | 'lateCancellation' | 'lateReschedule'
>;

/** A fee as it would be (or was) recorded: before and after the deposit credit. */
export interface FeeDisclosure extends FeeFigures {
  currency: string;
  feePercentage: number;
}

/** What becomes of a paid deposit: refunded, retained by the shop, or kept with the moved booking. */
export type DepositOutcome = 'refunded' | 'retained' | 'carried_over';

/** What a change means for the customer, for the caller to say. */
export interface ChangeDisclosure {
  late: boolean;
  /** null when no deposit was paid. */
  depositRefunded: boolean | null;
  /** null when no deposit was paid. */
  depositOutcome: DepositOutcome | null;
  /** The late-cancellation fee that is (or would be) recorded, or null. */
  fee: FeeDisclosure | null;
}

/**
 * What a cancellation's or a move's page told the one confirming it, as its form carries it back: the
 * booking's start and the terms (late or not, the deposit, the fee). A change sent with other terms
 * than it would now have (the window passed while the page was open, someone else moved the booking)
 * is not made: the page says the new terms first (the console's Cancel, the customer's booking page).
 */
export function changeTerms(startsAt: number, disclosure: ChangeDisclosure): string {
  const fee = disclosure.fee ? `${disclosure.fee.amountMinor}/${disclosure.fee.chargeAmountMinor}` : '-';
  return `${startsAt}.${disclosure.late ? 'late' : 'on-time'}.${String(disclosure.depositRefunded)}.${fee}`;
}

export interface ChangeDecision extends ChangeDisclosure {
  /** Why the change is refused (a 409 conflict), or null when it may go ahead. */
  refusal: Refusal | null;
}

export function decideChange(
  booking: Booking,
  rules: ChangeRules,
  kind: ChangeKind,
  now: number,
): ChangeDecision {
  // An offer not claimed yet was never the customer's booking: moving or withdrawing it is not late.
  const late = !awaitsWaitlistClaim(booking) && isLate(booking.startsAt, rules, now);
  const paid = booking.depositStatus === 'paid';
  const disclosure: ChangeDisclosure =
    kind === 'cancel'
      ? {
          late,
          depositRefunded: paid ? !late : null,
          depositOutcome: paid ? (late ? 'retained' : 'refunded') : null,
          // A hold whose card was never saved had its terms never agreed: no fee, as when it lapses.
          fee:
            late && !booking.pendingRequirements.includes(PROTECTION_SETUP)
              ? pendingFee(booking, 'late_cancellation', retainedDeposit(booking))
              : null,
        }
      : {
          late,
          depositRefunded: paid ? false : null,
          depositOutcome: paid ? 'carried_over' : null,
          fee: null,
        };
  return { ...disclosure, refusal: refusalOf(booking, rules, kind, late, now) };
}

/**
 * The fee a late cancellation or a no-show owes, when the booking's protection snapshot has a
 * percentage for it (credited with `retainedDepositMinor`); null when none is owed.
 */
export function pendingFee(
  booking: Booking,
  kind: FeeKind,
  retainedDepositMinor: number,
): FeeDisclosure | null {
  const { protection } = booking;
  const percentage =
    kind === 'late_cancellation' ? protection.lateCancellationFeePercentage : protection.noShowFeePercentage;
  if (!protection.applies || percentage === null) return null;
  return {
    ...computeFee(booking.totalPriceMinor, percentage, retainedDepositMinor),
    currency: booking.currency,
    feePercentage: percentage,
  };
}

/** The deposit the shop keeps when the booking is not honoured: the paid one, else nothing. */
function retainedDeposit(booking: Booking): number {
  return booking.depositStatus === 'paid' ? (booking.depositMinor ?? 0) : 0;
}

/** Less than cancellation_window_hours before the (current) start. */
export function isLate(startsAt: number, rules: Pick<ChangeRules, 'cancellationWindowHours'>, now: number) {
  return startsAt - now < rules.cancellationWindowHours * 3_600_000;
}

function refusalOf(
  booking: Booking,
  rules: ChangeRules,
  kind: ChangeKind,
  late: boolean,
  now: number,
): Refusal | null {
  const result = transition(booking, kind, now);
  if (!result.ok) {
    return {
      reason: 'not_changeable',
      message: `This booking cannot be ${kind === 'cancel' ? 'cancelled' : 'changed'}: ${result.reason}.`,
    };
  }
  // A public booking nobody has confirmed yet may be cancelled, not moved (public-booking-policy.ts).
  if (kind === 'reschedule' && awaitsContactProof(booking)) {
    return { reason: 'not_changeable', message: AWAITING_PROOF };
  }
  const forbidden = kind === 'cancel' ? rules.lateCancellation : rules.lateReschedule;
  if (!late || forbidden !== 'forbid') return null;
  const what = kind === 'cancel' ? 'Cancellations' : 'Changes';
  return {
    reason: 'late_change',
    message: `${what} less than ${counted(rules.cancellationWindowHours, 'hour')} before the appointment are not allowed here.`,
    ...(kind === 'reschedule' && { param: 'starts_at' }),
  };
}

/** Why a booking whose staff member left (or stopped doing its services) cannot be moved with them. */
export const STAFF_CANNOT_TAKE_IT =
  "The booking's staff member can no longer take it here (not active, or no longer doing these " +
  'services): give staff_id to move it to someone else.';
