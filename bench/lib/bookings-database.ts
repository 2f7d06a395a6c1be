import { DateTime } from 'luxon';
import { createApiKey, MAX_KEY_RATE_LIMIT } from '../../src/app/api-key-service.ts';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { createTempDatabase, type TempDatabase } from '../../test/helpers/temp-database.ts';

/**
 * The booking scenario: one location with many staff working long days every day of the week, one
 * 15-minute service without buffer, no notice and ten years of advance booking, so that a run can book
 * a long list of distinct free slots (bookingSlot) that are all offered by availability. Every figure
 * is fixed, so two runs book the very same slots in the very same order.
 */
export const BOOKINGS_SCENARIO = {
  organisation: 'slot-studio',
  location: 'islington',
  timezone: 'Europe/London',
  /** The fixed "now" of the full stack: a week before the first slot. */
  now: '2030-12-30T00:00:00Z',
  /** The first day booked, a Monday; then every day after it. */
  firstDate: '2031-01-06',
  staff: 24,
  /** Every day of the week, 08:00 to 20:00 local (no offset change falls inside these hours). */
  dayStart: 8 * 60,
  dayEnd: 20 * 60,
  slotMinutes: 15,
  maxAdvanceDays: 3660,
} as const;

const SLOTS_PER_STAFF_DAY =
  (BOOKINGS_SCENARIO.dayEnd - BOOKINGS_SCENARIO.dayStart) / BOOKINGS_SCENARIO.slotMinutes;
export const SLOTS_PER_DAY = SLOTS_PER_STAFF_DAY * BOOKINGS_SCENARIO.staff;
/** Slots that lie within the advance window (less a margin), far more than any run books. */
export const SLOT_CAPACITY = SLOTS_PER_DAY * (BOOKINGS_SCENARIO.maxAdvanceDays - 30);

const WEEK = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
const SERVICE = { ref: 'quick-trim', name: 'Quick trim', duration: 15, price: 1500 } as const;
/** The catalogue's one client (phone and e-mail), whom the booking benchmarks book for. */
const REGULAR_CLIENT = 'regular';
const MINUTE = 60_000;

export interface BookingsBenchDatabase {
  database: TempDatabase;
  /** A read_write key of the organisation that is never rate limited. */
  writeKey: string;
  /** Its id: bookings made with it log the actor `api_key:<id>`. */
  apiKeyId: string;
  organisationId: string;
  locationId: string;
  serviceId: string;
  clientId: string;
  /** Staff ids by index (staff-00 first): bookingSlot's staff numbers index this. */
  staffIds: string[];
  /** Epoch milliseconds of BOOKINGS_SCENARIO.now. */
  now: number;
}

/**
 * Migrates a temporary SQLite file and imports the scenario's catalogue (or a variant of it with more
 * clients: `clientId` is the client `regular`'s); no bookings yet.
 */
export async function createBookingsDatabase(
  catalogue: unknown = bookingsCatalogue(),
): Promise<BookingsBenchDatabase> {
  const now = Date.parse(BOOKINGS_SCENARIO.now);
  const database = await createTempDatabase();
  try {
    await importCatalogue(database.db, catalogue, now);
    const key = await createApiKey(
      database.db,
      {
        organisationSlug: BOOKINGS_SCENARIO.organisation,
        label: 'bench',
        scope: 'read_write',
        // The highest a key may have: no benchmark ever meets a 429 (it measures work, not refusals).
        rateLimitPerMinute: MAX_KEY_RATE_LIMIT,
      },
      now,
    );
    const db = database.db;
    const organisation = await db.selectFrom('organisations').select('id').executeTakeFirstOrThrow();
    const location = await db.selectFrom('locations').select('id').executeTakeFirstOrThrow();
    const service = await db.selectFrom('services').select('id').executeTakeFirstOrThrow();
    const client = await db
      .selectFrom('clients')
      .select('id')
      .where('ref', '=', REGULAR_CLIENT)
      .executeTakeFirstOrThrow();
    const staff = await db.selectFrom('staff').select(['id', 'ref']).orderBy('ref').execute();
    if (staff.length !== BOOKINGS_SCENARIO.staff)
      throw new Error(`Expected ${BOOKINGS_SCENARIO.staff} staff.`);
    return {
      database,
      writeKey: key.key,
      apiKeyId: key.id,
      organisationId: organisation.id,
      locationId: location.id,
      serviceId: service.id,
      clientId: client.id,
      staffIds: staff.map((s) => s.id),
      now,
    };
  } catch (error) {
    await database.dispose();
    throw error;
  }
}

