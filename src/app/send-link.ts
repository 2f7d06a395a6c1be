import type { Db } from '../data/database.ts';
import { writeTransaction } from '../data/write-transaction.ts';
import { type BookingStatus, effectiveStatus } from '../domain/booking/state-machine.ts';
import { AppError } from '../domain/errors.ts';
import type { OutboxKind } from '../domain/outbox.ts';
import { getBooking } from './booking-service.ts';
import { announceChange } from './outbox-service.ts';

/**
 * MCP send_link: (re)sends what the booking's customer needs now: the payment link while a deposit is
 * due, the booking-page link while it awaits confirmation, otherwise the confirmation. 409 conflict
 * for a booking with nothing to send (cancelled, expired, over) or a client with neither phone nor
 * e-mail.
 */
export function sendLink(db: Db, organisationId: string, reference: string, now: number) {
  return writeTransaction(db, async (trx) => {
    const booking = await getBooking(trx, organisationId, reference);
    const status = effectiveStatus(booking, now);
    const kind = LINK_OF_STATUS[status];
    if (!kind || booking.startsAt <= now) {
      throw new AppError(
        'conflict',
        `There is nothing to send for this booking: it is ${status.replace('_', ' ')}.`,
      );
    }
    const notices = await announceChange(
      trx,
      organisationId,
      booking.id,
      { kind, drop: [kind], remind: false },
      now,
    );
    if (notices.length === 0) {
      throw new AppError(
        'conflict',
        'The client has neither a phone number nor an e-mail address to send it to.',
      );
    }
    return { reference: booking.reference, kind, notices };
  });
}

const LINK_OF_STATUS: Partial<Record<BookingStatus, OutboxKind>> = {
  pending_payment: 'payment_link',
  pending_confirmation: 'booking_page_link',
  confirmed: 'confirmed',
};
