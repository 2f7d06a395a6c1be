import { DateTime } from 'luxon';
import { createApiKey, MAX_KEY_RATE_LIMIT } from '../../src/app/api-key-service.ts';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import {
  BOOKINGS_SCENARIO,
  type BookingsBenchDatabase,
  bookingsCatalogue,
  createBookingsDatabase,
} from './bookings-database.ts';
import { OUTBOX_CLIENTS } from './outbox-database.ts';

/**
 * The public-booking benchmark's database: the booking scenario of bookings-database.ts twice over,
 * as two organisations that differ only in `policies.public_verification`:
 *
 * - `slot-studio` asks the code (`code`, the default): a booking on its public page is a
 *   pending_confirmation hold whose one message is the verification code;
 * - `slot-studio-direct` asks none (`none`): a booking on its page is confirmed at once, with a client
 *   record of its own, and sends the confirmation and the reminder there. The same public path without
 *   the code step, on the same server, in the same run.
 *
 * Each has a read_write key that is never rate limited and a client on file with a phone only
 * (`texted`), whom REST bookings are for: REST and public bookings then all message one phone by SMS.
 *
 * Every public booking gives a phone of its own (publicPhone), so the per-contact caps (2 live holds,
 * 3 a day: left at their defaults) never refuse one, though they are read as always. All the load
 * comes from one address, 127.0.0.1: each organisation's attempts per address per hour, and its
 * public bookings per hour, are raised to the most a catalogue may set (100,000), which a run stays
 * far below (the full stack's clock is fixed, so every attempt of a run falls into one hour).
 */
export const PUBLIC_BOOKING_SCENARIO = {
  withCode: BOOKINGS_SCENARIO.organisation,
  withoutCode: 'slot-studio-direct',
  location: BOOKINGS_SCENARIO.location,
  /** The most `public_attempts_per_address_per_hour` may be (the catalogue's schema). */
  attemptsPerAddressPerHour: 100_000,
  /** The most `public_bookings_per_organisation_per_hour` may be: a run makes fewer at each. */
  bookingsPerOrganisationPerHour: 100_000,
} as const;

export type Organisation = 'withCode' | 'withoutCode';
export const ORGANISATIONS: readonly Organisation[] = ['withCode', 'withoutCode'];

const { timezone, firstDate, dayStart, dayEnd, slotMinutes, staff } = BOOKINGS_SCENARIO;
const STARTS_PER_DAY = (dayEnd - dayStart) / slotMinutes;

/**
 * Days the diary sequence spreads over, from BOOKINGS_SCENARIO.firstDate on. A public booking names
 * no staff member, and "any staff member" reads the whole day's bookings of every candidate (and
 * those of the day before that could reach into it): a booking costs more the fuller its day. The
 * bookings scenario's sequence fills one day (24 staff × 48 starts) before the next, so that cost
 * would rise through each day and fall at the next, differently for each side; spread over this many
 * days, every booking's day holds a few dozen bookings at most (an organisation's bookings of the run
 * / DIARY_DAYS), as a salon's diary ahead does, and costs the same whenever it is made. Few enough
 * days that both organisations' calendars for all of them fit the catalogue cache (2,000 entries per
 * database handle, catalogue-cache.ts), which REST bookings reuse.
 */
export const DIARY_DAYS = 800;
export const DIARY_CAPACITY = DIARY_DAYS * STARTS_PER_DAY * staff;

export interface DiarySlot {
  /** The local date, for an availability request. */
  date: string;
  /** ISO 8601 local time with the location's offset, as a client sends it. */
  startsAtIso: string;
}

/**
 * The i-th booking of an organisation's diary (0-based): day after day over DIARY_DAYS days, then
 * round again; a day's k-th booking at its (k / staff)-th start, so that as many bookings as there
 * are staff share a start and "any staff member" always finds one free.
 */
export function diarySlot(i: number): DiarySlot {
  if (!Number.isInteger(i) || i < 0 || i >= DIARY_CAPACITY) throw new Error(`No diary slot #${i}.`);
  return slotOn(i % DIARY_DAYS, Math.floor(Math.floor(i / DIARY_DAYS) / staff));
}

/** The k-th booking of the census, on a day of its own after the diary's days. */
export function censusSlot(k: number): DiarySlot {
  return slotOn(DIARY_DAYS, Math.floor(k / staff));
}

