import { randomUUID } from 'node:crypto';
import { systemClock } from './clock.ts';

/** RFC 9562's rand_a: the 12 bits after the version, here a counter within one millisecond. */
const COUNTER_LIMIT = 0x1000;

let lastMs = -1;
let counter = 0;

/**
 * A UUID version 7 (RFC 9562): the milliseconds of the system clock, a counter of the ids this
 * process made in that millisecond (RFC 9562's method 1, in rand_a), then the 62 random bits of a
 * version 4 UUID from node:crypto (its variant kept). Rows keyed by ids that follow time land at the
 * end of their indexes, not on a random page of each: with random ids, every commit of the booking's
 * hot path rewrote a page of the bookings' primary key, and one of each index that leads with the
 * booking's id (its services, events and messages), per booking (bench `outbox`, `bookings-endpoint`).
 * The counter makes the ids of one process strictly increasing, so rows that tie on their own time
 * (two waitlist entries joined in one millisecond, or under a stopped clock) keep the order they were
 * made in where a list orders them by time, then id. When the clock steps back, or 4,096 ids are made
 * in one millisecond, the ids go on from the last one's millisecond, never below it.
 * The system clock on purpose, not the injected one: the order only has to follow real time, and
 * nothing reads the time back (a row's own times come from the Clock). Unique as any UUID: the random
 * bits are.
 */
export function timeOrderedId(): string {
  const now = systemClock.nowMs();
  if (now > lastMs) {
    lastMs = now;
    counter = 0;
  } else if (++counter === COUNTER_LIMIT) {
    lastMs += 1;
    counter = 0;
  }
  const random = randomUUID();
  const time = lastMs.toString(16).padStart(12, '0');
  const sequence = counter.toString(16).padStart(3, '0');
  return `${time.slice(0, 8)}-${time.slice(8)}-7${sequence}${random.slice(18)}`;
}
