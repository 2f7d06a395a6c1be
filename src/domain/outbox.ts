/**
 * Messages to customers (the outbox): what is sent, to whom, when, and how often it is tried.
 * Pure: the service layer writes and delivers them; this decides.
 */

export const OUTBOX_KINDS = [
  'confirmed',
  'payment_link',
  'booking_page_link',
  'rescheduled',
  'cancelled',
  'reminder',
  /** The code (and link) that proves a public booking's contact: design.md 9.1. */
  'verification_code',
] as const;
export type OutboxKind = (typeof OUTBOX_KINDS)[number];

export const OUTBOX_CHANNELS = ['sms', 'email'] as const;
export type OutboxChannel = (typeof OUTBOX_CHANNELS)[number];

/** pending: to deliver; sent: a provider accepted it; failed: given up; logged: no provider configured. */
export const OUTBOX_STATUSES = ['pending', 'sent', 'failed', 'logged'] as const;
export type OutboxStatus = (typeof OUTBOX_STATUSES)[number];

/** Where a message about a change went, for the answer to say ("the number ending 3456"). */
export interface OutboxNotice {
  kind: OutboxKind;
  channel: OutboxChannel;
  to: string;
}

/** A message as the operator's listing and the tools see it. */
export interface OutboxMessage {
  id: string;
  organisationId: string;
  bookingId: string;
  reference: string;
  channel: OutboxChannel;
  to: string;
  kind: OutboxKind;
  status: OutboxStatus;
  attempts: number;
  dueAt: number;
  lastError: string | null;
  body: string | null;
  createdAt: number;
  sentAt: number | null;
}

/**
 * What a message about one visit of a series says of its later visits that the same change booked,
 * moved or cancelled: one message for the change, not one per visit (a series runs to 26).
 */
export interface SeriesNote {
  /** How many later visits the change took with it. */
  following: number;
  /** A new series' confirmation: its interval, and the start of its last visit. */
  everyWeeks?: number | undefined;
  lastStartsAt?: number | undefined;
  /** A move: the new start of the visit it was asked of, whose time of day every visit moved to. */
  movedTo?: number | undefined;
  /**
   * A new series booked with no stylist named: how many later visits are with someone other than the
   * first visit's stylist, and who (in visit order). The message names the first visit's alone.
   */
  otherStaff?: { visits: number; names: string[] } | undefined;
}

/** The note a pending message's body carries until it is written (seriesNoteBody), or null. */
export function seriesNoteOf(body: string | null): SeriesNote | null {
  // Most messages carry none: no parse (and no exception) for them on the worker's path.
  if (body === null || !body.startsWith('{"series"')) return null;
  try {
    const { series } = JSON.parse(body) as { series?: Partial<SeriesNote> };
    if (!series || !Number.isInteger(series.following) || series.following! < 1) return null;
    const { everyWeeks, lastStartsAt, movedTo, otherStaff } = series;
    return {
      following: series.following!,
      ...(Number.isInteger(everyWeeks) && Number.isFinite(lastStartsAt) && { everyWeeks, lastStartsAt }),
      ...(Number.isFinite(movedTo) && { movedTo }),
      ...(otherStaff &&
        Number.isInteger(otherStaff.visits) &&
        otherStaff.visits > 0 &&
        Array.isArray(otherStaff.names) &&
        otherStaff.names.length > 0 &&
        otherStaff.names.every((name) => typeof name === 'string') && { otherStaff }),
    };
  } catch {
    return null;
  }
}

/** The body a message carries while pending: its series note, for the worker that writes it. */
export function seriesNoteBody(note: SeriesNote | undefined): string | undefined {
  return note && note.following > 0 ? JSON.stringify({ series: note }) : undefined;
}

