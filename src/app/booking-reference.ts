import { randomInt } from 'node:crypto';
import { referenceFrom } from '../domain/booking/reference.ts';

/** A new random reference for the organisation's prefix, drawn from a secure random source. */
export function generateReference(prefix: string, pick: (n: number) => number = randomInt): string {
  return referenceFrom(prefix, pick);
}
