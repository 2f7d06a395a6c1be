import type { Db } from '../data/database.ts';
import {
  dropPendingMessages,
  insertOutboxMessages,
  listOutboxOf,
  type NewOutboxRow,
  outboxOfBooking,
  recentOutboxOf,
  zonesOfOutboxBookings,
} from '../data/outbox-repository.ts';
import type { OutboxTable } from '../data/tables.ts';
import type { BookingStatus } from '../domain/booking/state-machine.ts';
import {
  type OutboxKind,
  type OutboxMessage,
  type OutboxNotice,
  type OutboxStatus,
  recipientsOf,
  reminderDueAt,
  type SeriesNote,
  seriesNoteBody,
  seriesNoteOf,
} from '../domain/outbox.ts';
import { CONTACT_VERIFICATION } from '../domain/public-booking-policy.ts';
import { WAITLIST_CLAIM } from '../domain/waitlist.ts';
import { isTextable } from './phone-destinations.ts';
import { textedCountriesOf } from './texted-countries.ts';
import { timeOrderedId } from './time-ordered-id.ts';

/**
 * Writing the customer's messages, always inside the transaction of the change they report: the
 * change and its messages commit together or not at all (the outbox pattern). Delivery is
 * outbox-delivery.ts's job.
 */

/** The booking a message is about and the client's contact details as they are now. */
export interface MessageTarget {
  organisationId: string;
  bookingId: string;
  reference: string;
  client: { phone: string | null; email: string | null };
  /**
   * The countries the organisation texts (texted-countries.ts): the client's phone is texted only when
   * it may be (phone-destinations.ts), so that what an answer says was sent is what goes. Absent: the
   * delivery worker alone decides (it fails a text that may not go).
   */
  textedCountries?: ReadonlySet<string> | undefined;
}

/** What a change announces: its kind, and the reminder to schedule (for a booking now confirmed). */
export interface Announcement {
  kind: OutboxKind;
  reminder?: { startsAt: number; hoursBefore: number } | undefined;
  /** Only the reminder: a later visit of a series, whose first visit sent the confirmation. */
  silent?: boolean;
  /** The later visits of its series the change took with it, said in this one message. */
  series?: SeriesNote | undefined;
}

export type Notice = OutboxNotice;

/**
 * Writes the announcement's messages (one per channel the client has) and the reminder's, in one
 * INSERT; returns where the announcement goes. Nothing for a client with neither phone nor e-mail.
 */
export async function queueMessages(
  trx: Db,
  target: MessageTarget,
  announcement: Announcement,
  now: number,
): Promise<Notice[]> {
  const { rows, notices } = messagesOf(target, announcement, now);
  await insertOutboxMessages(trx, rows);
  return notices;
}

/**
 * The outbox rows queueMessages writes, and where the announcement goes, for a caller that writes
 * them together with other rows (a new booking: insertNewBooking).
 */
export function messagesOf(
  target: MessageTarget,
  announcement: Announcement,
  now: number,
): { rows: NewOutboxRow[]; notices: Notice[] } {
  const { textedCountries } = target;
  const recipients = recipientsOf(target.client).filter(
    (r) => r.channel !== 'sms' || textedCountries === undefined || isTextable(r.to, textedCountries),
  );
  const rows: NewOutboxRow[] = announcement.silent
    ? []
    : recipients.map((r) => outboxRow(target, announcement.kind, r, now, now));
  const { reminder } = announcement;
  const due = reminder ? reminderDueAt(reminder.startsAt, reminder.hoursBefore, now) : null;
  if (due !== null) rows.push(...recipients.map((r) => outboxRow(target, 'reminder', r, due, now)));
  // The series note rides on the announcement; the reminders name the column too (one INSERT, one shape).
  const note = announcement.silent ? undefined : seriesNoteBody(announcement.series);
  if (note) for (const row of rows) row.body = row.kind === announcement.kind ? note : null;
  const notices = announcement.silent ? [] : recipients.map((r) => ({ kind: announcement.kind, ...r }));
  return { rows, notices };
}

