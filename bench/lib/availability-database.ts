import { DateTime } from 'luxon';
import { createApiKey, MAX_KEY_RATE_LIMIT } from '../../src/app/api-key-service.ts';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import type { BookingServicesTable, BookingsTable } from '../../src/data/tables.ts';
import { bookingRow } from '../../test/helpers/booking-row.ts';
import { createTempDatabase, type TempDatabase } from '../../test/helpers/temp-database.ts';
import { mulberry32 } from './seeded-random.ts';

/**
 * The availability scenario of the issue: one location, 14 days searched, 20 staff, 3 services booked
 * back to back, 2,000 existing live bookings at the location. Every figure is fixed (a seeded
 * generator, a fixed "now"), so two runs measure the very same work.
 */
export const AVAILABILITY_SCENARIO = {
  organisation: 'fortnight-studio',
  location: 'shoreditch',
  timezone: 'Europe/London',
  /** Monday of the week before the searched fortnight, 09:00 local (GMT in January). */
  now: '2027-01-04T09:00:00Z',
  /** The searched fortnight: Monday 11 to Sunday 24 January 2027 (no offset change in it). */
  fromDate: '2027-01-11',
  days: 14,
  staff: 20,
  bookings: 2000,
} as const;

/** The services, in the order the benchmark books them (back to back): 95 minutes, then a 10-minute buffer. */
const SERVICES = [
  { ref: 'cut', name: 'Wash & cut', duration: 30, buffer: 5, price: 3500 },
  { ref: 'gloss', name: 'Gloss treatment', duration: 45, buffer: 0, price: 4500 },
  { ref: 'finish', name: 'Blow-dry finish', duration: 20, buffer: 10, price: 2500 },
] as const;
type ServiceRef = (typeof SERVICES)[number]['ref'];

/** What existing bookings are made of, with how often each occurs. */
const BOOKED_COMBINATIONS: { refs: ServiceRef[]; weight: number }[] = [
  { refs: ['cut'], weight: 4 },
  { refs: ['gloss'], weight: 3 },
  { refs: ['finish'], weight: 3 },
  { refs: ['cut', 'finish'], weight: 2 },
  { refs: ['cut', 'gloss'], weight: 1 },
];

const STAFF_NAMES = [
  'Aisha Rahman',
  'Ben Okoro',
  'Carla Mendes',
  'Dev Patel',
  'Elena Petrova',
  'Finn Gallagher',
  'Grace Liu',
  'Hamza Ali',
  'Isla Murray',
  'Jonas Berg',
  'Kemi Adeyemi',
  'Luca Romano',
  'Maya Cohen',
  'Niamh Byrne',
  'Oscar Lindqvist',
  'Priya Nair',
  'Quinn Taylor',
  'Rosa Alvarez',
  'Sam Whitfield',
  'Tariq Hussain',
];

/** Time off of some staff (local wall-clock times); the last lies before the fortnight and is not read. */
const TIME_OFF: { staff: number; start: string; end: string; reason: string }[] = [
  { staff: 2, start: '2027-01-13T00:00', end: '2027-01-14T00:00', reason: 'Training day' },
  { staff: 7, start: '2027-01-15T13:00', end: '2027-01-15T20:00', reason: 'Appointment' },
  { staff: 11, start: '2027-01-19T00:00', end: '2027-01-21T00:00', reason: 'Holiday' },
  { staff: 16, start: '2027-01-22T09:00', end: '2027-01-22T12:00', reason: 'Dentist' },
  { staff: 18, start: '2027-01-05T00:00', end: '2027-01-08T00:00', reason: 'Holiday' },
];

const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
const MINUTE = 60_000;

export interface AvailabilityBenchDatabase {
  database: TempDatabase;
  /** A read-scoped key of the organisation that is never rate limited. */
  readKey: string;
  organisationId: string;
  /** The three service ids, in booking order. */
  serviceIds: string[];
  /** The fixed "now" of the scenario, in epoch milliseconds. */
  now: number;
  /** Existing live bookings inserted (always AVAILABILITY_SCENARIO.bookings). */
  bookings: number;
}

