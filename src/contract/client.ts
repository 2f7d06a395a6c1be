import { z } from 'zod';
import type { Usual } from '../domain/booking/usual.ts';
import { type Client, NAME_MAX_LENGTH } from '../domain/client.ts';
import { formatLocal, formatUtc } from '../domain/time-format.ts';
import { omittable, Uuid } from './common.ts';

export const ClientResource = z
  .object({
    id: Uuid,
    first_name: z.string(),
    last_name: z.string(),
    phone: z.string().nullable().describe('E.164.'),
    email: z.string().nullable(),
    marketing_consent: z.boolean(),
    created_at: z.string().describe('UTC, RFC 3339.'),
  })
  .meta({ id: 'Client' });

/**
 * What the OpenAPI document says of an input the service checks itself (with libphonenumber, zod's
 * e-mail rule, names counted in code points): never looser than the service. The service may take
 * more (a phone with spaces, a name with surrounding blanks, trimmed), never less.
 */
export const E164 = { pattern: '^\\+[1-9][0-9]{6,14}$' };
const EMAIL = { format: 'email', maxLength: 254 };

/**
 * No control character (C0 or C1) nor line separator, and a character that shows: besides blanks and
 * the format characters that show nothing (zero-width spaces, direction marks, the soft hyphen: VISIBLE).
 */
const NOT_IN_A_NAME = '\\u0000-\\u001F\\u007F-\\u009F\\u2028\\u2029';
const SHOWS_NOTHING =
  '\\u00AD\\u061C\\u180E\\u200B-\\u200F\\u202A-\\u202E\\u2060-\\u2064\\u2066-\\u206F\\uFEFF';
const NAME_PATTERN = `^[^${NOT_IN_A_NAME}]*[^\\s${NOT_IN_A_NAME}${SHOWS_NOTHING}][^${NOT_IN_A_NAME}]*$`;

const Name = z
  .string()
  .min(1)
  .max(200)
  .meta({ maxLength: NAME_MAX_LENGTH, pattern: NAME_PATTERN })
  .describe(`1 to ${NAME_MAX_LENGTH} characters (code points), not all blank, no control characters.`);

export const ClientQuery = z.strictObject({
  phone: z.string().max(40).meta(E164).optional().describe('E.164 with country code, e.g. +447911123456.'),
  email: z.string().max(254).meta(EMAIL).optional(),
});

export const ClientIdParams = z.strictObject({ client_id: z.uuid().describe('The client id.') });

export const NewClientBody = z
  .strictObject({
    first_name: Name,
    last_name: Name,
    phone: z.string().max(40).meta(E164).nullable().optional().describe('E.164; phone or email is required.'),
    email: z.string().max(254).meta(EMAIL).nullable().optional().describe('phone or email is required.'),
    marketing_consent: omittable(z.boolean()).describe('Default false.'),
  })
  .meta({ id: 'NewClient' });

/** A new client as sent (NewClientBody, parsed) in the service layer's words. */
export function newClientOf(body: z.output<typeof NewClientBody>) {
  return {
    firstName: body.first_name,
    lastName: body.last_name,
    phone: body.phone,
    email: body.email,
    marketingConsent: body.marketing_consent,
  };
}

export function presentClient(client: Client): z.infer<typeof ClientResource> {
  return {
    id: client.id,
    first_name: client.firstName,
    last_name: client.lastName,
    phone: client.phone,
    email: client.email,
    marketing_consent: client.marketingConsent,
    created_at: formatUtc(client.createdAt),
  };
}

export const UsualResource = z
  .object({
    service_ids: z.array(Uuid).describe('The services of their last visit (or of the one booked), in order.'),
    staff_id: Uuid,
    location_slug: z.string(),
    every_weeks: z
      .int()
      .nullable()
      .describe(
        "Weeks between visits: their series' rule, or the typical gap between their visits; null when unknown or longer than a series repeats (12).",
      ),
    last_starts_at: z.string().describe("The visit it is read from, local time with the location's offset."),
    next_due_date: z
      .string()
      .nullable()
      .describe(
        'YYYY-MM-DD: the gap between visits after their latest visit of these services, booked ones included; or null.',
      ),
  })
  .meta({ id: 'Usual' });

export function presentUsual(
  usual: Usual & { locationSlug: string; timezone: string },
): z.infer<typeof UsualResource> {
  return {
    service_ids: usual.serviceIds,
    staff_id: usual.staffId,
    location_slug: usual.locationSlug,
    every_weeks: usual.everyWeeks,
    last_starts_at: formatLocal(usual.lastStartsAt, usual.timezone),
    next_due_date: usual.nextDueDate,
  };
}
