import { z } from 'zod';
import { CONFLICT_REASONS, type ConflictReason, ERROR_CODES } from '../domain/errors.ts';

/** Schemas shared by several resources. Named ones (`meta({ id })`) become OpenAPI components. */

export const ErrorEnvelope = z
  .object({
    error: z.object({
      code: z.enum(ERROR_CODES).describe('Machine-readable identifier; clients branch on it.'),
      message: z.string().describe('Human-readable text.'),
      param: z.string().optional().describe('The offending parameter, field or header.'),
      reason: z
        .enum(Object.keys(CONFLICT_REASONS) as [ConflictReason, ...ConflictReason[]])
        .optional()
        .describe(
          'With 409 conflict, why: too_soon (in the past or inside the minimum notice, or too soon to pay ' +
            'a deposit, save a Booking Protection card, enter a confirmation code or claim a waitlist offer ' +
            'before the start), too_far_ahead ' +
            '(beyond max_advance_days), closed (a closure, or nobody works that day), not_on_grid (not one ' +
            "of the location's start times), staff_not_working (the staff member does not work then; " +
            'param starts_at), slot_unavailable (otherwise allowed but taken: ask availability again), ' +
            'late_change (the policy window forbids it) or not_changeable (the booking is not live or has ' +
            'started). An addition to v1.',
        ),
      details: z
        .record(z.string(), z.unknown())
        .optional()
        .describe(
          'With a conflict reason, what answers it: min_notice_minutes, earliest_starts_at and hold_step (too_soon), last_date ' +
            '(too_far_ahead), date and closure_reason (closed), slot_interval_minutes (not_on_grid), ' +
            'staff_name and works (staff_not_working). An addition to v1.',
        ),
    }),
  })
  .meta({ id: 'Error' });

export const Money = z
  .object({
    amount: z.int().describe('Minor units.'),
    currency: z.string().length(3).describe('ISO 4217 code.'),
  })
  .meta({ id: 'Money' });

export const Uuid = z.uuid({ version: undefined }).describe('UUID (RFC 4122, lowercase).');

/**
 * Free text of at most `max` characters, counted as the OpenAPI document's maxLength counts them (JSON
 * Schema: code points), where zod's max would count UTF-16 units and refuse an emoji-rich text the
 * document allows.
 */
export function textOf(max: number) {
  return z
    .string()
    .refine((value) => value.length <= max || [...value].length <= max, `at most ${max} characters`)
    .meta({ maxLength: max });
}

/**
 * An optional body field whose `null` means the field omitted: clients written by a language model,
 * and strict function calling, send null for every optional field they have nothing for. The parsed
 * body never holds that null, so `{"notes": null}` is the same request as `{}` (its Idempotency-Key
 * fingerprint included). Only where null has no meaning of its own: no field of the API clears
 * anything with null. The OpenAPI document says the field takes null.
 */
export function omittable<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((value) => value ?? undefined);
}

/**
 * A body as sent, less its members sent null where `schema` takes null as the member omitted
 * (omittable): the form a body the schema refused is fingerprinted in, so that `{"notes": null}` and
 * `{}` are one request there too, as they are once parsed. Anything but an object is as sent.
 */
export function withoutOmittedNulls(schema: z.ZodObject, body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const shape: Record<string, z.ZodType | undefined> = schema.shape;
  const omittedAsNull = (name: string) => {
    const read = shape[name]?.safeParse(null);
    return read?.success === true && read.data === undefined;
  };
  return Object.fromEntries(
    Object.entries(body).filter(([name, value]) => value !== null || !omittedAsNull(name)),
  );
}

/**
 * A whole number in a query string, between `min` and `max`, written in decimal digits only: "5", not
 * "+5", "5e0", "0x5", " 5" or "5.0", which `Number()` (zod's coerce) would all read as 5. Documented
 * as the integer it is. However many digits, a number past `max` is said to be too big.
 */
export function queryInteger(min: number, max: number) {
  return z
    .string()
    .refine((value) => /^[0-9]+$/.test(value), 'must be a whole number written in digits')
    .pipe(z.coerce.number<string>().int().min(min).max(max))
    .meta({ type: 'integer', minimum: min, maximum: max });
}

/** The page size a list endpoint takes. */
export const PageLimit = queryInteger(1, 100).optional().describe('Page size, 1 to 100 (default 50).');

/** Where a list endpoint's next page starts. */
export const PageCursor = z
  .string()
  .min(1)
  .max(4096)
  .optional()
  .describe('Opaque, time-bound cursor from next_cursor.');

/** The query of every paginated list endpoint. */
export const PageQuery = z.strictObject({ cursor: PageCursor, limit: PageLimit });

/** For endpoints that take no query parameters: any one sent is refused by name, as everywhere else. */
export const NoQuery = z.strictObject({});

export const DEFAULT_PAGE_SIZE = 50;

export function listOf<T extends z.ZodType>(item: T, description: string) {
  return z
    .object({
      data: z.array(item),
      next_cursor: z.string().optional().describe('Present when more pages exist; pass it back as cursor.'),
    })
    .describe(description);
}

export function dataOf<T extends z.ZodType>(item: T) {
  return z.object({ data: item });
}

/** Errors every authenticated endpoint may answer with, besides its own. */
/** What any operation may answer when the storage refuses (a full disk), as /healthz says it. */
export const DATABASE_UNAVAILABLE =
  'database_unavailable: the database cannot store changes just now (its disk is full or failing) or cannot be reached; nothing changed, try again later.';

export const AUTHENTICATED_ERRORS = {
  401: ErrorEnvelope.describe('missing_api_key or invalid_api_key (param Authorization).'),
  403: ErrorEnvelope.describe('insufficient_scope, or https_required for plain HTTP from a remote client.'),
  429: ErrorEnvelope.describe('rate_limited; Retry-After gives the seconds to wait.'),
  500: ErrorEnvelope.describe('server_error.'),
  503: ErrorEnvelope.describe(DATABASE_UNAVAILABLE),
} as const;

/**
 * The longest slug a location (or an organisation) may have in the catalogue, far inside PostgreSQL's
 * index row limit (2704 bytes).
 */
export const SLUG_MAX_LENGTH = 200;

/**
 * A location's slug in a path. No length of its own: a longer one than any location may have is
 * simply one no location has (404, as for any unknown slug); the router refuses a segment past its own
 * limit first.
 */
export const SlugParams = z.strictObject({ slug: z.string().min(1).describe('Location slug.') });

/** A location's slug in a body: one longer than any location may have is unknown (404), as any other. */
export const LocationSlug = z.string().min(1);

/**
 * An Idempotency-Key: 1 to 255 printable ASCII characters ("any sufficiently unique string", the
 * contract says), spaces inside it too; none at either end, which HTTP drops from a header's value.
 */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

export function isIdempotencyKey(value: string): boolean {
  return value.length <= IDEMPOTENCY_KEY_MAX_LENGTH && IDEMPOTENCY_KEY_PATTERN.test(value);
}
