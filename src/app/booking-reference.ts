import { randomInt } from 'node:crypto';
import { existingReferences } from '../data/booking-repository.ts';
import type { Db } from '../data/database.ts';
import { findOrganisationById } from '../data/organisation-repository.ts';
import { bookingTurn, takeTurn } from '../data/write-locks.ts';
import { referenceFrom, referenceReadings } from '../domain/booking/reference.ts';

/** A new random reference for the organisation's prefix, drawn from a secure random source. */
export function generateReference(prefix: string, pick: (n: number) => number = randomInt): string {
  return referenceFrom(prefix, pick);
}

/**
 * The stored form (`PREFIX-CODE`) of a reference as a caller gave it (see referenceReadings); a bare
 * code takes the organisation's prefix, read only then. When the input reads more than one way (a
 * prefix GOLF, also the letter G said as a word), the first reading the organisation has a booking
 * with, else the usual reading.
 */
export async function canonicalReference(db: Db, organisationId: string, input: string): Promise<string> {
  const readings = referenceReadings(input);
  let ownPrefix: Promise<string> | undefined;
  const stored = await Promise.all(
    readings.map(async ({ prefix, code }) => {
      if (prefix !== null) return `${prefix}-${code}`;
      ownPrefix ??= findOrganisationById(db, organisationId).then((o) => o?.booking_reference_prefix ?? '');
      return `${await ownPrefix}-${code}`;
    }),
  );
  if (stored.length === 1) return stored[0]!;
  const existing = new Set(await existingReferences(db, organisationId, stored));
  return stored.find((reference) => existing.has(reference)) ?? stored[0]!;
}

/**
 * Takes the booking's turn (write-locks.ts), held to the end of the transaction: every change of one
 * booking (cancellations, moves, payments, staff actions, fees) starts from the outcome of the one
 * before it on PostgreSQL, not from what both read.
 */
export async function takeBookingTurn(trx: Db, organisationId: string, reference: string): Promise<void> {
  await takeTurn(trx, bookingTurn(organisationId, await canonicalReference(trx, organisationId, reference)));
}
