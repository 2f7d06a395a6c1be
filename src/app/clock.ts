import { DateTime } from 'luxon';

/** The only source of "now". Domain code never reads the clock; services receive one of these. */
export interface Clock {
  now(): DateTime;
  /** The same instant as now(), in epoch milliseconds, without building a DateTime (hot paths). */
  nowMs(): number;
}

export const systemClock: Clock = { now: () => DateTime.utc(), nowMs: () => Date.now() };

/** A clock that stays where it is put, for tests and benchmarks with fixed dates. */
export class ManualClock implements Clock {
  #now: DateTime;

  constructor(start: DateTime | string) {
    this.#now = typeof start === 'string' ? DateTime.fromISO(start, { setZone: true }) : start;
    if (!this.#now.isValid) throw new Error(`Invalid clock start: ${String(start)}`);
  }

  now(): DateTime {
    return this.#now;
  }

  nowMs(): number {
    return this.#now.toMillis();
  }

  set(to: DateTime | string): void {
    this.#now = typeof to === 'string' ? DateTime.fromISO(to, { setZone: true }) : to;
  }

  advance(duration: {
    milliseconds?: number;
    seconds?: number;
    minutes?: number;
    hours?: number;
    days?: number;
  }): void {
    this.#now = this.#now.plus(duration);
  }
}
