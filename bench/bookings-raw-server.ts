/**
 * The raw side of the bookings-endpoint benchmark: the rows a confirmed booking is made of, written
 * straight to SQLite with better-sqlite3, one BEGIN IMMEDIATE … COMMIT per booking (the bookings row,
 * its booking_services segment, its first booking_events entry). The database is built like the full
 * stack's (the project's migrations, so the same indexes, constraints and triggers; the same catalogue,
 * so the same foreign keys) and opened with the project's own pragmas (configureSqlite: WAL,
 * synchronous=FULL, foreign_keys, busy_timeout). No HTTP, no Kysely, no availability check.
 *
 * Runs as a child process (bench/lib/server-process.ts), so it has core 0 to itself like the server.
 * The parent drives it over a loopback HTTP endpoint, POST /insert, which runs one measuring loop
 * synchronously and answers with the per-booking times; the database and the position in the slot
 * sequence carry over from one loop to the next, as the full stack's do.
 */
import { rmSync } from 'node:fs';
import { timeOrderedId } from '../src/app/time-ordered-id.ts';
import { configureSqlite } from '../src/data/database.ts';
import { SqliteDatabase } from '../src/data/sqlite-driver.ts';
import { REFERENCE_ALPHABET } from '../src/domain/booking/reference.ts';
import {
  bookingSlot,
  createBookingsDatabase,
  SERVICE_MS,
  SERVICE_PRICE_MINOR,
} from './lib/bookings-database.ts';
import { serveFromChild } from './lib/child.ts';
import { listenForControl } from './lib/control-server.ts';

export interface RawInfo {
  origin: string;
}

/** One measuring loop: `count` bookings as fast as they go, or `rate` a second for `seconds`. */
export type RawRun = { count: number } | { rate: number; seconds: number };

export interface RawRunResult {
  /** Bookings written in this loop. */
  inserted: number;
  /** Wall time of the loop. */
  seconds: number;
  /**
   * Milliseconds per booking: BEGIN IMMEDIATE to COMMIT returned, or, at a fixed rate, from when the
   * booking was due to COMMIT returned (so falling behind counts, as in the paced HTTP load).
   */
  times: number[];
  /** Bookings in the table before and after the loop. */
  bookingsBefore: number;
  bookingsAfter: number;
}

serveFromChild<null, RawInfo>(async () => {
  const seeded = await createBookingsDatabase();
  // Only the migrated, seeded file is kept: the raw side talks to it through better-sqlite3 alone.
  await seeded.database.db.destroy();
  const sqlite = new SqliteDatabase(seeded.database.file);
  configureSqlite(sqlite);

  const begin = sqlite.prepare('begin immediate');
  const commit = sqlite.prepare('commit');
  const rollback = sqlite.prepare('rollback');
  const insertBooking = sqlite.prepare(
    `insert into bookings (id, organisation_id, reference, location_id, staff_id, client_id, status,
       starts_at, ends_at, blocked_until, currency, total_price_minor, deposit_minor, deposit_status, notes,
       hold_expires_at, pending_requirements, protection_applies, late_cancellation_fee_percentage,
       no_show_fee_percentage, protection_setup_status, payment_method_saved, protection_setup_completed_at,
       cancelled_at, cancel_reason, deposit_refunded, source, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, 'confirmed', ?, ?, ?, 'GBP', ?, null, 'not_required', null, null, null, 0, null,
       null, null, 0, null, null, null, null, 'api', ?, ?)`,
  );
  const insertSegment = sqlite.prepare(
    `insert into booking_services (organisation_id, booking_id, position, service_id, starts_at, ends_at,
       duration_minutes, buffer_after_minutes, price_minor, deposit_minor)
     values (?, ?, 0, ?, ?, ?, 15, 0, ?, null)`,
  );
  const insertEvent = sqlite.prepare(
    `insert into booking_events (organisation_id, booking_id, seq, from_status, to_status, actor, occurred_at, details)
     values (?, ?, 1, null, 'confirmed', ?, ?, null)`,
  );
  const countBookings = sqlite.prepare('select count(*) as n from bookings').pluck();

  const { organisationId, locationId, serviceId, clientId, staffIds, now } = seeded;
  const actor = `api_key:${seeded.apiKeyId}`;
  let next = 0;

  /** The next slot's booking, in one transaction; what createBooking writes for it, minus the checks. */
  const book = () => {
    const slot = bookingSlot(next);
    // Ids as createBooking makes them (time-ordered): the same rows, landing on the same index pages.
    const id = timeOrderedId();
    const endsAt = slot.startsAt + SERVICE_MS;
    begin.run();
    try {
      insertBooking.run(
        id,
        organisationId,
        reference(next),
        locationId,
        staffIds[slot.staff],
        clientId,
        slot.startsAt,
        endsAt,
        endsAt,
        SERVICE_PRICE_MINOR,
        now,
        now,
      );
      insertSegment.run(organisationId, id, serviceId, slot.startsAt, endsAt, SERVICE_PRICE_MINOR);
      insertEvent.run(organisationId, id, actor, now);
      commit.run();
    } catch (error) {
      rollback.run();
      throw error;
    }
    next += 1;
  };

  const run = (spec: RawRun): RawRunResult => {
    const bookingsBefore = countBookings.get() as number;
    const times: number[] = [];
    const start = performance.now();
    if ('count' in spec) {
      for (let i = 0; i < spec.count; i += 1) {
        const t0 = performance.now();
        book();
        times.push(performance.now() - t0);
      }
    } else {
      const total = Math.round(spec.rate * spec.seconds);
      for (let i = 0; i < total; i += 1) {
        const due = start + (i * 1000) / spec.rate;
        while (performance.now() < due) {
          // Busy-waits until the booking is due: this process has its core to itself.
        }
        book();
        times.push(performance.now() - due);
      }
    }
    const seconds = (performance.now() - start) / 1000;
    return {
      inserted: times.length,
      seconds,
      times,
      bookingsBefore,
      bookingsAfter: countBookings.get() as number,
    };
  };

  const control = await listenForControl((spec: unknown) => run(spec as RawRun));
  return {
    info: { origin: control.origin },
    close: async () => {
      await control.close();
      sqlite.close();
      rmSync(seeded.database.dir, { recursive: true, force: true });
    },
  };
});

/** A distinct reference per booking, in the booking reference format (`SS-` and 6 characters). */
function reference(n: number): string {
  let code = '';
  for (let i = 0; i < 6; i += 1) {
    code = REFERENCE_ALPHABET[n % REFERENCE_ALPHABET.length] + code;
    n = Math.floor(n / REFERENCE_ALPHABET.length);
  }
  return `SS-${code}`;
}
