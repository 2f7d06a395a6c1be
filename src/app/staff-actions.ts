import { sql } from 'kysely';
import { updateBooking, upsertFee } from '../data/booking-repository.ts';
import type { Db } from '../data/database.ts';
import type { UserRole } from '../data/tables.ts';
import { writeTransaction } from '../data/write-transaction.ts';
import type { Booking, Fee, FeeKind } from '../domain/booking/booking.ts';
import { processedStatus } from '../domain/booking/fees.ts';
import { referenceReadings } from '../domain/booking/reference.ts';
import {
  type BookingEvent,
  type BookingStatus,
  transition,
  whatBecameOf,
} from '../domain/booking/state-machine.ts';
import { AppError } from '../domain/errors.ts';
import { recordPendingFee } from './booking-changes.ts';
import { logBookingEvent } from './booking-event-log.ts';
import { takeBookingTurn } from './booking-reference.ts';
import { getBooking } from './booking-service.ts';
import { savedCard, TEST_MODE_CARD } from './card-setup-service.ts';
import { recordDepositPaid } from './checkout-service.ts';
import {
  askCharge,
  chargeKey,
  chargeOfFee,
  dropPaymentCall,
  type PaymentCall,
  providerDeadline,
  recordPaymentCalls,
  refuseUnlessMadeBy,
  refuseWhileCancelling,
} from './payment-calls.ts';
import type { PaymentProvider } from './payments.ts';

/**
 * Staff-console actions the REST contract leaves to staff (design.md sections 4 and 6): each runs in
 * one write transaction, goes through the state machine and appends to the event log as `staff` (the
 * CLI) or as the console's signed-in user (`user:<id>`).
 */
const ACTOR = 'staff';

export const FEE_KINDS: readonly FeeKind[] = ['late_cancellation', 'no_show'];

export interface StatusChange {
  booking: Booking;
  from: BookingStatus;
  to: BookingStatus;
}

export interface ProcessedFee {
  booking: Booking;
  fee: Fee;
}

/** confirmed -> needs_checkout: the appointment took place but is not paid at the till yet. */
export function checkOut(db: Db, organisationId: string, reference: string, now: number, actor = ACTOR) {
  return changeStatus(db, organisationId, reference, 'check_out', now, actor);
}

/** confirmed | needs_checkout -> completed, once the appointment has started. */
export function complete(db: Db, organisationId: string, reference: string, now: number, actor = ACTOR) {
  return changeStatus(db, organisationId, reference, 'complete', now, actor);
}

/**
 * confirmed -> no_show, once the appointment has started. A paid deposit is retained; when the
 * booking's protection snapshot has a no-show percentage, the fee is recorded (status null until
 * staff charge or waive it), credited with the retained deposit.
 */
export function markNoShow(db: Db, organisationId: string, reference: string, now: number, actor = ACTOR) {
  return changeStatus(db, organisationId, reference, 'no_show', now, actor, async (trx, booking) => {
    const paid = booking.depositStatus === 'paid';
    if (paid)
      await updateBooking(trx, organisationId, booking.id, { deposit_status: 'retained', updated_at: now });
    await recordPendingFee(trx, booking, 'no_show', paid ? (booking.depositMinor ?? 0) : 0, now);
  });
}

/** pending_payment -> confirmed: staff took the deposit (at the desk); an open checkout is closed as paid. */
export function payDepositByStaff(
  db: Db,
  organisationId: string,
  reference: string,
  now: number,
  actor = ACTOR,
) {
  return changeStatus(db, organisationId, reference, 'deposit_paid', now, actor, (trx, booking) =>
    recordDepositPaid(trx, organisationId, booking.id, now),
  );
}

/**
 * Charges the booking's pending fee: wholly covered by the retained deposit -> deposit_covered;
 * otherwise the saved card is charged for the rest. With a provider that takes money (Stripe) that is
 * an off-session payment on the card saved through its card setup, asked between two transactions,
 * never inside one (payment-calls.ts): the charge is written as asked, made, and its outcome written.
 * A decline records `failed` with the provider's reason. An unreachable provider answers 503
 * payments_unavailable and leaves the charge in doubt: the fee stays unprocessed, cannot be waived, and
 * is charged when asked again or by the sweeper once the provider answers (the idempotency key, made
 * from the booking and fee kind, makes a repeat return the first charge). Without a provider that
 * takes money (none, or the local test mode) the charge is only recorded, as no money can move, but
 * for a card a real provider saved: 503 payments_unavailable, nothing written.
 */
