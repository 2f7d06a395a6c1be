import { findClientById } from '../data/client-repository.ts';
import type { Db } from '../data/database.ts';
import { writeTransaction } from '../data/write-transaction.ts';
import { type BookingStatus, effectiveStatus, whatBecameOf } from '../domain/booking/state-machine.ts';
import { AppError } from '../domain/errors.ts';
import type { OutboxChannel, OutboxKind } from '../domain/outbox.ts';
import { CONTACT_VERIFICATION } from '../domain/public-booking-policy.ts';
import { getBooking } from './booking-service.ts';
import { announceChange } from './outbox-service.ts';
import { type ResendLimiter, withResend } from './resend-limit.ts';

/**
 * MCP send_link: (re)sends what the booking's customer needs now: the payment link while a deposit is
 * due, the booking-page link while it awaits confirmation, otherwise the confirmation; at most
 * RESENDS_PER_HOUR times within 60 minutes per booking (429 rate_limited past it: resend-limit.ts). 409
 * conflict for a booking with nothing to send (cancelled, expired, over), a client with neither phone
 * nor e-mail, or a public booking whose contact nobody has proven (its page sends the code again).
 */
export async function sendLink(
  db: Db,
  limiter: ResendLimiter,
  organisationId: string,
  reference: string,
  now: number,
  providers: ReadonlySet<OutboxChannel>,
) {
  const found = await getBooking(db, organisationId, reference);
  return withResend(limiter, { organisationId, bookingId: found.id }, now, () =>
    send(db, organisationId, reference, now, providers),
  );
}

function send(
  db: Db,
  organisationId: string,
  reference: string,
  now: number,
  providers: ReadonlySet<OutboxChannel>,
) {
  return writeTransaction(db, async (trx) => {
    const booking = await getBooking(trx, organisationId, reference);
    const status = effectiveStatus(booking, now);
    // A link to a contact nobody proved would be a message to a stranger's choice of address.
    if (booking.pendingRequirements.includes(CONTACT_VERIFICATION)) {
      throw new AppError(
        'conflict',
        'This booking was made on the booking page and waits for the customer to confirm it with the code sent to them; it can be sent again from its booking page.',
      );
    }
    const kind = LINK_OF_STATUS[status];
    if (!kind || booking.startsAt <= now) {
      throw new AppError(
        'conflict',
        `There is nothing to send for this booking: it ${whatBecameOf(status)}.`,
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
      // No e-mail, and a phone (if any) that may not be texted: said as it is, so staff know to ask for
      // an e-mail rather than look for a number that is there.
      const client = await findClientById(trx, organisationId, booking.clientId);
      throw new AppError(
        'conflict',
        client?.phone
          ? "The client's phone number is not one we send texts to (texts go only to personal numbers in the countries the organisation texts), and the client has no e-mail address to send it to."
          : 'The client has neither a phone number nor an e-mail address to send it to.',
      );
    }
    // Said sent only where it goes: on a server with a provider for one channel, a message by the other
    // is kept as logged and reaches nobody (with none at all, the demo's way, every message is logged
    // and said where it would go).
    const sent = providers.size === 0 ? notices : notices.filter((notice) => providers.has(notice.channel));
    if (sent.length === 0) {
      throw new AppError(
        'conflict',
        providers.has('sms')
          ? 'This server sends texts only, and the client has no phone number it may text.'
          : 'This server sends e-mails only, and the client has no e-mail address.',
      );
    }
    return { reference: booking.reference, kind, notices: sent };
  });
}

const LINK_OF_STATUS: Partial<Record<BookingStatus, OutboxKind>> = {
  pending_payment: 'payment_link',
  pending_confirmation: 'booking_page_link',
  confirmed: 'confirmed',
};
