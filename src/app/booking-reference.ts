import { randomInt } from 'node:crypto';
import type { Db } from '../data/database.ts';
import { findOrganisationById } from '../data/organisation-repository.ts';
import { bookingTurn, takeTurn } from '../data/write-locks.ts';
import { readReference, referenceFrom } from '../domain/booking/reference.ts';

/** A new random reference for the organisation's prefix, drawn from a secure random source. */
export function generateReference(prefix: string, pick: (n: number) => number = randomInt): string {
  return referenceFrom(prefix, pick);
}

/**
 * The stored form (`PREFIX-CODE`) of a reference as a caller gave it (see readReference); a bare code
 * takes the organisation's prefix, read only then.
 */
export async function canonicalReference(db: Db, organisationId: string, input: string): Promise<string> {
  const { prefix, code } = readReference(input);
  if (prefix !== null) return `${prefix}-${code}`;
  const organisation = await findOrganisationById(db, organisationId);
  return `${organisation?.booking_reference_prefix ?? ''}-${code}`;
}

/**
 * Takes the booking's turn (write-locks.ts), held to the end of the transaction: every change of one
 * booking (cancellations, moves, payments, staff actions, fees) starts from the outcome of the one
 * before it on PostgreSQL, not from what both read.
 */
export async function takeBookingTurn(trx: Db, organisationId: string, reference: string): Promise<void> {
  await takeTurn(trx, bookingTurn(organisationId, await canonicalReference(trx, organisationId, reference)));
}
