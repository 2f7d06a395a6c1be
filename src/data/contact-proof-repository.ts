import type { Selectable, Updateable } from 'kysely';
import type { Db } from './database.ts';
import type { ContactProofsTable } from './tables.ts';

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

/** Public bookings made since `since` that gave this phone or e-mail. */
export async function countPublicBookingsSince(
  db: Db,
  organisationId: string,
  contact: ContactKeys,
  since: number,
): Promise<number> {
  let most = 0;
  for (const column of ['phone', 'email'] as const) {
    const value = contact[column];
    if (value === null) continue;
    const row = await db
      .selectFrom('contact_proofs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('organisation_id', '=', organisationId)
      .where(column, '=', value)
      .where('created_at', '>', since)
      .executeTakeFirstOrThrow();
    most = Math.max(most, Number(row.n));
  }
  return most;
}

/**
 * Public bookings that gave this phone or e-mail and are still unconfirmed holds (pending, not lapsed
 * as of `now`).
 */
export async function countLivePublicHolds(
  db: Db,
  organisationId: string,
  contact: ContactKeys,
  now: number,
): Promise<number> {
  let most = 0;
  for (const column of ['phone', 'email'] as const) {
    const value = contact[column];
    if (value === null) continue;
    const row = await db
      .selectFrom('contact_proofs as p')
      .innerJoin('bookings as b', (join) =>
        join.onRef('b.organisation_id', '=', 'p.organisation_id').onRef('b.id', '=', 'p.booking_id'),
      )
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('p.organisation_id', '=', organisationId)
      .where(`p.${column}`, '=', value)
      .where('b.status', 'in', ['pending_payment', 'pending_confirmation'])
      .where('b.hold_expires_at', '>', now)
      .executeTakeFirstOrThrow();
    most = Math.max(most, Number(row.n));
  }
  return most;
}