/** The first message a new booking gets: confirmed (with its reminder) or the link its hold needs. */
export function newBookingAnnouncement(
  status: BookingStatus,
  startsAt: number,
  reminderHoursBefore: number,
): Announcement {
  if (status === 'pending_payment') return { kind: 'payment_link' };
  if (status === 'pending_confirmation') return { kind: 'booking_page_link' };
  return { kind: 'confirmed', reminder: { startsAt, hoursBefore: reminderHoursBefore } };
}

/**
 * For a change to a booking made elsewhere than its creation (paid, moved, cancelled): reads the
 * client's contact and the location's reminder policy, drops the pending messages the change makes
 * moot (`drop`), and writes the new ones. The reminder follows the booking: it is rewritten for the
 * new start when `reschedule` is set and the booking is confirmed.
 */
export async function announceChange(
  trx: Db,
  organisationId: string,
  bookingId: string,
  change: {
    kind: OutboxKind;
    drop: readonly OutboxKind[] | 'all';
    remind: boolean;
    silent?: boolean;
    series?: SeriesNote | undefined;
  },
  now: number,
): Promise<Notice[]> {
  const row = await trx
    .selectFrom('bookings as b')
    .innerJoin('clients as c', (join) =>
      join.onRef('c.organisation_id', '=', 'b.organisation_id').onRef('c.id', '=', 'b.client_id'),
    )
    .innerJoin('locations as l', (join) =>
      join.onRef('l.organisation_id', '=', 'b.organisation_id').onRef('l.id', '=', 'b.location_id'),
    )
    .innerJoin('organisations as o', 'o.id', 'b.organisation_id')
    .select([
      'b.reference',
      'b.starts_at',
      'b.status',
      'b.pending_requirements',
      'c.phone',
      'c.email',
      'l.reminder_hours_before',
      'o.catalogue_version',
    ])
    .where('b.organisation_id', '=', organisationId)
    .where('b.id', '=', bookingId)
    .executeTakeFirstOrThrow();
  // A waitlist offer not claimed yet that was moved (the desk, as the customer asked on the phone) is
  // told again as the offer it is, at its new time: "Moved" would speak of a booking nobody made.
  const offer = row.pending_requirements?.includes(WAITLIST_CLAIM) === true;
  const kind: OutboxKind = offer && change.kind === 'rescheduled' ? 'booking_page_link' : change.kind;
  const kinds =
    change.drop === 'all' ? undefined : kind === change.kind ? change.drop : [...change.drop, kind];
  // A series note of this kind not sent yet goes on with the message that replaces it (the visit that
  // told a move of the series moved again alone before the worker sent it): the later visits' move
  // is still to be told.
  const series =
    change.series ??
    (change.silent ? undefined : await pendingSeriesNote(trx, organisationId, bookingId, kind, now));
  await dropPendingMessages(trx, organisationId, bookingId, now, kinds);
  // A public booking whose contact nobody has proven sends nothing but its code (contact-proof.ts):
  // that contact may be anybody's.
  if (row.pending_requirements?.includes(CONTACT_VERIFICATION)) return [];
  // A waitlist offer not claimed yet is withdrawn as it lapses: quietly, its link then saying so.
  if (change.kind === 'cancelled' && offer) return [];
  const target = {
    organisationId,
    bookingId,
    reference: row.reference,
    client: { phone: row.phone, email: row.email },
    textedCountries: await textedCountriesOf(trx, organisationId, row.catalogue_version),
  };
  const remind = change.remind && row.status === 'confirmed';
  return queueMessages(
    trx,
    target,
    {
      kind,
      reminder: remind ? { startsAt: row.starts_at, hoursBefore: row.reminder_hours_before } : undefined,
      silent: change.silent === true,
      series,
    },
    now,
  );
}

