/**
 * The rules of the public booking page (design.md 9.1): a booking made there without a key is a hold
 * until its customer proves the contact they gave, with a 6-digit code sent there (or the link in that
 * message), and strangers are capped per contact and per address. Pure: the numbers and decisions;
 * the service layer (src/app/public-booking.ts, contact-proof.ts) applies them.
 */

import type { OutboxChannel } from './outbox.ts';

/** `code`: a public booking waits for the contact's proof; `none`: it is booked unproven. */
export type PublicVerification = 'code' | 'none';

/** An organisation's settings for its public page (the catalogue's `policies`). */
export interface PublicBookingPolicy {
  verification: PublicVerification;
  /** Live public holds still waiting for their proof, per contact. */
  holdsPerContact: number;
  /** Bookings made on the public page per contact in any 24 hours. */
  bookingsPerContactPerDay: number;
  /** Booking attempts (form posts) per client address per hour. */
  attemptsPerAddressPerHour: number;
  /** Bookings made on the public page per hour, across every contact and address. */
  bookingsPerOrganisationPerHour: number;
  /** ISO 3166-1 codes texted besides the countries of the organisation's locations. */
  smsCountries: readonly string[];
}

/**
 * Whether caps of 0 leave the public page's forms nothing to take: no attempt, no hold or no booking a
 * day. A salon turns its online booking off so; its page says so rather than offer a form.
 */
export function takesNoPublicBookings(policy: PublicBookingPolicy): boolean {
  return (
    policy.attemptsPerAddressPerHour === 0 ||
    policy.holdsPerContact === 0 ||
    policy.bookingsPerOrganisationPerHour === 0 ||
    policy.bookingsPerContactPerDay === 0
  );
}

/** Why such a salon's page takes no booking. */
export const TAKES_NO_BOOKINGS = 'This salon takes no bookings on this page; call the salon to book.';

/** The pending requirement a public hold carries until its contact is proven. */
export const CONTACT_VERIFICATION = 'contact_verification';

/**
 * A public booking still waiting for its contact's proof: nothing but the proof (and cancelling) is
 * done with it before, whoever asks: no payment, no card, no move, no message but the code.
 */
export function awaitsContactProof(booking: { pendingRequirements: readonly string[] }): boolean {
  return booking.pendingRequirements.includes(CONTACT_VERIFICATION);
}

/** Why such a step is refused (409 conflict). */
export const AWAITING_PROOF =
  'This booking waits for its customer to confirm it with the code sent to them; that comes first.';

/** Digits in a code, how long one lasts and how many wrong tries it survives. */
export const CODE_DIGITS = 6;
export const CODE_VALID_MS = 10 * 60_000;
export const CODE_TRIES = 5;

/** Re-sends of a booking's link or code (MCP send_link, REST send-link, "send a new code") per hour. */
export const RESENDS_PER_HOUR = 3;
export const RESEND_WINDOW_MS = 3_600_000;
/** Moves of a booking from its own page per hour: each tells its contact (resend-limit.ts withPageMove). */
export const PAGE_MOVES_PER_HOUR = 3;

/**
 * Gmail's domains. Google delivers mail to every spelling of one address: dots anywhere in its name,
 * a `+tag` after it, and googlemail.com for gmail.com. A cap per e-mail address that took each spelling
 * for another contact would be sidestepped by a customer holding slot after slot with one inbox.
 */
export const GMAIL_DOMAINS: readonly string[] = ['gmail.com', 'googlemail.com'];

/**
 * The inbox a (lower-cased) e-mail address reaches, as the per-contact caps count it: without its
 * `+tag` (Outlook, iCloud, Fastmail, Proton and most others deliver `jo+1@` to `jo@`), and a Gmail
 * address without its dots too, at gmail.com (other providers read dots their own ways). Only counted
 * by: messages go to the address as typed.
 */
export function inboxOfEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at < 1) return email;
  const domain = email.slice(at + 1);
  const name = email.slice(0, at).split('+')[0]!;
  if (name === '') return email;
  if (!GMAIL_DOMAINS.includes(domain)) return `${name}@${domain}`;
  return `${name.replaceAll('.', '')}@${GMAIL_DOMAINS[0]}`;
}

/** The window of bookingsPerContactPerDay. */
export const CONTACT_DAY_MS = 86_400_000;

/** What becomes of a code entered now, before it is compared. */
export type CodeState = 'usable' | 'expired' | 'spent' | 'proven';

export function codeState(
  proof: { codeExpiresAt: number | null; tries: number; provenAt: number | null },
  now: number,
): CodeState {
  if (proof.provenAt !== null) return 'proven';
  if (proof.tries >= CODE_TRIES) return 'spent';
  if (proof.codeExpiresAt === null || proof.codeExpiresAt <= now) return 'expired';
  return 'usable';
}

/**
 * A code as a customer types it: spaces and dashes ignored, and digits of any script read as the
 * code's (a Japanese IME types full-width ones, an Arabic keyboard its own); undefined when it is not
 * 6 digits.
 */
export function readCode(typed: string): string | undefined {
  const digits = asciiDigits(typed).replace(/[\s-]/g, '');
  return new RegExp(`^\\d{${CODE_DIGITS}}$`).test(digits) ? digits : undefined;
}

/** Every decimal digit of `text`, whatever its script, as the ASCII digit of its value. */
export function asciiDigits(text: string): string {
  // NFKC: full-width and other compatibility digits (and dashes) become ASCII ones.
  return text.normalize('NFKC').replace(/\p{Nd}/gu, (digit) => {
    const at = digit.codePointAt(0)!;
    // Unicode keeps each script's digits together, 0 to 9 in order: the value is the distance from its 0.
    let zero = at;
    while (zero > 0 && /\p{Nd}/u.test(String.fromCodePoint(zero - 1))) zero--;
    return String((at - zero) % 10);
  });
}

/**
 * The given contacts a message can reach: the phone by SMS when it may be texted, the e-mail; each
 * only where its channel has a provider (`providers`), unless no channel has one (a server that only
 * logs its messages in the outbox: a demo, a test), where every channel counts as before.
 */
export function reachableContacts(
  contact: { phone: string | null; email: string | null; phoneTextable: boolean },
  providers: ReadonlySet<OutboxChannel>,
): { sms: string | null; email: string | null } {
  const carries = (channel: OutboxChannel) => providers.size === 0 || providers.has(channel);
  return {
    sms: contact.phone !== null && contact.phoneTextable && carries('sms') ? contact.phone : null,
    email: contact.email !== null && carries('email') ? contact.email : null,
  };
}

/**
 * Which of the given contacts the proof goes to: the phone by SMS when it may be texted, else the
 * e-mail, of those a message can reach (reachableContacts); null when neither can carry it.
 */
export function proofChannel(reachable: {
  sms: string | null;
  email: string | null;
}): { channel: OutboxChannel; to: string } | null {
  if (reachable.sms !== null) return { channel: 'sms', to: reachable.sms };
  if (reachable.email !== null) return { channel: 'email', to: reachable.email };
  return null;
}
