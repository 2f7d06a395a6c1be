import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import {
  findBookingById,
  findBookingsOfSeries,
  findSeriesRule,
  updateBooking,
} from '../data/booking-repository.ts';
import {
  type ContactProofRow,
  findProofByTokenHash,
  findProofHolding,
  findProofWithBooking,
  type ProofWithBooking,
  updateProof,
} from '../data/contact-proof-repository.ts';
import type { Db } from '../data/database.ts';
import { dropPendingMessages, insertOutboxMessages } from '../data/outbox-repository.ts';
import type { ContactProofsTable } from '../data/tables.ts';
import { contactProofTurn, takeTurn } from '../data/write-locks.ts';
import { writeTransaction } from '../data/write-transaction.ts';
import type { Booking } from '../domain/booking/booking.ts';
import { type BookingStatus, effectiveStatus, whatBecameOf } from '../domain/booking/state-machine.ts';
import { AppError } from '../domain/errors.ts';
import type { OutboxNotice, SeriesNote } from '../domain/outbox.ts';
import {
  CODE_DIGITS,
  CODE_TRIES,
  CODE_VALID_MS,
  CONTACT_VERIFICATION,
  codeState,
  readCode,
} from '../domain/public-booking-policy.ts';
import { settleRequirement } from './booking-requirements.ts';
import { adoptProvenClient } from './client-service.ts';
import { announceChange, verificationCodeMessage } from './outbox-service.ts';
import { type ResendLimiter, withResend } from './resend-limit.ts';
import { otherStaffOf } from './series-note.ts';

/**
 * Proving the contact a public-page booking gave (design.md 9.1): a 6-digit code and a link are sent
 * there (the outbox's verification_code message), the code valid for 10 minutes and 5 wrong tries;
 * either proves it. Only hashes are stored with the proof; the secrets travel in the message alone.
 * Once proven, the booking moves to the client on file with that contact, if there is one, and its
 * hold goes on as any other (booking-requirements.ts): confirmed when nothing else is due.
 */

/** Where a verification message's link leads: the page that confirms with a button, not on sight. */
export function proofLinkPath(token: string): string {
  return `/p/verify/${encodeURIComponent(token)}`;
}

/** The secrets a new proof sends, and the hashes it keeps. */
interface Secrets {
  code: string;
  token: string;
}

