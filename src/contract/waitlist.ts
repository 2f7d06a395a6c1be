import { z } from 'zod';
import { AppError, isAppError } from '../domain/errors.ts';
import { formatLocal, formatUtc } from '../domain/time-format.ts';
import { TIMES_OF_DAY, WAITLIST_STATUSES, type WaitlistEntry } from '../domain/waitlist.ts';
import { NewClientBody } from './client.ts';
import { LocationSlug, omittable, PageCursor, PageLimit, Uuid } from './common.ts';

/** The waitlist over REST (design.md 9.4; docs/waitlist.md). */

const LocalDate = z.iso.date().describe('A local date of the location, YYYY-MM-DD.');

export const TimeOfDayEnum = z
  .enum(TIMES_OF_DAY)
  .describe('morning: before 12:00; afternoon: 12:00 to 17:00; evening: from 17:00 (local start).')
  .meta({ id: 'TimeOfDay' });

export const NewWaitlistEntryBody = z
  .strictObject({
    location_slug: LocationSlug,
    service_ids: z
      .array(z.uuid())
      .min(1)
      .max(10)
      .refine(
        (ids) => new Set(ids.map((id) => id.toLowerCase())).size === ids.length,
        'must not name a service twice',
      )
      .describe('The services wanted, in booking order, each bookable online at the location.'),
    staff_id: omittable(z.uuid()).describe('Omitted: any staff member who does them.'),
    client_id: omittable(z.uuid()).describe('A client on file; or give `client`.'),
    client: omittable(NewClientBody).describe('A new client (found by phone or e-mail when on file).'),
    from_date: LocalDate,
    to_date: LocalDate.describe(
      'The last local date wanted: the entry spans at most 92 days, from_date and to_date counted (at most 91 days after from_date).',
    ),
    times: omittable(z.array(TimeOfDayEnum).max(3)).describe('Omitted or empty: any time of day.'),
  })
  .refine((body) => (body.client_id === undefined) !== (body.client === undefined), {
    message: 'Give exactly one of client_id and client.',
    path: ['client_id'],
  })
  .meta({ id: 'NewWaitlistEntry' });

/** The fields of a new client given inline (`client`). */
const CLIENT_FIELDS: readonly string[] = Object.keys(NewClientBody.shape);

/**
 * A refusal of one of an inline client's own fields (a phone that is no person's own, one a digit
 * short) names `client`, as the body's shape refusals of it do and the document says, and says which
 * of its fields ("client.phone is a premium-rate number..."): `phone` alone names no field of the body.
 */
export function refusalNamingClient(error: unknown): never {
  if (
    isAppError(error) &&
    error.code === 'invalid_request' &&
    error.param &&
    CLIENT_FIELDS.includes(error.param)
  ) {
    const message = error.message.startsWith(`${error.param} `)
      ? `client.${error.message}`
      : `client.${error.param}: ${error.message}`;
    throw new AppError(error.code, message, 'client', error.details);
  }
  throw error;
}

export const WaitlistQuery = z.strictObject({
  location_slug: z.string().min(1).max(200).optional(),
  status: z.enum(WAITLIST_STATUSES).optional().describe('Omitted: every status.'),
  cursor: PageCursor,
  limit: PageLimit,
});

export const WaitlistEntryParams = z.strictObject({ id: z.uuid().describe('The entry id.') });

export const WaitlistEntryResource = z
  .object({
    id: Uuid,
    location_slug: z.string(),
    client_id: Uuid,
    service_ids: z.array(Uuid),
    staff_id: Uuid.nullable(),
    from_date: z.string(),
    to_date: z.string(),
    times: z.array(TimeOfDayEnum).nullable().describe('null: any time of day.'),
    status: z
      .enum(WAITLIST_STATUSES)
      .describe('waiting; booked (an offer was claimed); left; ended (past to_date).'),
    offer: z
      .object({
        booking_reference: z.string().describe('The hold (a pending_confirmation booking) made for it.'),
        staff_id: Uuid,
        starts_at: z
          .string()
          .describe(
            "The time held, in the location's time zone with the offset in force (as the Booking's).",
          ),
        expires_at: z.string().describe('UTC: when the time goes to the next entry unless claimed.'),
      })
      .nullable()
      .describe('The time held for this entry now, if any.'),
    booking_id: Uuid.nullable().describe('The booking it ended with (status booked).'),
    booking_reference: z
      .string()
      .nullable()
      .describe("That booking's reference (status booked): GET /v1/bookings/{reference} reads it."),
    created_at: z.string().describe('UTC: the joining order.'),
    ended_at: z.string().nullable().describe('UTC.'),
  })
  .meta({ id: 'WaitlistEntry' });

export function presentWaitlistEntry(entry: WaitlistEntry): z.infer<typeof WaitlistEntryResource> {
  return {
    id: entry.id,
    location_slug: entry.locationSlug,
    client_id: entry.clientId,
    service_ids: entry.serviceIds,
    staff_id: entry.staffId,
    from_date: entry.fromDate,
    to_date: entry.toDate,
    times: entry.times,
    status: entry.status,
    offer: entry.offer && {
      booking_reference: entry.offer.bookingReference,
      staff_id: entry.offer.staffId,
      starts_at: formatLocal(entry.offer.startsAt, entry.offer.timezone),
      expires_at: formatUtc(entry.offer.expiresAt),
    },
    booking_id: entry.bookingId,
    booking_reference: entry.bookingReference,
    created_at: formatUtc(entry.createdAt),
    ended_at: entry.endedAt === null ? null : formatUtc(entry.endedAt),
  };
}