/** Migrates a temporary SQLite file, imports the catalogue and inserts the existing bookings. */
export async function createAvailabilityDatabase(): Promise<AvailabilityBenchDatabase> {
  const now = Date.parse(AVAILABILITY_SCENARIO.now);
  const database = await createTempDatabase();
  try {
    const catalogue = availabilityCatalogue();
    await importCatalogue(database.db, catalogue, now);
    const key = await createApiKey(
      database.db,
      {
        organisationSlug: AVAILABILITY_SCENARIO.organisation,
        label: 'bench',
        scope: 'read',
        // The highest a key may have: no benchmark ever meets a 429 (it measures work, not refusals).
        rateLimitPerMinute: MAX_KEY_RATE_LIMIT,
      },
      now,
    );
    const db = database.db;
    const organisation = await db.selectFrom('organisations').select('id').executeTakeFirstOrThrow();
    const location = await db.selectFrom('locations').select('id').executeTakeFirstOrThrow();
    const client = await db.selectFrom('clients').select('id').executeTakeFirstOrThrow();
    const staffRows = await db.selectFrom('staff').select(['id', 'ref']).execute();
    const serviceRows = await db.selectFrom('services').select(['id', 'ref']).execute();
    const staffId = new Map(staffRows.map((s) => [s.ref, s.id]));
    const serviceId = new Map(serviceRows.map((s) => [s.ref, s.id]));

    const placed = placeBookings(catalogue.staff);
    const bookings: BookingsTable[] = [];
    const lines: BookingServicesTable[] = [];
    placed.forEach((p, i) => {
      const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
      const services = p.refs.map((ref) => SERVICES.find((s) => s.ref === ref)!);
      const ends = p.start + services.reduce((n, s) => n + s.duration, 0) * MINUTE;
      bookings.push(
        bookingRow(
          {
            organisationId: organisation.id,
            locationId: location.id,
            staffId: staffId.get(p.staff)!,
            clientId: client.id,
            startsAt: p.start,
            endsAt: ends,
            blockedUntil: ends + services[services.length - 1]!.buffer * MINUTE,
          },
          {
            id,
            reference: `FS-${String(i + 1).padStart(5, '0')}`,
            total_price_minor: services.reduce((n, s) => n + s.price, 0),
            created_at: now - 7 * 24 * 60 * MINUTE,
            updated_at: now - 7 * 24 * 60 * MINUTE,
          },
        ),
      );
      let at = p.start;
      services.forEach((s, position) => {
        lines.push({
          organisation_id: organisation.id,
          booking_id: id,
          position,
          service_id: serviceId.get(s.ref)!,
          starts_at: at,
          ends_at: at + s.duration * MINUTE,
          duration_minutes: s.duration,
          buffer_after_minutes: s.buffer,
          price_minor: s.price,
          deposit_minor: null,
        });
        at += s.duration * MINUTE;
      });
    });
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < bookings.length; i += 200) {
        await trx
          .insertInto('bookings')
          .values(bookings.slice(i, i + 200))
          .execute();
      }
      for (let i = 0; i < lines.length; i += 300) {
        await trx
          .insertInto('booking_services')
          .values(lines.slice(i, i + 300))
          .execute();
      }
    });
    return {
      database,
      readKey: key.key,
      organisationId: organisation.id,
      serviceIds: SERVICES.map((s) => serviceId.get(s.ref)!),
      now,
      bookings: bookings.length,
    };
  } catch (error) {
    await database.dispose();
    throw error;
  }
}

interface CatalogueStaff {
  ref: string;
  name: string;
  services: string[];
  working_hours: Record<string, Partial<Record<(typeof WEEKDAYS)[number], [string, string][]>>>;
  time_off: { start: string; end: string; reason: string }[];
}