function newSecrets(): Secrets {
  return {
    code: String(randomInt(0, 10 ** CODE_DIGITS)).padStart(CODE_DIGITS, '0'),
    token: randomBytes(32).toString('base64url'),
  };
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The code's hash is keyed by its booking, so one code's hash says nothing of another booking's. */
function codeHash(bookingId: string, code: string): string {
  return sha256(`${bookingId}:${code}`);
}

/** The secrets in a pending verification message's body (outbox-delivery renders them), or null. */
export function proofSecretsOf(body: string | null): Secrets | null {
  try {
    const parsed = JSON.parse(body ?? '') as Partial<Secrets>;
    return typeof parsed.code === 'string' && typeof parsed.token === 'string'
      ? { code: parsed.code, token: parsed.token }
      : null;
  } catch {
    return null;
  }
}

/**
 * A verification message's body until it is rendered: its secrets, and the note of the series it
 * confirms, first (seriesNoteOf reads it there), so that the message names the later visits too.
 */
function codeMessageBody(secrets: Secrets, series: SeriesNote | undefined): string {
  return JSON.stringify(series && series.following > 0 ? { series, ...secrets } : secrets);
}

/** A public booking's contact: what was typed, and where its proof goes (proofChannel). */
export interface PublicContact {
  phone: string | null;
  email: string | null;
  proof: { channel: 'sms' | 'email'; to: string };
}

/**
 * The rows a public booking writes with itself (createBooking's `publicContact`): its contact_proofs
 * row and, when a proof is asked, the verification message, in the booking's own statement.
 */
export function publicContactRows(
  target: { organisationId: string; bookingId: string; reference: string },
  contact: PublicContact,
  askProof: boolean,
  now: number,
  /** The note of the series whose first visit this is: the code's message names the visits it confirms. */
  series?: SeriesNote,
): { proof: ContactProofsTable; message: ReturnType<typeof verificationCodeMessage> | null } {
  const secrets = askProof ? newSecrets() : null;
  return {
    proof: {
      organisation_id: target.organisationId,
      booking_id: target.bookingId,
      phone: contact.phone,
      email: contact.email,
      channel: contact.proof.channel,
      code_hash: secrets && codeHash(target.bookingId, secrets.code),
      token_hash: secrets && sha256(secrets.token),
      code_expires_at: secrets && now + CODE_VALID_MS,
      tries: 0,
      proven_at: null,
      created_at: now,
    },
    message: secrets && verificationCodeMessage(target, contact.proof, codeMessageBody(secrets, series), now),
  };
}

/** What entering a code did. */
export type CodeOutcome =
  | { proven: true }
  | { proven: false; reason: 'wrong'; triesLeft: number }
  | { proven: false; reason: 'expired' | 'spent' }
  /** Not six digits (one short, one too many, letters): no code could match it, so no try is counted. */
  | { proven: false; reason: 'unreadable' };

/** The booking of a page (its id and organisation), as the booking page knows it. */
export interface BookingKey {
  organisationId: string;
  bookingId: string;
}

/**
 * The customer typed `typed` on the booking's page. A right code proves the contact; a wrong one is
 * counted (and stays counted: the count is written even though the answer is a refusal), and the
 * fifth wrong try spends the code; what is not six digits is refused uncounted. 409 conflict when the booking is not waiting for a proof.
 */
export async function proveByCode(
  db: Db,
  booking: BookingKey,
  typed: string,
  now: number,
): Promise<CodeOutcome> {
  const code = readCode(typed);
  const key = await proofHolder(db, booking);
  const outcome = await writeTransaction(db, async (trx): Promise<CodeOutcome> => {
    const proof = await waitingProof(trx, key, now);
    const state = codeState(proofClock(proof), now);
    if (state === 'proven') return { proven: true };
    if (state !== 'usable') return { proven: false, reason: state };
    // A slip of the thumb on a phone, not a guess: it could match no code, so it tells a guesser nothing.
    if (code === undefined) return { proven: false, reason: 'unreadable' };
    if (proof.code_hash !== null && sameHash(proof.code_hash, codeHash(key.bookingId, code))) {
      await markProven(trx, proof, now);
      return { proven: true };
    }
    const tries = proof.tries + 1;
    await updateProof(trx, key.organisationId, key.bookingId, { tries });
    return tries >= CODE_TRIES
      ? { proven: false, reason: 'spent' }
      : { proven: false, reason: 'wrong', triesLeft: CODE_TRIES - tries };
  });
  return outcome;
}

/**
 * The link of a verification message was followed and confirmed: proves the contact (within the
 * code's 10 minutes). The booking's page token, for the customer to go on there. 404 for a token that
 * is no proof's; 409 when it has lapsed or the booking is not waiting any more.
 */
export async function proveByLink(db: Db, token: string, now: number): Promise<BookingKey> {
  return writeTransaction(db, async (trx) => {
    const found = TOKEN.test(token) ? await findProofByTokenHash(trx, sha256(token)) : undefined;
    if (!found) throw new AppError('not_found', LINK_UNKNOWN);
    const key = { organisationId: found.organisation_id, bookingId: found.booking_id };
    const proof = await waitingProof(trx, key, now);
    const state = codeState({ ...proofClock(proof), tries: 0 }, now);
    if (state === 'expired') {
      throw new AppError('conflict', LINK_EXPIRED, 'token');
    }
    if (state !== 'proven') await markProven(trx, proof, now);
    return key;
  });
}

/**
 * What a verification link is now, read without changing anything (its page opened: mail scanners
 * open links too, so opening one spends nothing): `usable` to confirm with the button; `proven` when
 * it was used already; `expired` past its code's 10 minutes; `lapsed` when its booking is no longer a
 * live hold (`words` say which); `unknown` for a token that is no proof's (replaced by a newer code,
 * or never one).
 */
export type LinkState =
  | { state: 'unknown' }
  | { state: 'usable' | 'proven' | 'expired'; key: BookingKey }
  | { state: 'lapsed'; key: BookingKey; status: string; words: string };

export async function linkState(db: Db, token: string, now: number): Promise<LinkState> {
  const found = TOKEN.test(token) ? await findProofByTokenHash(db, sha256(token)) : undefined;
  if (!found || found.code_hash === null) return { state: 'unknown' };
  const key = { organisationId: found.organisation_id, bookingId: found.booking_id };
  const proof = await findProofWithBooking(db, key.organisationId, key.bookingId);
  if (!proof) return { state: 'unknown' };
  if (proof.proven_at !== null) return { state: 'proven', key };
  const status = liveStatus(proof, now);
  if (status !== 'pending_confirmation') return { state: 'lapsed', key, status, words: notLiveWords(status) };
  const state = codeState({ ...proofClock(proof), tries: 0 }, now);
  return { state: state === 'expired' ? 'expired' : 'usable', key };
}

/** What the booking's page shows of a proof: where it went, whether it is done. */
export interface ProofView {
  /** The booking that holds it: this one, or its series' first visit (one code for every visit). */
  bookingId: string;
  channel: 'sms' | 'email';
  to: string;
  proven: boolean;
  state: ReturnType<typeof codeState>;
  /** Wrong tries the current code has left (CODE_TRIES when none was made since it was sent). */
  triesLeft: number;
}

export async function proofOfBooking(db: Db, booking: BookingKey, now: number): Promise<ProofView | null> {
  const proof = await findProofHolding(db, booking.organisationId, booking.bookingId);
  if (!proof || proof.code_hash === null) return null;
  return {
    ...proofRecipient(proof),
    bookingId: proof.booking_id,
    proven: proof.proven_at !== null,
    state: codeState(proofClock(proof), now),
    triesLeft: Math.max(0, CODE_TRIES - proof.tries),
  };
}

/**
 * Sends a new code and link (the old ones stop working), at most RESENDS_PER_HOUR times an hour per
 * booking together with send_link (resend-limit.ts). Where it went.
 */
export async function resendCode(
  db: Db,
  limiter: ResendLimiter,
  booking: BookingKey,
  now: number,
): Promise<OutboxNotice> {
  const key = await proofHolder(db, booking);
  return withResend(limiter, key, now, () => sendNewCode(db, key, now));
}

/**
 * The booking whose proof proves `booking`'s contact: its own, or for a later visit of a series booked
 * on the public page, its first visit's, whose one code and link confirm every visit
 * (proveLaterVisits). `booking` itself where there is none (refused as not waiting, waitingProof).
 */
async function proofHolder(db: Db, booking: BookingKey): Promise<BookingKey> {
  const proof = await findProofHolding(db, booking.organisationId, booking.bookingId);
  return proof ? { organisationId: booking.organisationId, bookingId: proof.booking_id } : booking;
}

function sendNewCode(db: Db, key: BookingKey, now: number): Promise<OutboxNotice> {
  return writeTransaction(db, async (trx) => {
    const proof = await waitingProof(trx, key, now);
    if (proof.proven_at !== null)
      throw new AppError('conflict', 'This booking’s contact is confirmed already.');
    const secrets = newSecrets();
    await updateProof(trx, key.organisationId, key.bookingId, {
      code_hash: codeHash(key.bookingId, secrets.code),
      token_hash: sha256(secrets.token),
      code_expires_at: now + CODE_VALID_MS,
      tries: 0,
    });
    await dropPendingMessages(trx, key.organisationId, key.bookingId, now, ['verification_code']);
    const recipient = proofRecipient(proof);
    // The later visits the code still confirms: held for it, not cancelled or lapsed since.
    const series = await seriesNote(
      trx,
      key,
      (visit) =>
        visit.pendingRequirements.includes(CONTACT_VERIFICATION) &&
        effectiveStatus(visit, now) === 'pending_confirmation',
    );
    await insertOutboxMessages(trx, [
      verificationCodeMessage(
        { ...key, reference: proof.reference },
        recipient,
        codeMessageBody(secrets, series),
        now,
      ),
    ]);
    return { kind: 'verification_code', ...recipient };
  });
}

/** A link that is no proof's (any more: a newer code replaces it). */
export const LINK_UNKNOWN = 'This link is not valid; use the latest message we sent.';
/** A link past its code's 10 minutes, its booking still waiting. */
export const LINK_EXPIRED = 'This link has expired. Open your booking page and ask for a new code.';

/** A link token is 43 base64url characters; anything else is not looked up. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** Where a proof goes: the phone by SMS, or the e-mail (the table's check keeps the one it names). */
function proofRecipient(proof: ContactProofRow): { channel: 'sms' | 'email'; to: string } {
  return { channel: proof.channel, to: proof.channel === 'sms' ? proof.phone! : proof.email! };
}

function proofClock(proof: ContactProofRow) {
  return { codeExpiresAt: proof.code_expires_at, tries: proof.tries, provenAt: proof.proven_at };
}

function sameHash(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

/**
 * The proof of a booking that is waiting for it, read under the proof's turn (the caller's transaction
 * holds it to its end, so concurrent tries are counted one after another): 409 conflict when the booking has no proof to give
 * (not a public booking, or its policy asked none) or is no longer a live hold (lapsed, cancelled).
 */
async function waitingProof(trx: Db, key: BookingKey, now: number): Promise<ProofWithBooking> {
  await takeTurn(trx, contactProofTurn(key.organisationId, key.bookingId));
  const proof = await findProofWithBooking(trx, key.organisationId, key.bookingId);
  if (!proof || proof.code_hash === null) {
    throw new AppError('conflict', 'This booking is not waiting for a code.');
  }
  if (proof.proven_at !== null) return proof;
  const status = liveStatus(proof, now);
  if (status !== 'pending_confirmation') throw new AppError('conflict', notLiveWords(status));
  return proof;
}

function liveStatus(proof: ProofWithBooking, now: number): BookingStatus {
  return effectiveStatus(
    { status: proof.status, startsAt: proof.starts_at, holdExpiresAt: proof.hold_expires_at },
    now,
  );
}

/** Why a booking no longer live (lapsed, cancelled) has nothing to confirm. */
function notLiveWords(status: BookingStatus): string {
  return status === 'expired'
    ? 'This booking was not confirmed in time and its time was released; please book again.'
    : `This booking ${whatBecameOf(status)}; there is nothing to confirm.`;
}

/**
 * The later visits of a series booked on the public page waited for the contact its first visit has
 * just proven: they go to the client on file with it, and each is settled (confirmed when that was its
 * last step) without a confirmation of its own; a visit with a step left (a deposit, a card) gets its
 * page's link, as the first does.
 */
async function proveLaterVisits(
  trx: Db,
  key: BookingKey,
  clientId: string,
  now: number,
): Promise<SeriesNote | undefined> {
  const first = await findBookingById(trx, key.organisationId, key.bookingId);
  if (!first?.seriesId) return undefined;
  const confirmed: { startsAt: number; staffId: string }[] = [];
  for (const visit of await findBookingsOfSeries(trx, key.organisationId, first.seriesId)) {
    if (visit.id === first.id || !visit.pendingRequirements.includes(CONTACT_VERIFICATION)) continue;
    if (visit.clientId !== clientId) {
      await updateBooking(trx, key.organisationId, visit.id, { client_id: clientId, updated_at: now });
    }
    const target = { organisationId: key.organisationId, bookingId: visit.id };
    const settled = await settleRequirement(trx, target, CONTACT_VERIFICATION, {}, now, 'page:customer', {
      silent: true,
    });
    if (settled === 'confirmed') confirmed.push(visit);
    // A step left (a deposit, a card): the visit's own page link, as the first visit gets.
    if (settled === 'outstanding') {
      await announceChange(
        trx,
        key.organisationId,
        visit.id,
        { kind: 'booking_page_link', drop: ['booking_page_link'], remind: false },
        now,
      );
    }
  }
  return seriesNoteOfVisits(trx, first, confirmed);
}

/**
 * The note of the series whose first visit is `key`'s, for its later visits that `counts` keeps (a
 * new code's message: those still waiting for the code); undefined for a booking of no series.
 */
async function seriesNote(
  trx: Db,
  key: BookingKey,
  counts: (visit: Booking) => boolean,
): Promise<SeriesNote | undefined> {
  const first = await findBookingById(trx, key.organisationId, key.bookingId);
  if (!first?.seriesId) return undefined;
  const visits = await findBookingsOfSeries(trx, key.organisationId, first.seriesId);
  return seriesNoteOfVisits(
    trx,
    first,
    visits.filter((visit) => visit.id !== first.id && counts(visit)),
  );
}

/** What a message of a series' first visit says of `later` ones: how many, how often, the last, with whom. */
async function seriesNoteOfVisits(
  trx: Db,
  first: Booking,
  later: readonly { startsAt: number; staffId: string }[],
): Promise<SeriesNote | undefined> {
  const rule = first.seriesId && (await findSeriesRule(trx, first.organisationId, first.seriesId));
  if (!rule) return undefined;
  return {
    following: later.length,
    everyWeeks: rule.everyWeeks,
    lastStartsAt: later.at(-1)?.startsAt,
    otherStaff: await otherStaffOf(trx, first.organisationId, first.staffId, later),
  };
}

/**
 * The contact is proven: the booking goes to the client on file with that contact (or its own record
 * goes on file: adoptProvenClient), the step is settled (confirmed when it was the last), and the
 * customer is sent what comes next: the confirmation, or the booking page's link for the steps left.
 */
async function markProven(trx: Db, proof: ProofWithBooking, now: number): Promise<void> {
  const key = { organisationId: proof.organisation_id, bookingId: proof.booking_id };
  await updateProof(trx, key.organisationId, key.bookingId, { proven_at: now });
  const { channel, to } = proofRecipient(proof);
  const proven = { channel, contact: to };
  const adopted = await adoptProvenClient(trx, key.organisationId, proof.client_id, proven, now);
  // Before the unproven record is let go: the later visits of a series still name it.
  const series = await proveLaterVisits(trx, key, adopted.clientId, now);
  if (adopted.clientId !== proof.client_id) {
    await updateBooking(trx, key.organisationId, key.bookingId, {
      client_id: adopted.clientId,
      updated_at: now,
    });
    await adopted.release();
  }
  await dropPendingMessages(trx, key.organisationId, key.bookingId, now, ['verification_code']);
  const settled = await settleRequirement(trx, key, CONTACT_VERIFICATION, {}, now, 'page:customer', {
    series,
  });
  if (settled === 'not_held') {
    // Read live under the proof's turn, but another instance's sweeper (its clock a little ahead) may
    // have expired the hold since: refused as it is now, as a code typed after it is, nothing proven.
    const after = await findProofWithBooking(trx, key.organisationId, key.bookingId);
    const status = after ? liveStatus(after, now) : 'expired';
    if (status !== 'pending_confirmation') throw new AppError('conflict', notLiveWords(status));
  }
  if (settled === 'outstanding') {
    await announceChange(
      trx,
      key.organisationId,
      key.bookingId,
      { kind: 'booking_page_link', drop: ['booking_page_link'], remind: false },
      now,
    );
  }
}
