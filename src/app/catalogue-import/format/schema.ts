import { isSupportedCountry } from 'libphonenumber-js';
import { DateTime, IANAZone } from 'luxon';
import { z } from 'zod';
import { SLUG_MAX_LENGTH } from '../../../contract/common.ts';
import { normaliseReference, REFERENCE_ALPHABET } from '../../../domain/booking/reference.ts';
import { BOOKING_STATUSES } from '../../../domain/booking/state-machine.ts';
import { NAME_MAX_LENGTH } from '../../../domain/client.ts';
import { isUuid } from '../../../domain/ids.ts';
import { DIRECTION_CONTROL, LONE_SURROGATE } from '../../../domain/text-rules.ts';
import { namesThisMachine } from '../../calendars/busy-fetch.ts';
import { normaliseEmail, normaliseName, normalisePhone } from '../../contact.ts';
import { nearestKey } from './key-suggestions.ts';

/**
 * The catalogue file (design.md section 5) as zod schemas. Objects are strict so that a misspelt key
 * is reported instead of silently ignored; values are normalised on the way in (phones to E.164,
 * e-mails lower-cased, names trimmed, defaults filled) so the importer only ever sees canonical data.
 */

export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const LOCAL_DATE = /^\d{4}-\d{2}-\d{2}$/;
const LOCAL_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?$/;
const CLOCK_TIME = /^(?:(?:[01]\d|2[0-3]):[0-5]\d|24:00)$/;

/**
 * Text that both databases store exactly as given; every text field of the file starts from it.
 * PostgreSQL refuses NUL in text (SQLite would keep it), and a lone surrogate (which JSON.parse lets
 * through) has no UTF-8 form: both drivers would store U+FFFD instead, so the row would differ from
 * the file on every re-import, and ids derived from a ref could not be made at all.
 */
const storableText = z
  .string()
  .refine((value) => !value.includes('\u0000'), 'must not contain the NUL character (\\u0000)')
  .refine(
    (value) => !LONE_SURROGATE.test(value),
    'must be valid Unicode: it holds a lone surrogate (\\ud800 to \\udfff without its pair)',
  );

/** Refs are stored and indexed; 100 characters keep them far inside PostgreSQL's index row limit. */
export const REF_MAX_LENGTH = 100;
/** The longest slug, a location's or the organisation's (the contract's bound, SLUG_MAX_LENGTH). */
export { SLUG_MAX_LENGTH };

const uuid = z
  .string()
  .refine(isUuid, 'must be a lowercase RFC 4122 UUID')
  .describe('A lowercase UUID; absent, derived from the organisation slug and the ref (UUID v5).');
const ref = storableText
  .min(1, 'must not be empty')
  .max(REF_MAX_LENGTH, `must be at most ${REF_MAX_LENGTH} characters`)
  .refine((value) => value.trim() === value, 'must not start or end with spaces')
  .describe('The entity’s key within the file, used by the other entities to name it.');
/** An entity's ref, as every field that names one takes it (a booking's location, services, staff...). */
export const refSchema = ref;
const slug = z
  .string()
  .max(SLUG_MAX_LENGTH, `must be at most ${SLUG_MAX_LENGTH} characters (the longest slug the API takes)`)
  .regex(SLUG_PATTERN, 'must be URL-safe: lowercase letters, digits and single hyphens')
  .describe('URL-safe name: lowercase letters, digits and single hyphens.');
const requiredText = (max: number) => storableText.trim().min(1, 'must not be empty').max(max);
/**
 * What a customer hears and reads (organisation, location, service and staff names): one line, and
 * none of the direction controls that would turn the text after the name backwards on a page or in an
 * SMS (pages and messages leave them out of any text as well). NUL is storableText's to refuse.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses.
const CONTROL = /[\u0001-\u001f\u007f]/;
const displayName = (max: number) =>
  requiredText(max).refine(
    (value) => !CONTROL.test(value) && !DIRECTION_CONTROL.test(value),
    'must be one line without control characters (line breaks, tabs, direction controls)',
  );
/** Absent, null and blank all mean "not set", stored as null. */
const optionalText = (max: number) =>
  storableText
    .trim()
    .max(max)
    .nullish()
    .transform((value) => value || null);
const currency = z
  .string()
  .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code of three uppercase letters')
  .describe('ISO 4217 code, e.g. GBP.');
const minutes = (min: number, max: number) => z.int().min(min).max(max);