function availabilityCatalogue() {
  const { organisation, location, timezone } = AVAILABILITY_SCENARIO;
  const staff: CatalogueStaff[] = STAFF_NAMES.map((name, i) => ({
    ref: `staff-${String(i).padStart(2, '0')}`,
    name,
    services: SERVICES.map((s) => s.ref),
    working_hours: {
      [location]: Object.fromEntries(WEEKDAYS.map((day, d) => [day, workingDay(i, d)])),
    },
    time_off: TIME_OFF.filter((t) => t.staff === i).map(({ start, end, reason }) => ({ start, end, reason })),
  }));
  return {
    organisation: {
      slug: organisation,
      name: 'Fortnight Studio',
      currency: 'GBP',
      booking_reference_prefix: 'FS',
      locale: 'en-GB',
    },
    locations: [
      {
        ref: location,
        slug: location,
        name: 'Fortnight Studio Shoreditch',
        timezone,
        street_address: '1 Curtain Road',
        city: 'London',
        postal_code: 'EC2A 3AA',
        country: 'GB',
        phone: '+442071230000',
        active: true,
        policy: { slot_interval_minutes: 15, min_notice_minutes: 60, max_advance_days: 60 },
      },
    ],
    services: SERVICES.map((s) => ({
      ref: s.ref,
      name: s.name,
      category: 'Hair',
      duration_minutes: s.duration,
      buffer_after_minutes: s.buffer,
      price: { amount: s.price, currency: 'GBP' },
      locations: [location],
    })),
    staff,
    clients: [
      {
        ref: 'walk-in',
        first_name: 'Alex',
        last_name: 'Client',
        phone: '+447911123456',
        email: 'alex.client@example.com',
      },
    ],
  };
}

/**
 * Staff member i's hours on weekday d (0 = Monday .. 5 = Saturday): a morning and an afternoon with a
 * lunch break between, starts, lunches and ends varying by person and day; Saturdays end earlier.
 */
function workingDay(i: number, d: number): [string, string][] {
  const start = 8 * 60 + ((i + d) % 5) * 30;
  const lunch = 12 * 60 + ((i * 3 + d) % 4) * 30;
  const lunchLength = 30 + ((i + 2 * d) % 3) * 15;
  const end = d === 5 ? 16 * 60 + (i % 3) * 30 : 17 * 60 + ((i * 2 + d) % 5) * 30;
  return [
    [clock(start), clock(lunch)],
    [clock(lunch + lunchLength), clock(end)],
  ];
}

