import { z } from 'zod';
import type { Availability } from '../domain/availability/types.ts';
import { daysBetween, isCalendarDate, LAST_CALENDAR_DATE } from '../domain/availability/zone-calendar.ts';
import type { Location } from '../domain/catalogue.ts';
import { describeDuration } from '../domain/duration.ts';
import { formatLocal } from '../domain/time-format.ts';
import { queryInteger, Uuid } from './common.ts';
import { DayHoursResource } from './location-info.ts';

export const MAX_SERVICE_IDS = 10;

/**
 * A UUID as text, any case (ids are compared in lower case): the pattern each id is checked against
 * below (an RFC 4122 version and variant, or the nil and max UUIDs), unanchored, so the document
 * refuses what the service refuses.
 */
const UUID_TEXT = z.regexes.uuid().source.replace(/^\^/, '').replace(/\$$/, '');

export { isCalendarDate };

/** Comma-separated UUIDs, 1 to 10, no duplicates; the order is the booking order. */
export const ServiceIdList = z
  .string()
  // Eleven ids are over this before the count below is checked: said as the count, and for one long
  // value that is no list at all, as the form the ids take.
  .max(MAX_SERVICE_IDS * 40, `at most ${MAX_SERVICE_IDS} service ids, each a UUID, separated by commas`)
  .meta({ pattern: `^${UUID_TEXT}(,${UUID_TEXT}){0,${MAX_SERVICE_IDS - 1}}$` })
  .transform((value) => value.split(',').map((id) => id.trim().toLowerCase()))
  .pipe(
    z
      .array(z.uuid('each id must be a UUID'))
      .min(1, 'give at least one service id')
      .max(MAX_SERVICE_IDS, `at most ${MAX_SERVICE_IDS} service ids`)
      .refine((ids) => new Set(ids).size === ids.length, 'must not name a service twice'),
  );

export const LocalDate = z
  .string()
  .refine(isCalendarDate, 'must be a calendar date written YYYY-MM-DD')
  .meta({ format: 'date', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' });

export const AvailabilityQuery = z
  .strictObject({
    service_ids: ServiceIdList.describe(
      'Comma-separated service UUIDs (1 to 10, no duplicates), in booking order.',
    ),
    date: LocalDate.describe("Local date in the location's time zone where the search starts (YYYY-MM-DD)."),
    days: queryInteger(1, 14).optional().describe('Days searched forward from date, 1 to 14 (default 1).'),
    staff_id: z.uuid().optional().describe('Only this staff member; omitted means any staff.'),
  })
  .refine(
    // Only a real date is compared: a bad one is refused as date already.
    (query) =>
      !isCalendarDate(query.date) || daysBetween(query.date, LAST_CALENDAR_DATE) >= (query.days ?? 1) - 1,
    { path: ['days'], message: `the days searched must end by ${LAST_CALENDAR_DATE}` },
  );

export const AvailabilityResource = z
  .object({
    location_slug: z.string(),
    timezone: z.string().describe('IANA time zone of the location.'),
    service_ids: z.array(Uuid),
    duration: z.object({
      minutes: z.int().describe('Total slot length.'),
      display: z.string().describe('Human-readable, e.g. "1 hour 15 minutes".'),
    }),
    slots: z.array(
      z.object({
        starts_at: z.string().describe("RFC 3339 with the location's offset in force then."),
        ends_at: z.string(),
        staff_id: Uuid.describe('Who this slot books (the any-staff choice when staff_id was not given).'),
      }),
    ),
    closed_days: z
      .array(
        z.object({
          date: z.string().describe('Local date, YYYY-MM-DD.'),
          reason: z
            .enum(['closure', 'nobody_works'])
            .describe('A closure of the location, or nobody who delivers these services works that day.'),
          closure_reason: z.string().nullable().describe("The closure's reason, e.g. Christmas Day."),
        }),
      )
      .describe('The days searched on which the location is closed for these services. An addition to v1.'),
    staff_works: z
      .array(
        z.object({
          location_slug: z.string(),
          location_name: z.string(),
          hours: z.array(DayHoursResource).describe('Only the weekdays they work there.'),
        }),
      )
      .optional()
      .describe(
        'With staff_id, when a day searched is one the staff member does not work: where and when they work. An addition to v1.',
      ),
  })
  .meta({ id: 'Availability' });

export function presentAvailability(
  location: Location,
  availability: Availability,
): z.infer<typeof AvailabilityResource> {
  return {
    location_slug: location.slug,
    timezone: location.timezone,
    service_ids: availability.services.map((s) => s.id),
    duration: { minutes: availability.totalMinutes, display: describeDuration(availability.totalMinutes) },
    slots: availability.slots.map((slot) => ({
      starts_at: formatLocal(slot.startsAt, location.timezone),
      ends_at: formatLocal(slot.endsAt, location.timezone),
      staff_id: slot.staffId,
    })),
    closed_days: availability.closedDays.map((day) => ({
      date: day.date,
      reason: day.cause,
      closure_reason: day.closureReason,
    })),
    ...(availability.staffWorks && {
      staff_works: availability.staffWorks.map((w) => ({
        location_slug: w.locationSlug,
        location_name: w.locationName,
        hours: w.hours,
      })),
    }),
  };
}
