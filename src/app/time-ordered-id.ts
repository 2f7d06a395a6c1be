import { randomUUID } from 'node:crypto';
import { systemClock } from './clock.ts';

/**
 * A UUID version 7 (RFC 9562): the milliseconds of the system clock, then the 74 random bits of a
 * version 4 UUID from node:crypto (its variant kept). Rows keyed by ids that follow time land at the
 * end of their indexes, not on a random page of each: with random ids, every commit of the booking's
 * hot path rewrote a page of the bookings' primary key, and one of each index that leads with the
 * booking's id (its services, events and messages), per booking (bench `outbox`, `bookings-endpoint`).
 * The system clock on purpose, not the injected one: the order only has to follow real time, and
 * nothing reads the time back (a row's own times come from the Clock). Unique as any UUID: the random
 * bits are.
 */
export function timeOrderedId(): string {
  const random = randomUUID();
  const time = systemClock.nowMs().toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8)}-7${random.slice(15)}`;
}
