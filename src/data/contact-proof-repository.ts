import type { Selectable, Updateable } from 'kysely';
import type { Db } from './database.ts';
import type { BookingStatus, ContactProofsTable } from './tables.ts';

/** The contacts public-page bookings gave and their proofs (migration 0023). */

export type ContactProofRow = Selectable<ContactProofsTable>;

export async function findProofOfBooking(
  db: Db,
  organisationId: string,
  bookingId: string,
): Promise<ContactProofRow | undefined> {
  return db
    .selectFrom('contact_proofs')
    .selectAll()
    .where('organisation_id', '=', organisationId)
    .where('booking_id', '=', bookingId)
    .executeTakeFirst();
}

/** The proof whose link carries this token (by its hash): the link names no organisation. */
export async function findProofByTokenHash(db: Db, tokenHash: string): Promise<ContactProofRow | undefined> {
  return db.selectFrom('contact_proofs').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

export async function updateProof(
  db: Db,
  organisationId: string,
  bookingId: string,
  changes: Updateable<ContactProofsTable>,
): Promise<void> {
  await db
    .updateTable('contact_proofs')
    .set(changes)
    .where('organisation_id', '=', organisationId)
    .where('booking_id', '=', bookingId)
    .execute();
}

/** Where the caps look: public bookings that gave this phone or this e-mail. */
export interface ContactKeys {
  phone: string | null;
  email: string | null;
}

/** A proof with what its use cases need of its booking. */
export type ProofWithBooking = ContactProofRow & {
  reference: string;
  client_id: string;
  status: BookingStatus;
  starts_at: number;
  hold_expires_at: number | null;
};

export async function findProofWithBooking(
  db: Db,
  organisationId: string,
  bookingId: string,
): Promise<ProofWithBooking | undefined> {
  return db
    .selectFrom('contact_proofs as p')
    .innerJoin('bookings as b', (join) =>
      join.onRef('b.organisation_id', '=', 'p.organisation_id').onRef('b.id', '=', 'p.booking_id'),
    )
    .selectAll('p')
    .select(['b.reference', 'b.client_id', 'b.status', 'b.starts_at', 'b.hold_expires_at'])
    .where('p.organisation_id', '=', organisationId)
    .where('p.booking_id', '=', bookingId)
    .executeTakeFirst();
}

/** Public bookings made since `since` that gave this phone or e-mail (the larger of the two counts). */
export function countPublicBookingsSince(
  db: Db,
  organisationId: string,
  contact: ContactKeys,
  since: number,
): Promise<number> {
  return largestCount(contact, (column, value) =>
    db
      .selectFrom('contact_proofs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('organisation_id', '=', organisationId)
      .where(column, '=', value)
      .where('created_at', '>', since)
      .executeTakeFirstOrThrow(),
  );
}

/**
 * Public bookings that gave this phone or e-mail and are still unconfirmed holds (pending, not lapsed
 * as of `now`): the larger of the two counts.
 */
export function countLivePublicHolds(
  db: Db,
  organisationId: string,
  contact: ContactKeys,
  now: number,
): Promise<number> {
  return largestCount(contact, (column, value) =>
    db
      .selectFrom('contact_proofs as p')
      .innerJoin('bookings as b', (join) =>
        join.onRef('b.organisation_id', '=', 'p.organisation_id').onRef('b.id', '=', 'p.booking_id'),
      )
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('p.organisation_id', '=', organisationId)
      .where(`p.${column}`, '=', value)
      .where('b.status', 'in', ['pending_payment', 'pending_confirmation'])
      .where('b.hold_expires_at', '>', now)
      .executeTakeFirstOrThrow(),
  );
}

/** The larger of a count by the phone and a count by the e-mail (each only when given). */
async function largestCount(
  contact: ContactKeys,
  count: (column: 'phone' | 'email', value: string) => Promise<{ n: number | string | bigint }>,
): Promise<number> {
  let most = 0;
  for (const column of ['phone', 'email'] as const) {
    const value = contact[column];
    if (value !== null) most = Math.max(most, Number((await count(column, value)).n));
  }
  return most;
}
