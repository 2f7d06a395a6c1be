import { z } from 'zod';
import { type OutboxKind, sentSentence } from '../../domain/outbox.ts';
import type { Booking, BookingApi, Cancellation } from '../booking-api.ts';
import type { Place } from '../resolution.ts';
import { speakPrice } from '../speech.ts';
import { speakWindow } from '../spoken-hours.ts';
import { recipientsReached } from './recipients.ts';

/**
 * What a cancellation or a move means for the caller (design.md 8.2), as the engine decided it under
 * the location's policy (the REST answer's `change`), in fields and in words the agent reads out
 * before (dry_run) or after the change: late or not, a deposit refunded or kept, a fee charged.
 */

export const ChangeOutput = {
  dry_run: z.boolean().describe('true: nothing was changed; this is what the change would do.'),
  late: z.boolean().describe("Inside the shop's cancellation window."),
  deposit_refunded: z
    .boolean()
    .nullable()
    .describe('A paid deposit refunded (true) or kept (false); null when no deposit was paid.'),
  fee: z
    .object({ amount: z.int(), currency: z.string(), spoken: z.string() })
    .nullable()
    .describe('What is (or would be) charged to the saved card after any deposit credit; null when nothing.'),
};

type Change = Cancellation['change'];

export interface ChangeSaid {
  fields: {
    dry_run: boolean;
    late: boolean;
    deposit_refunded: boolean | null;
    fee: { amount: number; currency: string; spoken: string } | null;
  };
  /** Sentences to add after the booking's words (each with a leading space), or ''. */
  consequences: string;
}

/**
 * `earlier`: the change was made before this call (a series' visit cancelled already, asked again),
 * so it is said as what became of the booking then, not as what happens now.
 */
export async function describeChange(
  api: BookingApi,
  kind: 'cancel' | 'reschedule',
  change: Change,
  booking: Booking,
  place: Place,
  options: { earlier?: boolean } = {},
): Promise<ChangeSaid> {
  const { locale } = place;
  const fee = change.fee && {
    ...change.fee,
    spoken: speakPrice(change.fee.amount, change.fee.currency, locale),
  };
  if (kind === 'cancel' && options.earlier) return cancelledEarlier(api, change, booking, place, fee);
  const will = change.dry_run ? 'would' : 'will';
  const deposit = booking.deposit
    ? `the deposit of ${speakPrice(booking.deposit.amount, booking.deposit.currency, locale)}`
    : 'the deposit';
  const sentences: string[] = [];
  if (kind === 'reschedule') {
    if (change.deposit_refunded === false)
      sentences.push(`${capitalised(deposit)} already paid stays with the booking.`);
  } else {
    const window = change.late ? await lateWindow(api, place) : '';
    if (change.deposit_refunded === true) sentences.push(`${capitalised(deposit)} ${will} be refunded.`);
    if (change.deposit_refunded === false && change.late) {
      sentences.push(
        `${capitalised(deposit)} ${change.dry_run ? 'would be' : 'is'} kept, as this is ${window}.`,
      );
    } else if (change.deposit_refunded === false) {
      // On time, and the payment provider refused the refund: the shop returns it by hand.
      sentences.push(`${capitalised(deposit)} could not be refunded automatically; the shop will return it.`);
    }
    if (fee && !cardSaved(booking)) {
      sentences.push(
        `A late-cancellation fee of ${fee.spoken} ${change.dry_run ? 'would be' : 'is'} due; ${NO_CARD}`,
      );
    } else if (fee) {
      sentences.push(`A late-cancellation fee of ${fee.spoken} ${will} be charged to the card on file.`);
    } else if (change.late && change.deposit_refunded === null) {
      sentences.push(`It is ${window}, but no fee applies.`);
    }
  }
  return {
    fields: { dry_run: change.dry_run, late: change.late, deposit_refunded: change.deposit_refunded, fee },
    consequences: sentences.map((sentence) => ` ${sentence}`).join(''),
  };
}

/** describeChange of a cancellation made before this call: what it did then, in the past tense. */
async function cancelledEarlier(
  api: BookingApi,
  change: Change,
  booking: Booking,
  place: Place,
  fee: ChangeSaid['fields']['fee'],
): Promise<ChangeSaid> {
  const deposit = booking.deposit
    ? `the deposit of ${speakPrice(booking.deposit.amount, booking.deposit.currency, place.locale)}`
    : 'the deposit';
  const window = change.late ? await lateWindow(api, place) : '';
  const sentences: string[] = [];
  if (change.deposit_refunded === true) sentences.push(`${capitalised(deposit)} was refunded.`);
  if (change.deposit_refunded === false && change.late) {
    sentences.push(`${capitalised(deposit)} was kept, as it was cancelled ${window}.`);
  } else if (change.deposit_refunded === false) {
    sentences.push(`${capitalised(deposit)} could not be refunded automatically; the shop will return it.`);
  }
  if (fee && !cardSaved(booking)) {
    sentences.push(`A late-cancellation fee of ${fee.spoken} was recorded; ${NO_CARD}`);
  } else if (fee) {
    sentences.push(`A late-cancellation fee of ${fee.spoken} was recorded for the card on file.`);
  } else if (change.late && change.deposit_refunded === null) {
    sentences.push(`It was cancelled ${window}, but no fee applies.`);
  }
  return {
    fields: { dry_run: change.dry_run, late: change.late, deposit_refunded: change.deposit_refunded, fee },
    consequences: sentences.map((sentence) => ` ${sentence}`).join(''),
  };
}

/**
 * A fee of a booking whose customer never saved a card (a Booking Protection hold not finished on the
 * booking page) is recorded, but nothing can charge it: "charged to the card on file" would be untrue.
 */
const NO_CARD = 'no card is saved, so it is not charged automatically.';

function cardSaved(booking: Booking): boolean {
  const protection = booking.booking_protection;
  return protection.applies && protection.setup.payment_method_saved;
}

/** "less than 24 hours before the appointment", from the location's policy. */
async function lateWindow(api: BookingApi, place: Place): Promise<string> {
  const { policy } = await api.locationInfo(place.location.slug);
  return `less than ${speakWindow(policy.cancellation_window_hours)} before the appointment`;
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * What a move or a cancellation sent the client, as the change's transaction wrote it to the outbox
 * (each channel the client has; SMS only where the organisation texts): " New time sent to the number
 * ending 3456 and by e-mail.", or '' when the client has no contact.
 */
export async function sentAfterChange(
  api: BookingApi,
  booking: Booking,
  kind: Extract<OutboxKind, 'rescheduled' | 'cancelled'>,
): Promise<string> {
  const sent = sentSentence(await noticesOfChange(api, booking, kind), { brief: true });
  return sent ? ` ${sent}` : '';
}

/**
 * What a cancellation made before this call sent the client then (its transaction wrote it to the
 * outbox, for the contacts on file): " The cancellation was sent then to the number ending 3456 and
 * by e-mail.", or that none was.
 */
export async function sentWhenCancelled(api: BookingApi, booking: Booking): Promise<string> {
  const sent = sentSentence(await noticesOfChange(api, booking, 'cancelled'), { brief: 'then' });
  return ` ${sent || 'No cancellation was sent then.'}`;
}

/** The notices a change wrote for the booking's client: each channel it has (SMS only where texted). */
async function noticesOfChange(
  api: BookingApi,
  booking: Booking,
  kind: Extract<OutboxKind, 'rescheduled' | 'cancelled'>,
) {
  return (await recipientsReached(api, booking.client_id)).map((r) => ({ kind, ...r }));
}