const clock = (minute: number) =>
  `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;
const minuteOf = (time: string) => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));

interface Placed {
  staff: string;
  refs: ServiceRef[];
  start: number;
}

/**
 * Existing bookings: each working staff day of the fortnight gets its share of the total (8 or 9),
 * laid out from the start of the day in working time left after time off, mostly back to back or a
 * few minutes apart, with now and then an hour or two left free, as in a real diary. Bookings that do
 * not fit are placed afterwards in the first free gap of any staff day, so the total is exact. Blocks
 * of one staff member never overlap (the database refuses it) and stay inside working hours.
 */
function placeBookings(staff: CatalogueStaff[]): Placed[] {
  const { fromDate, days, timezone, bookings: total } = AVAILABILITY_SCENARIO;
  const random = mulberry32(20270111);
  const first = DateTime.fromISO(fromDate, { zone: timezone });
  const last = first.plus({ days });
  if (first.offset !== last.offset) throw new Error('The searched fortnight must not change offset.');

  interface StaffDay {
    staff: string;
    /** Free intervals left, as instants, in order. */
    free: { start: number; end: number }[];
  }
  const staffDays: StaffDay[] = [];
  for (let offset = 0; offset < days; offset += 1) {
    const day = first.plus({ days: offset });
    const weekday = WEEKDAYS[day.weekday - 1];
    if (!weekday) continue;
    for (const member of staff) {
      const hours = member.working_hours[AVAILABILITY_SCENARIO.location]?.[weekday] ?? [];
      const busy = member.time_off.map((t) => ({
        start: DateTime.fromISO(t.start, { zone: timezone }).toMillis(),
        end: DateTime.fromISO(t.end, { zone: timezone }).toMillis(),
      }));
      const free = hours.flatMap(([from, to]) =>
        subtract(
          { start: day.toMillis() + minuteOf(from) * MINUTE, end: day.toMillis() + minuteOf(to) * MINUTE },
          busy,
        ),
      );
      if (free.length > 0) staffDays.push({ staff: member.ref, free });
    }
  }

  const placed: Placed[] = [];
  let unplaced = 0;
  staffDays.forEach((day, k) => {
    let quota = Math.floor(((k + 1) * total) / staffDays.length) - Math.floor((k * total) / staffDays.length);
    let window = 0;
    let cursor = day.free[0]!.start;
    const used: { start: number; end: number }[] = [];
    while (quota > 0 && window < day.free.length) {
      const refs = pickCombination(random);
      const gap = pickGap(random);
      const block = blockMinutes(refs) * MINUTE;
      const start = Math.max(cursor, day.free[window]!.start) + gap * MINUTE;
      if (start + block > day.free[window]!.end) {
        window += 1;
        if (window < day.free.length) cursor = day.free[window]!.start;
        continue;
      }
      placed.push({ staff: day.staff, refs, start });
      used.push({ start, end: start + block });
      cursor = start + block;
      quota -= 1;
    }
    unplaced += quota;
    day.free = day.free.flatMap((interval) => subtract(interval, used));
  });

  // The few that did not fit: one cut each in the first gap that takes it, spreading over the days.
  const cut: ServiceRef[] = ['cut'];
  const block = blockMinutes(cut) * MINUTE;
  for (let k = 0; unplaced > 0; k += 1) {
    if (k >= staffDays.length * 4) throw new Error(`${unplaced} bookings do not fit in the fortnight.`);
    const day = staffDays[(k * 7) % staffDays.length]!;
    const gap = day.free.find((g) => g.end - g.start >= block);
    if (!gap) continue;
    placed.push({ staff: day.staff, refs: cut, start: gap.start });
    day.free = day.free.flatMap((g) => subtract(g, [{ start: gap.start, end: gap.start + block }]));
    unplaced -= 1;
  }
  return placed.sort((a, b) => a.start - b.start || (a.staff < b.staff ? -1 : 1));
}

function blockMinutes(refs: ServiceRef[]): number {
  const services = refs.map((ref) => SERVICES.find((s) => s.ref === ref)!);
  return services.reduce((n, s) => n + s.duration, 0) + services[services.length - 1]!.buffer;
}

function pickCombination(random: () => number): ServiceRef[] {
  const totalWeight = BOOKED_COMBINATIONS.reduce((n, c) => n + c.weight, 0);
  let pick = random() * totalWeight;
  for (const combination of BOOKED_COMBINATIONS) {
    pick -= combination.weight;
    if (pick < 0) return combination.refs;
  }
  return BOOKED_COMBINATIONS[0]!.refs;
}

/** Minutes left free before the next booking: usually none or a few, sometimes an hour or two. */
function pickGap(random: () => number): number {
  const r = random();
  if (r < 0.7) return 0;
  if (r < 0.88) return 5;
  if (r < 0.94) return 15;
  return 75 + Math.floor(random() * 5) * 15;
}

/** `interval` minus the `busy` intervals, as disjoint intervals in order. */
function subtract(
  interval: { start: number; end: number },
  busy: readonly { start: number; end: number }[],
): { start: number; end: number }[] {
  let pieces = [interval];
  for (const b of busy) {
    pieces = pieces.flatMap((p) =>
      b.end <= p.start || b.start >= p.end
        ? [p]
        : [
            ...(b.start > p.start ? [{ start: p.start, end: b.start }] : []),
            ...(b.end < p.end ? [{ start: b.end, end: p.end }] : []),
          ],
    );
  }
  return pieces;
}