export async function chargeFee(
  db: Db,
  organisationId: string,
  reference: string,
  now: number,
  kind?: FeeKind,
  payments: PaymentProvider | null = null,
  actor = ACTOR,
): Promise<ProcessedFee> {
  const step = await processFee(
    db,
    organisationId,
    reference,
    now,
    kind,
    actor,
    async (trx, booking, fee) => {
      // Nothing to take from the card cannot fail for want of one.
      if (fee.chargeAmountMinor === 0) {
        return { status: processedStatus(figuresOf(fee), true), failureReason: null, paymentRef: null };
      }
      // Asked before and in doubt: asked again, as it was, of the provider it was asked of only.
      const asked = await chargeOfFee(trx, organisationId, booking.id, fee.kind);
      if (asked) {
        refuseUnlessMadeBy(asked, payments);
        return { call: asked };
      }
      const card = await savedCard(trx, organisationId, booking.id);
      if (!payments?.takesMoney) {
        // A card a real provider saved is charged only through it: recorded here, the fee would read
        // charged with no money moved and could never be charged again (a command run in a shell
        // without the server's PAYMENT_PROVIDER, say).
        if (card && card.customerRef !== TEST_MODE_CARD) {
          throw new AppError(
            'payments_unavailable',
            `This booking's card was saved with a payment provider and is charged only through it: run this with the server's PAYMENT_PROVIDER and its keys set. Nothing was charged or recorded.`,
          );
        }
        const succeeded = booking.protection.paymentMethodSaved;
        const status = processedStatus(figuresOf(fee), succeeded);
        return { status, failureReason: succeeded ? null : 'no payment method saved', paymentRef: null };
      }
      if (!card) {
        return { status: 'failed', failureReason: `no card saved with ${payments.name}`, paymentRef: null };
      }
      return {
        call: {
          organisation_id: organisationId,
          kind: 'charge',
          key: chargeKey(booking.id, fee.kind),
          booking_id: booking.id,
          purpose: 'fee',
          amount_minor: fee.chargeAmountMinor,
          currency: fee.currency,
          payment_ref: null,
          fee_kind: fee.kind,
          customer_ref: card.customerRef,
          payment_method_ref: card.paymentMethodRef,
          description: `${fee.kind.replace('_', '-')} fee, booking ${booking.reference}`,
          reference: null,
          scope: null,
          reason: null,
          actor,
          requested_at: now,
          attempted_at: null,
          provider: payments.name,
        },
      };
    },
  );
  if (!('call' in step)) return step;
  if (!payments) throw new Error('A fee charge was asked for without a payment provider');
  return completeCharge(db, payments, step.call, step.askedBefore);
}

/**
 * Makes a written fee charge at the provider, outside any transaction, and writes its outcome as of
 * when it was asked, removing the call (chargeFee; the sweeper, for a charge left in doubt). 503
 * payments_unavailable when the provider cannot be reached: the call stays, to be made again.
 */
export async function completeCharge(
  db: Db,
  payments: PaymentProvider,
  call: PaymentCall,
  askedBefore: boolean,
  deadline: number = providerDeadline(),
): Promise<ProcessedFee> {
  const outcome = await askCharge(payments, call, askedBefore, deadline);
  if (!outcome) {
    throw new AppError(
      'payments_unavailable',
      'The payment provider could not be reached to charge the fee. The charge is completed as soon as the provider answers, or when it is asked again.',
    );
  }
  const organisationId = call.organisation_id;
  return writeTransaction(db, async (trx) => {
    const { reference } = await trx
      .selectFrom('bookings')
      .select('reference')
      .where('organisation_id', '=', organisationId)
      .where('id', '=', call.booking_id)
      .executeTakeFirstOrThrow();
    await takeBookingTurn(trx, organisationId, reference);
    const booking = await getBooking(trx, organisationId, reference);
    const kind = call.fee_kind!;
    const fee = booking.fees[kind];
    // Another request wrote this very charge's outcome first.
    if (!fee || !(await dropPaymentCall(trx, organisationId, 'charge', call.key))) {
      throw new AppError(
        'conflict',
        `The ${feeWords(kind)} was already processed (${fee?.status ?? 'no fee'}).`,
      );
    }
    const step: FeeOutcome =
      outcome.status === 'succeeded'
        ? {
            status: processedStatus(figuresOf(fee), true),
            failureReason: null,
            paymentRef: outcome.paymentRef,
          }
        : { status: 'failed', failureReason: outcome.reason, paymentRef: outcome.paymentRef };
    return writeFeeOutcome(trx, booking, fee, step, call.requested_at, call.actor);
  });
}