/** Shares the API's normalisation, so a client imported here is found again by phone or e-mail there. */
const normalised = (normalise: (value: string) => string | undefined, message: string) =>
  storableText.transform((value, ctx) => {
    const result = normalise(value);
    if (result === undefined) {
      ctx.issues.push({ code: 'custom', input: value, message });
      return z.NEVER;
    }
    return result;
  });
const phone = normalised(
  (value) => normalisePhone(value),
  'must be a valid international phone number starting with +, e.g. +442071234567',
);
const optionalPhone = phone.nullish().transform((value) => value ?? null);
const optionalEmail = normalised(normaliseEmail, 'must be a valid e-mail address')
  .nullish()
  .transform((value) => value ?? null);
const personName = normalised(
  normaliseName,
  `must be 1 to ${NAME_MAX_LENGTH} characters, without control characters`,
);

/** The limits of a service's or staff member's `aliases[]` (design.md 8.2; docs/catalogue.md). */
export const ALIAS_LIMITS = { length: NAME_MAX_LENGTH, count: 20 } as const;

/**
 * Everyday names a caller may use ("haircut", a nickname), each trimmed; whether two read the same
 * (or read as another entity's name) is a cross-entity check.
 */
const aliases = z
  .array(
    normalised(
      (value) => normaliseName(value, ALIAS_LIMITS.length),
      `must be 1 to ${ALIAS_LIMITS.length} characters, without control characters`,
    ),
  )
  .max(ALIAS_LIMITS.count, `must list at most ${ALIAS_LIMITS.count} aliases`)
  .describe('Everyday names callers use (“haircut”, a nickname), matched by the MCP tools as names are.')
  .default([]);

// Whether a value of the right form names a real date is asked only of one of that form: a date
// written another way ("24/12/2026", "2026-12-24 09:00") is one problem, said once.
const calendarDate = z
  .string()
  .regex(LOCAL_DATE, 'must be a date YYYY-MM-DD')
  .refine(
    (value) => !LOCAL_DATE.test(value) || DateTime.fromISO(value, { zone: 'utc' }).isValid,
    'must be a real calendar date',
  );
const localDateTime = z
  .string()
  .regex(LOCAL_DATE_TIME, 'must be a local date-time without offset, e.g. 2026-12-24T09:00')
  .refine(
    (value) => !LOCAL_DATE_TIME.test(value) || DateTime.fromISO(value, { zone: 'utc' }).isValid,
    'must be a real date and time',
  );
const clockTime = z.string().regex(CLOCK_TIME, 'must be a time HH:MM between 00:00 and 24:00');

/**
 * The largest amount, in minor units. Money columns are 32-bit integers on PostgreSQL (at most
 * 2,147,483,647), and a booking's total adds up to 10 services (the file's and the API's limit), so
 * each amount stays at or below a tenth of that, rounded down to a figure people can say.
 */
export const MAX_AMOUNT_MINOR = 200_000_000;

export const moneySchema = z.strictObject({
  amount: z
    .int()
    .min(0, 'must not be negative')
    .max(
      MAX_AMOUNT_MINOR,
      `must be at most ${MAX_AMOUNT_MINOR} (minor units), so that a booking of 10 services totals within what the database stores`,
    ),
  currency,
});

/**
 * A country whose phone numbers the engine reads and texts: a code libphonenumber knows. Not merely one
 * a language names: "UK" (reserved, the United Kingdom being GB), "EU" or "UN" were taken, and then no
 * customer's number was ever of the location's country (no SMS at all).
 */
const ALPHA_2 = /^[A-Z]{2}$/;
const countryCode = z
  .string()
  .regex(ALPHA_2, 'must be an ISO 3166-1 alpha-2 code in uppercase, e.g. GB')
  .refine((value) => value !== 'UK', 'is not an ISO 3166-1 country code: the United Kingdom is GB')
  // Zod runs every check whatever the earlier ones found: "gb" is GB in the wrong case, not a country
  // without phone numbers, and is told the first only.
  .refine(
    (value) => !ALPHA_2.test(value) || value === 'UK' || isSupportedCountry(value),
    'is not the ISO 3166-1 code of a country with phone numbers',
  );

/**
 * The public booking page's policies (design.md 9.1), one set per organisation: whether a booking made
 * there waits for its customer to prove the contact they gave (`code`) or not (`none`), the caps on
 * strangers, and the countries texted besides those of the locations. Given as the catalogue's
 * `policies`, or inside `organisation` (not both); absent, the defaults.
 */