/** Where a client can be reached: by SMS at the phone and by e-mail at the address, whichever they gave. */
export function recipientsOf(client: { phone: string | null; email: string | null }): {
  channel: OutboxChannel;
  to: string;
}[] {
  const recipients: { channel: OutboxChannel; to: string }[] = [];
  if (client.phone) recipients.push({ channel: 'sms', to: client.phone });
  if (client.email) recipients.push({ channel: 'email', to: client.email });
  return recipients;
}

/**
 * When the reminder of a booking starting at `startsAt` goes: `hoursBefore` hours earlier; null when
 * the location sends none (0) or that moment has already passed (a booking made later than that).
 */
export function reminderDueAt(startsAt: number, hoursBefore: number, now: number): number | null {
  if (hoursBefore <= 0) return null;
  const due = startsAt - hoursBefore * 3_600_000;
  return due > now ? due : null;
}

/** How long a delivery worker's claim on a message lasts by default (OUTBOX_LEASE_SECONDS). */
export const DEFAULT_LEASE_MS = 60_000;

/** How many deliveries are tried before a message is failed for good. */
export const MAX_ATTEMPTS = 8;

/**
 * The wait before the next try after `attempts` failed ones: exponential from 30 s, capped at an hour
 * (30 s, 1 min, 2 min, ... 1 h): eight tries span about two hours of a provider's outage.
 */
export function retryDelayMs(attempts: number): number {
  return Math.min(30_000 * 2 ** Math.max(0, attempts - 1), 3_600_000);
}

/**
 * Which messages still make sense once the booking is in `status` at `now`: nothing for a dead hold,
 * and no news of an appointment that is over.
 */
export function stillDue(
  kind: OutboxKind,
  status: string,
  appointment: { startsAt: number; endsAt: number },
  now: number,
): boolean {
  switch (kind) {
    case 'payment_link':
      return status === 'pending_payment';
    case 'booking_page_link':
      return status === 'pending_confirmation';
    case 'reminder':
      return status === 'confirmed' && appointment.startsAt > now;
    case 'cancelled':
      return status === 'cancelled';
    case 'verification_code':
      // Proof ends the wait; the proof's own transaction drops an unsent code then.
      return status === 'pending_confirmation' || status === 'pending_payment';
    default:
      // Confirmed, rescheduled: not once the booking is gone (a retry outliving a cancellation), nor
      // once the appointment has ended (a provider out for hours): "booked for 10:00" helps nobody at
      // 14:00. While it is under way it still does (booked at 9:55 for 10:00, the message at 10:00:30).
      return status !== 'expired' && status !== 'cancelled' && appointment.endsAt > now;
  }
}

/**
 * A recipient as `sent_to` writes it, without its whole address: "the number ending 3456", "your
 * e-mail at example.com".
 */
export function maskedRecipient(channel: OutboxChannel, to: string): string {
  if (channel === 'sms') return `the number ending ${to.slice(-4)}`;
  const at = to.lastIndexOf('@');
  return at > 0 ? `your e-mail at ${to.slice(at + 1)}` : 'your e-mail';
}

const SENT_WHAT: Record<OutboxKind, string> = {
  confirmed: 'a confirmation',
  payment_link: 'the payment link',
  booking_page_link: 'the booking link',
  rescheduled: 'the new time',
  cancelled: 'a note of the cancellation',
  reminder: 'a reminder',
  verification_code: 'a code',
};

/** The same, said in as few words as book's answer can afford (it must stay within 1,600 characters). */
const SENT_BRIEF: Record<OutboxKind, string> = {
  confirmed: 'Confirmation',
  payment_link: 'Link',
  booking_page_link: 'Link',
  rescheduled: 'New time',
  cancelled: 'Cancellation',
  reminder: 'Reminder',
  verification_code: 'Code',
};

