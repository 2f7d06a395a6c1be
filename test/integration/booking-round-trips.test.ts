import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newBookingPage } from '../../src/app/booking-page-token.ts';
import { messagesOf } from '../../src/app/outbox-service.ts';
import { eventRow, insertNewBooking, isOverlapRefusal } from '../../src/data/booking-repository.ts';
import { RedoTransaction, writeTransaction } from '../../src/data/write-transaction.ts';
import { type CatalogueIds, catalogueIds } from '../helpers/booking-fixtures.ts';
import { bookingRow } from '../helpers/booking-row.ts';
import { type RecordedInstance, startRecordedInstance } from '../helpers/recorded-instance.ts';
import { onPostgres } from '../helpers/temp-database.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

/**
 * What a booking costs the database (issues 16 and 47): on PostgreSQL, round trips to the server. Kysely's
 * `begin` and `commit` go with the statements after and before them (postgres-transaction-edges.ts),
 * so a booking whose catalogue was read already takes three, its writes one statement of them; that
 * statement is written whole or not at all, and not at all when the booking's reference is taken.
 */
let t: TestApp;
let ids: CatalogueIds;
let instance: RecordedInstance;
let app: FastifyInstance;
let statements: string[];
let roundTrips: (readonly string[])[];
const MINUTE = 60_000;

beforeAll(async () => {
  t = await startTestApp();
  ids = await catalogueIds(t.database.db);
  instance = await startRecordedInstance(t);
  ({ app, statements, roundTrips } = instance);
});
afterAll(async () => {
  await instance.close();
  await t.close();
});

const bookAna = (time: string, idempotencyKey?: string) =>
  app.inject({
    method: 'POST',
    url: '/v1/bookings',
    headers: {
      authorization: `Bearer ${t.keys.readWrite}`,
      ...(idempotencyKey !== undefined && { 'idempotency-key': idempotencyKey }),
    },
    payload: {
      location_slug: 'soho',
      service_ids: [ids.services.cut],
      staff_id: ids.staff.ana,
      client_id: ids.jo,
      starts_at: `2026-11-30T${time}:00+00:00`,
    },
  });

/** What each round trip recorded carries, in words: its statements joined by " + ". */
const tripsOf = (recorded: readonly (readonly string[])[]) =>
  recorded.map((trip) => kindsOf(trip).join(' + '));