export const organisationPoliciesSchema = z.strictObject({
  public_verification: z
    .enum(['code', 'none'])
    .default('code')
    .describe(
      'code: a booking made on the public page waits for the 6-digit code sent to the customer’s phone or e-mail; none: booked at once, on a client record of its own.',
    ),
  public_holds_per_contact: z
    .int()
    .min(0)
    .max(1000)
    .default(2)
    .describe('Unconfirmed public holds at once per phone or e-mail.'),
  public_bookings_per_contact_per_day: z
    .int()
    .min(0)
    .max(1000)
    .default(3)
    .describe('Public bookings per phone or e-mail in any 24 hours.'),
  public_attempts_per_address_per_hour: z
    .int()
    .min(0)
    .max(100_000)
    .default(10)
    .describe('Booking attempts (form posts) per client address per clock hour.'),
  public_bookings_per_organisation_per_hour: z
    .int()
    .min(0)
    .max(100_000)
    .default(30)
    .describe('Bookings made on the public page per clock hour, across every contact and address.'),
  sms_countries: z
    .array(countryCode)
    .max(250)
    .default([])
    .describe('ISO 3166-1 codes texted besides the countries of the locations.'),
  fee_waivers: z
    .enum(['staff', 'owner_admin'])
    .default('staff')
    .describe(
      'Who may waive a fee in the console: any staff account (staff) or owners and admins only (owner_admin).',
    ),
});

export const organisationSchema = z.strictObject({
  id: uuid.optional(),
  slug,
  name: displayName(200).describe('Shown to customers.'),
  currency,
  booking_reference_prefix: z.string().regex(/^[A-Z0-9]{1,8}$/, 'must be 1 to 8 uppercase letters or digits'),
  locale: z
    .string()
    .regex(/^[a-z]{2,3}(?:-[A-Z][a-z]{3})?(?:-(?:[A-Z]{2}|\d{3}))?$/, 'must be a locale such as en-GB'),
  policies: organisationPoliciesSchema
    .optional()
    .describe('The public booking page’s policies; or give them at the top level of the file, not both.'),
});

const policySchema = z.strictObject({
  slot_interval_minutes: minutes(1, 1440).default(15).describe('Grid of bookable start times.'),
  min_notice_minutes: minutes(0, 525_600)
    .default(60)
    .describe(
      'How soon before its start a time can still be booked; a booking with a deposit to pay or a Booking Protection card to save needs at least 15 minutes (its whole hold when shorter).',
    ),
  max_advance_days: z.int().min(0).max(3660).default(60).describe('How far ahead a time can be booked.'),
  cancellation_window_hours: z
    .int()
    .min(0)
    .max(8784)
    .default(24)
    .describe('A change closer to the start than this is late.'),
  late_cancellation: z
    .enum(['allow', 'forbid'])
    .default('allow')
    .describe('Whether a late cancellation is allowed (with its fee) or refused.'),
  late_reschedule: z
    .enum(['allow', 'forbid'])
    .default('allow')
    .describe('Whether a late reschedule is allowed or refused.'),
  pending_confirmation_hold_minutes: minutes(1, 10_080)
    .default(15)
    .describe('How long a booking waiting for the customer’s confirmation holds its time.'),
  pending_payment_hold_minutes: minutes(1, 10_080)
    .default(30)
    .describe('How long a booking waiting for its deposit holds its time.'),
  reminder_hours_before: z
    .int()
    .min(0)
    .max(8784)
    .default(24)
    .describe('Reminder to the customer that many hours before the start; 0: none.'),
  waitlist_offer_minutes: minutes(1, 1440)
    .default(15)
    .describe('How long a freed time is held for the waitlist entry it is offered to.'),
});

const percentage = z.int().min(0).max(100).nullish();
const protectionSchema = z.strictObject({
  applies: z.boolean().describe('Booking Protection: a card is saved before the booking is confirmed.'),
  late_cancellation_fee_percentage: percentage,
  no_show_fee_percentage: percentage,
});

/**
 * A time zone no IANA name has, with the one probably meant: a typo (`Europe/Londn`), or a city
 * written alone or with spaces (`London`, `New York`), which names its zone's last part.
 */
function unknownZoneMessage(value: string): string {
  const zones = Intl.supportedValuesOf('timeZone');
  const city = value.trim().replace(/ +/g, '_').toLowerCase();
  const meant =
    zones.find((zone) => zone.split('/').at(-1)!.toLowerCase() === city) ?? nearestKey(value, zones);
  return meant
    ? `must be a valid IANA time zone; did you mean "${meant}"?`
    : 'must be a valid IANA time zone, e.g. Europe/London';
}