function figuresOf(fee: Fee) {
  return {
    amountMinor: fee.amountMinor,
    depositCreditMinor: fee.depositCreditMinor,
    chargeAmountMinor: fee.chargeAmountMinor,
  };
}

/**
 * Waives the booking's pending fee; `reason` (why it was let go) is kept in the event log with it.
 */
export async function waiveFee(
  db: Db,
  organisationId: string,
  reference: string,
  now: number,
  kind?: FeeKind,
  actor = ACTOR,
  reason?: string,
): Promise<ProcessedFee> {
  const why = reason?.trim();
  const step = await processFee(
    db,
    organisationId,
    reference,
    now,
    kind,
    actor,
    async (trx, booking, fee) => {
      // A charge in doubt may have taken the money: it is completed first, never waived under it.
      if (await chargeOfFee(trx, organisationId, booking.id, fee.kind)) {
        throw new AppError(
          'conflict',
          `The ${feeWords(fee.kind)} is being charged: its outcome waits for the payment provider’s answer.`,
        );
      }
      return { status: 'waived', failureReason: null, paymentRef: null };
    },
    why ? { reason: why.slice(0, WAIVER_REASON_MAX_LENGTH) } : {},
  );
  if ('call' in step) throw new Error('A waiver asked for a charge');
  return step;
}

/** The longest reason kept for a waiver. */
export const WAIVER_REASON_MAX_LENGTH = 500;

/**
 * Whether a staff account of this role may waive fees at the organisation: any role, unless the
 * organisation keeps waivers to owners and admins (the catalogue's `policies.fee_waivers`).
 */
export async function mayWaiveFees(db: Db, organisationId: string, role: UserRole): Promise<boolean> {
  const row = await db
    .selectFrom('organisations')
    .select('fee_waivers')
    .where('id', '=', organisationId)
    .executeTakeFirst();
  return row?.fee_waivers !== 'owner_admin' || role === 'owner' || role === 'admin';
}

/**
 * The organisations holding a booking with this reference (references are unique per organisation
 * only), for callers such as the CLI that have a reference but no API key. The reference is read as
 * the API reads it (referenceReadings: any case, spaces, hyphens or none, the code alone for an
 * organisation's own prefix).
 */
export async function organisationsWithReference(
  db: Db,
  reference: string,
): Promise<{ id: string; slug: string; reference: string }[]> {
  const readings = referenceReadings(reference);
  const prefixed = readings.flatMap((r) => (r.prefix === null ? [] : [`${r.prefix}-${r.code}`]));
  const bare = readings.flatMap((r) => (r.prefix === null ? [r.code] : []));
  // Each booking's reference as stored (its canonical form: upper case, the prefix's hyphen), whatever
  // was typed.
  return db
    .selectFrom('bookings')
    .innerJoin('organisations', 'organisations.id', 'bookings.organisation_id')
    .select(['organisations.id', 'organisations.slug', 'bookings.reference'])
    .distinct()
    .where((eb) =>
      eb.or([
        ...(prefixed.length > 0 ? [eb('bookings.reference', 'in', prefixed)] : []),
        // A code alone: with the organisation's own prefix.
        ...bare.map((code) =>
          eb(
            'bookings.reference',
            '=',
            sql<string>`${sql.ref('organisations.booking_reference_prefix')} || ${`-${code}`}`,
          ),
        ),
      ]),
    )
    .orderBy('organisations.slug')
    .orderBy('bookings.reference')
    .execute();
}

const VERB: Partial<Record<BookingEvent, string>> = {
  check_out: 'checked out',
  complete: 'completed',
  no_show: 'marked as a no-show',
  deposit_paid: 'marked as paid',
};