/**
 * What an answer says was sent: "I've sent the payment link to the number ending 3456 and by e-mail."
 * Empty when nothing was (a client with neither phone nor e-mail). `brief` (book's answer): "Link sent
 * to the number ending 3456 and by e-mail."; `brief: 'then'`, of what an earlier change sent (a
 * cancellation asked again): "The cancellation was sent then to the number ending 3456 and by e-mail."
 * An e-mail is never said by its address, not even its domain: whoever gave it wrote that text, and
 * what is said aloud quotes none (design.md 9.1; `sent_to` carries the domain as data).
 */
export function sentSentence(
  notices: readonly OutboxNotice[],
  options: { brief?: boolean | 'then' } = {},
): string {
  const first = notices[0];
  if (!first) return '';
  const where = notices
    .map((n, i) =>
      n.channel === 'email'
        ? `${i === 0 ? '' : 'and '}by e-mail`
        : `${i === 0 ? '' : 'and '}to ${maskedRecipient(n.channel, n.to)}`,
    )
    .join(' ');
  if (options.brief === 'then') return `The ${SENT_BRIEF[first.kind].toLowerCase()} was sent then ${where}.`;
  return options.brief
    ? `${SENT_BRIEF[first.kind]} sent ${where}.`
    : `I've sent ${SENT_WHAT[first.kind]} ${where}.`;
}

// GSM 03.38: the characters an SMS carries in 7 bits; the extension table's cost two.
const GSM_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const GSM_EXTENDED = '^{}\\[~]|€\f';

/** Whether `char` is in the SMS alphabet (GSM 03.38, its extension table included). */
function inGsmAlphabet(char: string): boolean {
  return GSM_BASIC.includes(char) || GSM_EXTENDED.includes(char);
}

/**
 * Typographic punctuation (what word processors and phones type for ' " - and ...) as the SMS
 * alphabet's own, which reads the same.
 */
const PLAIN_PUNCTUATION: Record<string, string> = {
  '\u2018': "'",
  '\u2019': "'",
  '\u201a': "'",
  '\u201b': "'",
  '\u2032': "'",
  '\u02bc': "'",
  '\u201c': '"',
  '\u201d': '"',
  '\u201e': '"',
  '\u2033': '"',
  '\u2010': '-',
  '\u2011': '-',
  '\u2012': '-',
  '\u2013': '-',
  '\u2014': '-',
  '\u2212': '-',
  '\u2026': '...',
  '\u00a0': ' ',
  '\u202f': ' ',
};

/**
 * `text` with each accented letter the SMS alphabet lacks written as its bare letter ("août" as
 * "aout", "À" as "A", "Seán" as "Sean") and typographic punctuation as plain ("Men’s" as "Men's"): one
 * such character makes the whole SMS UCS-2, 67 characters a part instead of 153. Anything else
 * outside the alphabet (another script, an emoji) stays as it is.
 */
export function toSmsAlphabet(text: string): string {
  let folded = '';
  for (const char of text) {
    if (inGsmAlphabet(char)) {
      folded += char;
      continue;
    }
    const plain = PLAIN_PUNCTUATION[char];
    if (plain !== undefined) {
      folded += plain;
      continue;
    }
    const bare = char.normalize('NFD').replace(/\p{M}/gu, '');
    folded += bare !== '' && [...bare].every(inGsmAlphabet) ? bare : char;
  }
  return folded;
}

/** How many SMS segments `text` takes: GSM-7 160/153 per part, otherwise UCS-2 70/67 (UTF-16 units). */
export function smsSegments(text: string): number {
  let septets = 0;
  let gsm = true;
  for (const char of text) {
    if (GSM_BASIC.includes(char)) septets += 1;
    else if (GSM_EXTENDED.includes(char)) septets += 2;
    else {
      gsm = false;
      break;
    }
  }
  if (gsm) return septets <= 160 ? 1 : Math.ceil(septets / 153);
  return text.length <= 70 ? 1 : Math.ceil(text.length / 67);
}

/** The most segments a message may take: two, so it stays one message on every phone and cheap. */
export const MAX_SMS_SEGMENTS = 2;