export const locationSchema = z.strictObject({
  id: uuid.optional(),
  ref,
  slug,
  name: displayName(200),
  timezone: z
    .string()
    .superRefine((value, context) => {
      if (!IANAZone.isValidZone(value))
        context.addIssue({ code: 'custom', message: unknownZoneMessage(value) });
    })
    .describe('IANA time zone of the location’s hours and bookings, e.g. Europe/London.'),
  street_address: optionalText(200),
  city: optionalText(100),
  postal_code: optionalText(20),
  country: countryCode
    .nullish()
    .transform((value) => value ?? null)
    .describe('ISO 3166-1 alpha-2 code; customers’ numbers of this country are texted.'),
  phone: optionalPhone.describe('International number starting with +; said to customers.'),
  active: z.boolean().default(true).describe('An inactive location is not offered.'),
  closures: z
    .array(z.strictObject({ date: calendarDate, reason: optionalText(200) }))
    .default([])
    .describe('Days the location is closed.'),
  policy: policySchema.prefault({}).describe('The location’s booking policy; every field has a default.'),
  booking_protection: protectionSchema
    .prefault({ applies: false })
    .describe('Whether Booking Protection applies, and its fees in percent of the price.'),
});

const serviceDuration = minutes(1, 1440);
const overrideSchema = z.strictObject({
  duration_minutes: serviceDuration.optional(),
  price: moneySchema.optional(),
  /** null means "no deposit at this location"; absent means the service's deposit applies. */
  deposit: moneySchema.nullable().optional(),
  online_bookable: z.boolean().optional(),
});

export const serviceSchema = z.strictObject({
  id: uuid.optional(),
  ref,
  name: displayName(200),
  aliases,
  category: optionalText(100),
  duration_minutes: serviceDuration.describe('How long the service takes.'),
  buffer_after_minutes: minutes(0, 1440).default(0).describe('Time kept free after it (cleaning up).'),
  price: moneySchema,
  deposit: moneySchema
    .nullish()
    .transform((value) => value ?? null)
    .describe('Taken when booked; null or absent: none.'),
  online_bookable: z
    .boolean()
    .default(true)
    .describe('Whether customers and agents may book it (staff always can).'),
  locations: z.array(ref).describe('Refs of the locations offering it.'),
  overrides: z
    .record(z.string(), overrideSchema)
    .default({})
    .describe(
      'Per location ref: a different duration, price, deposit (null: none there) or online_bookable.',
    ),
});

const daySchema = z.array(z.tuple([clockTime, clockTime])).optional();
const weekSchema = z.strictObject({
  mon: daySchema,
  tue: daySchema,
  wed: daySchema,
  thu: daySchema,
  fri: daySchema,
  sat: daySchema,
  sun: daySchema,
});

/** A staff member's external calendars (design.md 9.6; docs/calendar-feeds.md). */
export const MAX_BUSY_CALENDARS = 5;

/**
 * An external calendar's address: https (webcal://, as calendar apps share them, is https), at most
 * 2,000 characters, no credentials. Where it may point (no private or loopback address unless
 * CALENDAR_ALLOW_LOOPBACK=1) is checked by the refresher on every fetch, against the addresses its
 * name resolves to then; the console shows a refusal as the calendar's last error.
 */
const busyCalendarUrl = z
  .string()
  .max(2000, 'must be at most 2,000 characters')
  .transform((value) => value.trim().replace(/^webcals?:\/\//i, 'https://'))
  .superRefine((value, context) => {
    const problem = (message: string) => context.addIssue({ code: 'custom', message });
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return problem('must be an https (or webcal) address without user name or password');
    }
    if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password) {
      return problem('must be an https (or webcal) address without user name or password');
    }
    // Plain http is fetched only from this machine (CALENDAR_ALLOW_LOOPBACK=1): anywhere else it could
    // never be read, and would sit in the catalogue blocking nothing.
    if (url.protocol === 'http:' && !namesThisMachine(url)) {
      return problem('must be an https (or webcal) address; plain http only to this machine (localhost)');
    }
    // The URL parser drops tabs and line breaks silently: two addresses would be glued into one, and
    // the address kept would not be the one the console and `booking calendars list` show.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
    if (/[\s\u0000-\u001f\u007f]/.test(value)) problem('must be one address, without spaces or line breaks');
  });