async function changeStatus(
  db: Db,
  organisationId: string,
  reference: string,
  event: BookingEvent,
  now: number,
  actor: string,
  also?: (trx: Db, booking: Booking) => Promise<void>,
): Promise<StatusChange> {
  return writeTransaction(db, async (trx) => {
    await takeBookingTurn(trx, organisationId, reference);
    const booking = await getBooking(trx, organisationId, reference);
    const result = transition(booking, event, now);
    if (!result.ok)
      throw new AppError('conflict', `This booking cannot be ${VERB[event]}: ${result.reason}.`);
    await refuseWhileCancelling(trx, organisationId, booking.id);
    await updateBooking(trx, organisationId, booking.id, { status: result.to, updated_at: now });
    await also?.(trx, booking);
    await logBookingEvent(trx, {
      organisationId,
      bookingId: booking.id,
      from: result.from,
      to: result.to,
      actor,
      at: now,
    });
    return {
      booking: await getBooking(trx, organisationId, booking.reference),
      from: result.from,
      to: result.to,
    };
  });
}

interface FeeOutcome {
  status: NonNullable<Fee['status']>;
  failureReason: string | null;
  /** The provider's payment, when money moved (or a declined attempt has an id). */
  paymentRef: string | null;
}

/** A fee as staff read it: "no-show fee", "late-cancellation fee" (as `booking bookings --help` says). */
function feeWords(kind: FeeKind): string {
  return `${kind.replace('_', '-')} fee`;
}

/** Which fee a booking in this status can owe. */
const FEE_OF_STATUS: Partial<Record<BookingStatus, FeeKind>> = {
  cancelled: 'late_cancellation',
  no_show: 'no_show',
};

/**
 * Processes the booking's pending fee as `decide` says: an outcome is written at once; a charge to ask
 * of the provider is written as a call (committed), to be made after the transaction (chargeFee).
 */
async function processFee(
  db: Db,
  organisationId: string,
  reference: string,
  now: number,
  requested: FeeKind | undefined,
  actor: string,
  decide: (trx: Db, booking: Booking, fee: Fee) => Promise<FeeOutcome | { call: PaymentCall }>,
  logged: Record<string, unknown> = {},
): Promise<ProcessedFee | { call: PaymentCall; askedBefore: boolean }> {
  return writeTransaction(db, async (trx) => {
    await takeBookingTurn(trx, organisationId, reference);
    const booking = await getBooking(trx, organisationId, reference);
    const kind = requested ?? FEE_OF_STATUS[booking.status];
    const fee = kind && booking.fees[kind];
    if (!kind || !fee) {
      const what = kind ? feeWords(kind) : 'fee';
      throw new AppError(
        'conflict',
        `This booking has no ${what} to process: it ${whatBecameOf(booking.status)}.`,
      );
    }
    if (fee.status !== null) {
      throw new AppError('conflict', `The ${feeWords(kind)} was already processed (${fee.status}).`);
    }
    const step = await decide(trx, booking, fee);
    if ('call' in step) {
      const [askedBefore] = await recordPaymentCalls(trx, [step.call], now);
      return { call: step.call, askedBefore: askedBefore! };
    }
    return writeFeeOutcome(trx, booking, fee, step, now, actor, logged);
  });
}

/** Writes a processed fee, with its event. */
async function writeFeeOutcome(
  trx: Db,
  booking: Booking,
  fee: Fee,
  outcome: FeeOutcome,
  now: number,
  actor: string,
  logged: Record<string, unknown> = {},
): Promise<ProcessedFee> {
  const { organisationId } = booking;
  await upsertFee(trx, {
    organisation_id: organisationId,
    booking_id: booking.id,
    kind: fee.kind,
    status: outcome.status,
    currency: fee.currency,
    fee_percentage: fee.feePercentage,
    amount_minor: fee.amountMinor,
    deposit_credit_minor: fee.depositCreditMinor,
    charge_amount_minor: fee.chargeAmountMinor,
    failure_reason: outcome.failureReason,
    processed_at: now,
    created_at: now,
    payment_ref: outcome.paymentRef,
  });
  await updateBooking(trx, organisationId, booking.id, { updated_at: now });
  await logBookingEvent(trx, {
    organisationId,
    bookingId: booking.id,
    from: booking.status,
    to: booking.status,
    actor,
    at: now,
    details: {
      fee: fee.kind,
      outcome: outcome.status,
      charge_amount_minor: fee.chargeAmountMinor,
      ...logged,
    },
  });
  const processed = await getBooking(trx, organisationId, booking.reference);
  return { booking: processed, fee: processed.fees[fee.kind]! };
}