/**
 * Rewrites the series note a new series' first visit carries in its pending messages: what was known
 * only once every later visit was booked (who each is with). Whatever else a body holds beside its
 * note (a verification code's secrets) stays.
 */
export async function restateSeriesNote(
  trx: Db,
  organisationId: string,
  bookingId: string,
  note: SeriesNote,
): Promise<void> {
  if (note.following < 1) return;
  const rows = await trx
    .selectFrom('outbox')
    .select(['id', 'body'])
    .where('organisation_id', '=', organisationId)
    .where('booking_id', '=', bookingId)
    .where('status', '=', 'pending')
    .where('body', 'like', '{"series"%')
    .execute();
  for (const row of rows) {
    const body = JSON.stringify({ ...(JSON.parse(row.body!) as object), series: note });
    await trx
      .updateTable('outbox')
      .set({ body })
      .where('organisation_id', '=', organisationId)
      .where('id', '=', row.id)
      .execute();
  }
}

/** The series note of the booking's pending message of this kind, if one carries it. */
async function pendingSeriesNote(
  trx: Db,
  organisationId: string,
  bookingId: string,
  kind: OutboxKind,
  now: number,
): Promise<SeriesNote | undefined> {
  const row = await trx
    .selectFrom('outbox')
    .select('body')
    .where('organisation_id', '=', organisationId)
    .where('booking_id', '=', bookingId)
    .where('status', '=', 'pending')
    .where('kind', '=', kind)
    .where('body', 'like', '{"series"%')
    // One a worker is sending right now stays (dropPendingMessages): it tells the note itself.
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
    .executeTakeFirst();
  return seriesNoteOf(row?.body ?? null) ?? undefined;
}

/** The organisation's messages for the operator (`booking outbox list`), oldest first. */
export function listOutbox(db: Db, organisationId: string, status?: OutboxStatus): Promise<OutboxMessage[]> {
  return listOutboxOf(db, organisationId, status);
}

/** How many of the newest messages the console's outbox shows at once. */
export const RECENT_OUTBOX_LIMIT = 200;

/** The newest messages first (the console's outbox): what went out lately, and what failed. */
export function recentOutbox(
  db: Db,
  organisationId: string,
  status?: OutboxStatus,
): Promise<OutboxMessage[]> {
  return recentOutboxOf(db, organisationId, { status, limit: RECENT_OUTBOX_LIMIT });
}

/** The zone each message's times are said in: its booking's location's, by booking id. */
export function zonesOfMessages(
  db: Db,
  organisationId: string,
  messages: readonly OutboxMessage[],
): Promise<Map<string, string>> {
  return zonesOfOutboxBookings(
    db,
    organisationId,
    messages.map((m) => m.bookingId),
  );
}

/** What a booking's customer was told, and what is still to go (its reminder). */
export function messagesOfBooking(
  db: Db,
  organisationId: string,
  bookingId: string,
): Promise<OutboxMessage[]> {
  return outboxOfBooking(db, organisationId, bookingId);
}

/**
 * The outbox row of a verification code: to the one contact being proven (not every contact of the
 * client), carrying the code and link token in `body` until it is rendered at delivery.
 */
export function verificationCodeMessage(
  target: Omit<MessageTarget, 'client'>,
  recipient: { channel: OutboxTable['channel']; to: string },
  secrets: string,
  now: number,
): NewOutboxRow {
  return { ...outboxRow(target, 'verification_code', recipient, now, now), body: secrets };
}

function outboxRow(
  target: Omit<MessageTarget, 'client'>,
  kind: OutboxKind,
  recipient: { channel: OutboxTable['channel']; to: string },
  dueAt: number,
  now: number,
): NewOutboxRow {
  return {
    id: timeOrderedId(),
    organisation_id: target.organisationId,
    booking_id: target.bookingId,
    reference: target.reference,
    channel: recipient.channel,
    recipient: recipient.to,
    kind,
    status: 'pending',
    attempts: 0,
    due_at: dueAt,
    created_at: now,
  };
}