export const staffSchema = z.strictObject({
  id: uuid.optional(),
  ref,
  name: displayName(200),
  aliases,
  active: z.boolean().default(true).describe('An inactive staff member is not offered.'),
  services: z.array(ref).default([]).describe('Refs of the services they perform.'),
  working_hours: z
    .record(z.string(), weekSchema)
    .default({})
    .describe('Per location ref, a week: mon to sun, each a list of [start, end] local times.'),
  time_off: z
    .array(
      z.strictObject({
        id: uuid.optional(),
        start: localDateTime,
        end: localDateTime,
        reason: optionalText(200),
      }),
    )
    .default([])
    .describe(
      "Times away, blocking them at every location: local date-times of the first location in their working_hours (one working in several time zones writes them in that one's), else of the organisation's first location.",
    ),
  busy_calendars: z
    .array(busyCalendarUrl)
    .max(MAX_BUSY_CALENDARS, `must list at most ${MAX_BUSY_CALENDARS} calendars`)
    .refine((urls) => new Set(urls).size === urls.length, 'must not list one calendar twice')
    .describe(
      'https (or webcal) addresses of their own calendars, whose busy times block them (plain http only to this machine).',
    )
    .default([]),
});

export const clientSchema = z.strictObject({
  id: uuid.optional(),
  ref,
  first_name: personName,
  last_name: personName,
  phone: optionalPhone.describe('International number starting with +, e.g. +442071234567; stored in E.164.'),
  email: optionalEmail.describe('Stored lower-cased.'),
  marketing_consent: z.boolean().default(false).describe('Whether the client agreed to marketing messages.'),
});

const REFERENCE_SHAPE = new RegExp(`^[A-Z0-9]{1,8}-[${REFERENCE_ALPHABET}]{6}$`);

/**
 * An existing appointment brought over from another system. References are matched like the API
 * matches them (any case, spaces ignored) and stored in their canonical upper-case form; whether the
 * prefix is the organisation's is a cross-entity check.
 */
export const bookingSchema = z.strictObject({
  id: uuid.optional(),
  reference: z
    .string()
    .transform(normaliseReference)
    .refine(
      (value) => REFERENCE_SHAPE.test(value),
      `must be the organisation's prefix, a hyphen and 6 characters of ${REFERENCE_ALPHABET}`,
    )
    .optional(),
  location: ref.describe('Ref of the location.'),
  services: z
    .array(ref)
    .min(1, 'must list at least one service')
    .max(10, 'must list at most 10 services')
    .describe('Refs of its services, in order.'),
  staff: ref.describe('Ref of the staff member.'),
  client: ref.describe('Ref of the client.'),
  starts_at: localDateTime.describe('Local date and time at the location, without offset.'),
  status: z.enum(BOOKING_STATUSES).describe('The booking’s status as it stands in the other system.'),
  notes: optionalText(1000),
  deposit_paid: z.boolean().default(false).describe('Whether its deposit was paid.'),
  protection: z
    .strictObject({
      setup_status: z
        .enum(['pending', 'failed', 'succeeded'])
        .nullish()
        .transform((value) => value ?? null),
      payment_method_saved: z.boolean().default(false),
    })
    .prefault({}),
});

/** The whole file. The policies may be given here or in `organisation`, not both (validate.ts checks). */
export const catalogueSchema = z.strictObject({
  /** Where editors find this format (docs/catalogue.schema.json); the importer reads nothing from it. */
  $schema: z.string().optional(),
  organisation: organisationSchema,
  policies: organisationPoliciesSchema.optional(),
  locations: z.array(locationSchema).min(1, 'must list at least one location'),
  services: z.array(serviceSchema).default([]),
  staff: z.array(staffSchema).default([]),
  clients: z.array(clientSchema).default([]),
  bookings: z.array(bookingSchema).default([]),
});

export type Catalogue = z.output<typeof catalogueSchema>;
export type CatalogueOrganisation = z.output<typeof organisationSchema>;
export type CataloguePolicies = z.output<typeof organisationPoliciesSchema>;
export type CatalogueLocation = z.output<typeof locationSchema>;
export type CatalogueService = z.output<typeof serviceSchema>;
export type CatalogueStaff = z.output<typeof staffSchema>;
export type CatalogueClient = z.output<typeof clientSchema>;
export type CatalogueMoney = z.output<typeof moneySchema>;
export type CatalogueBooking = z.output<typeof bookingSchema>;