/** What each statement recorded does, in words. */
const kindsOf = (recorded: readonly string[]) =>
  recorded.map((sql) => {
    const text = sql.trim().toLowerCase();
    if (text.startsWith('with k as')) return 'key and its count';
    if (/^with booking as \(\s*insert into bookings\b/.test(text)) return 'the writes';
    if (text.startsWith('with "event" as')) return 'its event';
    if (/^(begin|commit|rollback)\b/.test(text)) return text.split(/\s/)[0];
    if (text.includes('live_bookings_after_turn')) {
      const read = text.includes('from clients')
        ? 'turn, then read bookings and the client'
        : 'turn, then read bookings';
      return text.includes('idempotency_record_after_turn')
        ? `key's turn, then read idempotency_records; ${read}`
        : read;
    }
    if (text.includes('idempotency_record_after_turn')) return 'turn, then read idempotency_records';
    if (text.includes('pg_advisory_xact_lock')) return 'turn';
    const written = /^insert into "([a-z_]+)"/.exec(text)?.[1];
    if (written) return `write ${written}`;
    const table = /\bfrom "([a-z_]+)"/.exec(text)?.[1];
    return `read ${table}`;
  });

const at = (time: string) => Date.parse(`2026-12-01T${time}:00Z`);
const basics = (startsAt: number) => ({
  organisationId: ids.organisation,
  locationId: ids.locations.soho!,
  staffId: ids.staff.ana!,
  clientId: ids.jo,
  startsAt,
  endsAt: startsAt + 45 * MINUTE,
});
/** A booking's rows as createBooking writes them. */
const rowsAt = (startsAt: number) => {
  const booking = bookingRow(basics(startsAt));
  return {
    booking,
    segments: [
      {
        organisation_id: ids.organisation,
        booking_id: booking.id,
        position: 0,
        service_id: ids.services.cut!,
        starts_at: booking.starts_at,
        ends_at: booking.ends_at,
        duration_minutes: 45,
        buffer_after_minutes: 0,
        price_minor: 4000,
        deposit_minor: null,
      },
    ],
    event: eventRow(
      {
        organisationId: ids.organisation,
        bookingId: booking.id,
        from: null,
        to: 'confirmed',
        actor: 'test',
        at: 0,
      },
      1,
    ),
    page: newBookingPage(ids.organisation, booking.id, 0),
    outbox: messagesOf(
      {
        organisationId: ids.organisation,
        bookingId: booking.id,
        reference: booking.reference,
        client: { phone: '+447700900123', email: 'jo@example.com' },
      },
      { kind: 'confirmed' },
      0,
    ).rows,
  };
};
/** How many rows of each table the booking has. */
const left = async (bookingId: string) => {
  const found: Record<string, number> = {};
  for (const table of [
    'bookings',
    'booking_services',
    'booking_events',
    'booking_pages',
    'outbox',
  ] as const) {
    const column = table === 'bookings' ? 'id' : 'booking_id';
    found[table] = (
      await t.database.db.selectFrom(table).select(column).where(column, '=', bookingId).execute()
    ).length;
  }
  return found;
};
/** What a booking refused, or never written, leaves. */
const NOTHING = { bookings: 0, booking_services: 0, booking_events: 0, booking_pages: 0, outbox: 0 };
/** What one written by rowsAt leaves: its messages a confirmation by SMS and by e-mail. */
const BOOKED = { bookings: 1, booking_services: 1, booking_events: 1, booking_pages: 1, outbox: 2 };

describe('a booking', () => {
  it.runIf(onPostgres)(
    'takes three round trips once its catalogue was read, its writes and COMMIT one of them',
    async () => {
      expect((await bookAna('09:00')).statusCode).toBe(201);
      statements.length = roundTrips.length = 0;
      const response = await bookAna('10:00');
      expect(response.statusCode).toBe(201);
      expect(tripsOf(roundTrips)).toEqual([
        'key and its count',
        // The location's turn, and the staff member's bookings (lapsed holds among them) read once it
        // is granted, and the client with them: one statement (issue 47).
        'begin + turn, then read bookings and the client',
        'the writes + commit',
      ]);
      // Kysely's own BEGIN and COMMIT went with those statements.
      expect(kindsOf(statements)).toEqual([
        'key and its count',
        'begin',
        'turn, then read bookings and the client',
        'the writes',
        'commit',
      ]);
      // The one statement wrote the booking, its segment, first event, page and messages.
      const { reference } = response.json().data;
      const booking = await t.database.db
        .selectFrom('bookings')
        .select('id')
        .where('reference', '=', reference)
        .executeTakeFirstOrThrow();
      const count = async (table: 'booking_services' | 'booking_events' | 'booking_pages' | 'outbox') =>
        (
          await t.database.db
            .selectFrom(table)
            .select('booking_id')
            .where('booking_id', '=', booking.id)
            .execute()
        ).length;
      expect([
        await count('booking_services'),
        await count('booking_events'),
        await count('booking_pages'),
        await count('outbox'),
      ]).toEqual([1, 1, 1, 4]);
    },
  );

  it.runIf(onPostgres)(
    'with an Idempotency-Key, takes as many: its record read under its turn with the bookings, and written with the rest',
    async () => {
      expect((await bookAna('11:00', 'round-trips-1')).statusCode).toBe(201);
      roundTrips.length = 0;
      const response = await bookAna('12:00', 'round-trips-2');
      expect(response.statusCode).toBe(201);
      expect(tripsOf(roundTrips)).toEqual([
        'key and its count',
        // The key's turn first, then the location's: the order every writer takes them in.
        "begin + key's turn, then read idempotency_records; turn, then read bookings and the client",
        'the writes + commit', // the record of the answer among the writes
      ]);
      const stored = await t.database.db
        .selectFrom('idempotency_records')
        .select(['status_code', 'response_body'])
        .where('idempotency_key', '=', 'round-trips-2')
        .executeTakeFirstOrThrow();
      expect({ status: stored.status_code, body: JSON.parse(stored.response_body) }).toEqual({
        status: 201,
        body: response.json(),
      });
      // Replayed from the record, under the key's turn, with nothing written.
      roundTrips.length = 0;
      const replay = await bookAna('12:00', 'round-trips-2');
      expect(replay.statusCode).toBe(201);
      expect(replay.json()).toEqual(response.json());
      expect(tripsOf(roundTrips)).toEqual([
        'key and its count',
        "begin + key's turn, then read idempotency_records; turn, then read bookings and the client",
        'rollback',
      ]);
    },
  );

  it('is written whole or not at all: an overlap refused by the database leaves none of its rows', async () => {
    const write = (rows: ReturnType<typeof rowsAt>) =>
      t.database.db.transaction().execute((trx) => insertNewBooking(trx, rows));

    await t.database.db
      .insertInto('bookings')
      .values(bookingRow(basics(at('11:00'))))
      .execute();
    const overlapping = rowsAt(at('11:15'));
    const refusal = await write(overlapping).then(
      () => null,
      (error: unknown) => error,
    );
    expect(isOverlapRefusal(refusal)).toBe(true);
    expect(await left(overlapping.booking.id)).toEqual(NOTHING);
    const free = rowsAt(at('13:00'));
    expect(await write(free)).toBe(true);
    expect(await left(free.booking.id)).toEqual(BOOKED);

    // A reference another booking has already: nothing is written, and the caller is told so (it draws
    // another reference); the transaction goes on.
    const taken = rowsAt(at('15:00'));
    taken.booking.reference = free.booking.reference;
    expect(
      await t.database.db.transaction().execute(async (trx) => {
        const written = await insertNewBooking(trx, taken);
        await trx.selectFrom('bookings').select('id').execute();
        return written;
      }),
    ).toBe(false);
    expect(await left(taken.booking.id)).toEqual(NOTHING);
  });
  it.runIf(onPostgres)(
    'as its transaction’s last statement, commits with it; a taken reference has the unit of work run again',
    async () => {
      // Through the recorded instance's connection, which tells what each round trip carried.
      const { db } = instance;
      const first = rowsAt(at('16:00'));
      roundTrips.length = 0;
      expect(await writeTransaction(db, (trx) => insertNewBooking(trx, first, { lastStatement: true }))).toBe(
        true,
      );
      expect(tripsOf(roundTrips)).toEqual(['begin + the writes + commit']);
      const taken = rowsAt(at('17:00'));
      taken.booking.reference = first.booking.reference;
      const free = rowsAt(at('17:00'));
      const outcomes: unknown[] = [];
      roundTrips.length = 0;
      await writeTransaction(db, async (trx) => {
        try {
          outcomes.push(
            await insertNewBooking(trx, outcomes.length === 0 ? taken : free, { lastStatement: true }),
          );
        } catch (error) {
          outcomes.push(error);
          throw error;
        }
      });
      expect(outcomes[0]).toBeInstanceOf(RedoTransaction);
      expect(outcomes[1]).toBe(true);
      // Each run one transaction of one round trip: the first ended by its COMMIT, nothing written.
      expect(tripsOf(roundTrips)).toEqual(['begin + the writes + commit', 'begin + the writes + commit']);
      expect(await left(taken.booking.id)).toEqual(NOTHING);
      expect(await left(first.booking.id)).toEqual(BOOKED);
      expect(await left(free.booking.id)).toEqual(BOOKED);
    },
  );
  it.runIf(onPostgres)(
    'where an endpoint wants booking.created, sends the COMMIT with the event, written after the booking',
    async () => {
      const endpoint = await t.request({
        method: 'POST',
        url: '/v1/webhook-endpoints',
        payload: { url: 'https://hooks.example.com/bookings', events: ['booking.created'] },
      });
      expect(endpoint.statusCode, endpoint.body).toBe(201);
      // The first booking after the change reads the organisation's endpoints again.
      expect((await bookAna('13:00')).statusCode).toBe(201);
      roundTrips.length = 0;
      const response = await bookAna('14:00', 'round-trips-3');
      expect(response.statusCode).toBe(201);
      // Its event, and one delivery to the endpoint, committed with it.
      const deliveries = await t.database.db
        .selectFrom('webhook_deliveries')
        .innerJoin('bookings', 'bookings.id', 'webhook_deliveries.ordering_key')
        .select(['event_type', 'endpoint_id'])
        .where('bookings.reference', '=', response.json().data.reference)
        .execute();
      expect(deliveries).toEqual([{ event_type: 'booking.created', endpoint_id: endpoint.json().data.id }]);
      expect(tripsOf(roundTrips)).toEqual([
        'key and its count',
        "begin + key's turn, then read idempotency_records; turn, then read bookings and the client",
        'the writes',
        'its event + commit',
      ]);
    },
  );
});