export interface BookingSlot {
  /** Index into BookingsBenchDatabase.staffIds. */
  staff: number;
  /** Epoch milliseconds. */
  startsAt: number;
  /** The same instant as ISO 8601 local time with the location's offset, as a client sends it. */
  startsAtIso: string;
}

/**
 * The i-th slot booked (0-based): day by day, within a day time by time, within a time staff by staff.
 * Each is a distinct (staff, start) pair on the 15-minute grid inside working hours, so every one is
 * free as long as no other booking took it, on the days the clocks change too. Deterministic: both
 * sides of the benchmark book the same sequence.
 */
export function bookingSlot(i: number): BookingSlot {
  if (!Number.isInteger(i) || i < 0 || i >= SLOT_CAPACITY) throw new Error(`No booking slot #${i}.`);
  const { staff: staffCount, firstDate, timezone, dayStart, slotMinutes } = BOOKINGS_SCENARIO;
  const day = Math.floor(i / SLOTS_PER_DAY);
  const inDay = i % SLOTS_PER_DAY;
  const minute = dayStart + Math.floor(inDay / staffCount) * slotMinutes;
  // The wall-clock time set on the local day, not minutes added to its midnight: on the day the clocks
  // go forward (2031-03-30 in London, some 96,000 slots in) 480 minutes after midnight is 09:00.
  const start = DateTime.fromISO(firstDate, { zone: timezone })
    .plus({ days: day })
    .set({ hour: Math.floor(minute / 60), minute: minute % 60 });
  return {
    staff: inDay % staffCount,
    startsAt: start.toMillis(),
    startsAtIso: start.toISO({ suppressMilliseconds: true }) ?? '',
  };
}

/** Minutes of the service booked: bookings end this long after they start (no buffer). */
export const SERVICE_MS = SERVICE.duration * MINUTE;
export const SERVICE_PRICE_MINOR = SERVICE.price;

export function bookingsCatalogue() {
  const { organisation, location, timezone, dayStart, dayEnd, maxAdvanceDays } = BOOKINGS_SCENARIO;
  const hours: [string, string][] = [[clock(dayStart), clock(dayEnd)]];
  return {
    organisation: {
      slug: organisation,
      name: 'Slot Studio',
      currency: 'GBP',
      booking_reference_prefix: 'SS',
      locale: 'en-GB',
    },
    locations: [
      {
        ref: location,
        slug: location,
        name: 'Slot Studio Islington',
        timezone,
        street_address: '1 Upper Street',
        city: 'London',
        postal_code: 'N1 0PN',
        country: 'GB',
        phone: '+442071230001',
        active: true,
        policy: {
          slot_interval_minutes: BOOKINGS_SCENARIO.slotMinutes,
          min_notice_minutes: 0,
          max_advance_days: maxAdvanceDays,
        },
      },
    ],
    services: [
      {
        ref: SERVICE.ref,
        name: SERVICE.name,
        category: 'Hair',
        duration_minutes: SERVICE.duration,
        buffer_after_minutes: 0,
        price: { amount: SERVICE.price, currency: 'GBP' },
        locations: [location],
      },
    ],
    staff: Array.from({ length: BOOKINGS_SCENARIO.staff }, (_, i) => ({
      ref: `staff-${String(i).padStart(2, '0')}`,
      name: `Stylist ${String(i + 1).padStart(2, '0')}`,
      services: [SERVICE.ref],
      working_hours: { [location]: Object.fromEntries(WEEK.map((day) => [day, hours])) },
    })),
    clients: [
      {
        ref: REGULAR_CLIENT,
        first_name: 'Robin',
        last_name: 'Client',
        phone: '+447911123457',
        email: 'robin.client@example.com',
      },
    ],
  };
}

const clock = (minute: number) =>
  `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;
