import { sql } from 'kysely';
import { inboxOfEmail } from '../domain/public-booking-policy.ts';
import { type Db, dialectOf } from './database.ts';

/**
 * Makes writers that must see each other's work take turns, inside their transaction, until it ends.
 *
 * On SQLite there is one writer at a time already (BEGIN IMMEDIATE, and group commit runs units one
 * after another), so this costs nothing. On PostgreSQL several instances write at once, each in its
 * own transaction, and under READ COMMITTED one does not see another's uncommitted rows: two
 * bookings at one location could both pass the availability re-check, and two retries with one
 * Idempotency-Key could both find no stored response. A transaction-scoped advisory lock on the
 * shared key makes the second wait until the first commits; its next statement then sees what the
 * first wrote. Keys are taken in one order (an idempotency key or a booking, then a location), so
 * they cannot deadlock.
 */
export async function takeTurn(trx: Db, key: string): Promise<void> {
  if (dialectOf(trx) !== 'postgres') return;
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
}

/** The turn of every write that can change which slots of a location's staff are free. */
export const bookingsAt = (locationId: string) => `bookings-at:${locationId}`;

/** The turn of every change to one booking (reschedule, cancel), so each starts from its last status. */
export const bookingTurn = (organisationId: string, reference: string) =>
  `booking:${organisationId}:${reference}`;

/**
 * The turn of a public booking's contact proof (a code entered, the link followed, a new code): one at
 * a time, so concurrent guesses each count against the code's tries.
 */
export const contactProofTurn = (organisationId: string, bookingId: string) =>
  `contact-proof:${organisationId}:${bookingId}`;

/**
 * The turns of registering a client with this phone and e-mail, in one sorted order so that two
 * registrations sharing one of them cannot deadlock.
 */
export const clientContactTurns = (
  organisationId: string,
  contact: { phone: string | null; email: string | null },
) =>
  [
    contact.phone === null ? null : `client-phone:${organisationId}:${contact.phone}`,
    contact.email === null ? null : `client-email:${organisationId}:${contact.email}`,
  ]
    .filter((turn): turn is string => turn !== null)
    .sort();

/**
 * The turns of a public booking's contact: its own, and its e-mail's inbox's (inboxOfEmail), so that
 * two spellings of one Gmail inbox sent at once take turns too and neither slips past the caps.
 */
export const publicContactTurns = (
  organisationId: string,
  contact: { phone: string | null; email: string | null },
) => {
  const inbox = contact.email === null ? null : inboxOfEmail(contact.email);
  const inboxTurns = inbox === null ? [] : clientContactTurns(organisationId, { phone: null, email: inbox });
  return [...new Set([...clientContactTurns(organisationId, contact), ...inboxTurns])].sort();
};

/** The turn of every catalogue import, whichever organisation's (imports are rare and whole). */
export const CATALOGUE_IMPORT_TURN = 'catalogue-import';

/** The turn of the requests that share one Idempotency-Key. */
export const idempotencyKeyTurn = (organisationId: string, key: string) =>
  `idempotency:${organisationId}:${key}`;

/** The turn of one client's joining of one location's waitlist: one entry per services, not two. */
export const waitlistTurn = (organisationId: string, locationId: string, clientId: string) =>
  `waitlist:${organisationId}:${locationId}:${clientId}`;

/** The turn of adding an organisation's webhook endpoints: each counts the others before its own. */
export const webhookEndpointsTurn = (organisationId: string) => `webhook-endpoints:${organisationId}`;