function slotOn(day: number, start: number): DiarySlot {
  if (start >= STARTS_PER_DAY) throw new Error(`No start #${start} in a day.`);
  const minute = dayStart + start * slotMinutes;
  // The wall-clock time set on the local day (see bookingSlot), so the days the clocks change are right.
  const at = DateTime.fromISO(firstDate, { zone: timezone })
    .plus({ days: day })
    .set({ hour: Math.floor(minute / 60), minute: minute % 60 });
  return { date: at.toISODate() ?? '', startsAtIso: at.toISO({ suppressMilliseconds: true }) ?? '' };
}

/** Phones handed out: +44 7400 000000 onwards, UK mobiles that the page texts (its location is in GB). */
const FIRST_PHONE = 7_400_000_000;
export const PHONES = 100_000_000;

/** The i-th public booking's phone (0-based), as the form gets it: one that no other booking gave. */
export function publicPhone(i: number): string {
  if (!Number.isInteger(i) || i < 0 || i >= PHONES) throw new Error(`No public phone #${i}.`);
  return `+44${FIRST_PHONE + i}`;
}

/** What the benchmark needs of one organisation. */
export interface PublicBookingOrganisation {
  id: string;
  slug: string;
  /** A read_write key, never rate limited. */
  writeKey: string;
  /** The client on file with a phone only. */
  textedClientId: string;
  /** The one service (the same at both organisations). */
  serviceId: string;
}

export interface PublicBookingBenchDatabase {
  database: BookingsBenchDatabase['database'];
  organisations: Record<Organisation, PublicBookingOrganisation>;
}

export async function createPublicBookingDatabase(): Promise<PublicBookingBenchDatabase> {
  const catalogue = bookingsCatalogue();
  const catalogueOf = (organisation: Organisation) => ({
    ...catalogue,
    organisation:
      organisation === 'withCode'
        ? catalogue.organisation
        : {
            ...catalogue.organisation,
            slug: PUBLIC_BOOKING_SCENARIO.withoutCode,
            name: 'Slot Studio Direct',
            booking_reference_prefix: 'SD',
          },
    policies: {
      public_verification: organisation === 'withCode' ? 'code' : 'none',
      public_attempts_per_address_per_hour: PUBLIC_BOOKING_SCENARIO.attemptsPerAddressPerHour,
      public_bookings_per_organisation_per_hour: PUBLIC_BOOKING_SCENARIO.bookingsPerOrganisationPerHour,
    },
    // `regular` (phone and e-mail) as the bookings scenario has it; `texted` for the REST side.
    clients: [...catalogue.clients, OUTBOX_CLIENTS.texted],
  });
  // The first with the key of the bookings scenario; the second imported beside it, with a key as high.
  const seeded = await createBookingsDatabase(catalogueOf('withCode'));
  try {
    const { db } = seeded.database;
    await importCatalogue(db, catalogueOf('withoutCode'), seeded.now);
    const second = await createApiKey(
      db,
      {
        organisationSlug: PUBLIC_BOOKING_SCENARIO.withoutCode,
        label: 'bench',
        scope: 'read_write',
        rateLimitPerMinute: MAX_KEY_RATE_LIMIT,
      },
      seeded.now,
    );
    const organisationOf = async (
      organisation: Organisation,
      writeKey: string,
    ): Promise<PublicBookingOrganisation> => {
      const slug = PUBLIC_BOOKING_SCENARIO[organisation];
      const { id } = await db
        .selectFrom('organisations')
        .select('id')
        .where('slug', '=', slug)
        .executeTakeFirstOrThrow();
      const service = await db
        .selectFrom('services')
        .select('id')
        .where('organisation_id', '=', id)
        .executeTakeFirstOrThrow();
      const texted = await db
        .selectFrom('clients')
        .select('id')
        .where('organisation_id', '=', id)
        .where('ref', '=', OUTBOX_CLIENTS.texted.ref)
        .executeTakeFirstOrThrow();
      return { id, slug, writeKey, textedClientId: texted.id, serviceId: service.id };
    };
    return {
      database: seeded.database,
      organisations: {
        withCode: await organisationOf('withCode', seeded.writeKey),
        withoutCode: await organisationOf('withoutCode', second.key),
      },
    };
  } catch (error) {
    await seeded.database.dispose();
    throw error;
  }
}
