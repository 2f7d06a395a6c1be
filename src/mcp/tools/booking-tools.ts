import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from '../../app/idempotency.ts';
import { LIVE_STATUSES } from '../../domain/booking/state-machine.ts';
import { localDateAt } from '../../domain/time-format.ts';
import type { Booking, BookingApi, CreatedBooking, NewBooking, Service } from '../booking-api.ts';
import {
  type Place,
  placeOfSlug,
  resolveLocation,
  resolveServices,
  resolveStaff,
  resolveStart,
} from '../resolution.ts';
import { speakPrice } from '../speech.ts';
import {
  nearest,
  type SpokenBooking,
  SpokenBookingSchema,
  speakBookings,
  spokenSlots,
} from '../spoken-bookings.ts';
import { BadArgument, fail, failure, isError, type SpokenSlot } from '../tool-kit.ts';
import { defineTool, READ_ONLY } from '../tool-spec.ts';
import { NewClientInput, register } from './client-tools.ts';
import { ServicesArgument } from './find-slots.ts';

/** How many free times are offered when the one asked for is taken. */
const ALTERNATIVES = 3;

const Reference = z.string().min(1).max(40).describe('The booking reference, e.g. NHC-7KQ2MX (any case).');
const Money = z.object({ amount: z.int(), currency: z.string() });

const BookingOutput = {
  booking: SpokenBookingSchema.describe(
    'The booking (the REST Booking), with names and the words to read it back.',
  ),
  spoken: z.string(),
};

export const bookTool = defineTool({
  name: 'book',
  title: 'Book an appointment',
  description:
    'Books a time find_slots offered, for a client on file (client_id) or a caller described by name and phone or ' +
    'e-mail (registered or found on the way). Retried with the same arguments it returns the same booking, never ' +
    'a second one. If the time was just taken, ok is false with code conflict and the nearest free times in ' +
    'alternatives. A deposit makes it pending_payment with payment_url for the caller.',
  input: {
    location: z.string().optional().describe('Slug or name; optional with a single location.'),
    services: ServicesArgument,
    starts_at: z.string().describe("A slot's starts_at from find_slots (or a local YYYY-MM-DDTHH:MM)."),
    staff: z
      .string()
      .optional()
      .describe("A staff member by name or id; omitted: the slot's own or anyone free."),
    client_id: z.string().optional().describe('From lookup_client or register_client.'),
    client: NewClientInput.optional().describe('A new caller, instead of client_id.'),
    notes: z.string().max(1000).optional().describe('For the stylist, e.g. "fringe only".'),
  },
  output: {
    ...BookingOutput,
    status: z.string(),
    deposit: Money.nullable(),
    deposit_spoken: z.string().nullable(),
    payment_url: z
      .string()
      .nullable()
      .describe('Where the caller pays the deposit; the booking is held until then.'),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, { api }) {
    const place = await resolveLocation(api, args.location);
    const services = await resolveServices(api, place, args.services);
    const staff = args.staff === undefined ? undefined : await resolveStaff(api, place, args.staff, services);
    const startsAt = resolveStart(args.starts_at, place, api.now());
    const clientId = await clientOf(api, args);
    const body: NewBooking = {
      location_slug: place.location.slug,
      service_ids: services.map((s) => s.id),
      client_id: clientId,
      starts_at: startsAt,
      ...(staff && { staff_id: staff.id }),
      ...(args.notes !== undefined && { notes: args.notes }),
    };
    let created: CreatedBooking;
    try {
      created = await bookOnce(api, body);
    } catch (error) {
      throw await explainRefusal(api, error, place, services, startsAt, staff?.id);
    }
    const [summary] = await speakBookings(api, [created]);
    const deposit = created.deposit;
    return {
      booking: summary!,
      status: created.status,
      spoken: `Booked: ${summary!.spoken}. The reference is ${summary!.reference_spoken}.`,
      deposit,
      deposit_spoken: deposit ? speakPrice(deposit.amount, deposit.currency, place.locale) : null,
      payment_url: created.payment_url,
      ...(deposit && {
        hint: `A deposit of ${speakPrice(deposit.amount, deposit.currency, place.locale)} secures it: give the caller the payment link; unpaid, the booking lapses.`,
      }),
    };
  },
});

/**
 * POST /bookings with a key made of the resolved arguments, so a host's retry (or a second call with
 * the same request however it was worded) gets the booking the first one made. A replay answers with
 * the response stored back then, so the booking's status now is asked for: if it is no longer live
 * (cancelled meanwhile, or its deposit hold lapsed), the caller wants a new one, and the key is
 * extended with the old reference, so each live booking still has exactly one key.
 */
async function bookOnce(api: BookingApi, body: NewBooking): Promise<CreatedBooking> {
  let key = `mcp-book-${createHash('sha256').update(canonicalJson(body)).digest('hex')}`;
  for (;;) {
    const created = await api.createBooking(body, key);
    const current = await api.getBooking(created.reference);
    if ((LIVE_STATUSES as readonly string[]).includes(current.status)) {
      const unpaid = current.status === 'pending_payment';
      return { ...created, ...current, payment_url: unpaid ? created.payment_url : null };
    }
    key = `${key}-after-${created.reference}`;
  }
}

async function clientOf(
  api: BookingApi,
  args: { client_id?: string | undefined; client?: z.infer<typeof NewClientInput> | undefined },
): Promise<string> {
  if (args.client_id !== undefined && args.client_id.trim() !== '') return args.client_id.trim();
  if (args.client) return (await register(api, args.client)).client.id;
  throw new BadArgument(
    'client_id',
    'give client_id (from lookup_client) or client with a name and phone or e-mail.',
  );
}

/** The outcome to report for a refused booking or move: the engine's error, made conversational. */
async function explainRefusal(
  api: BookingApi,
  error: unknown,
  place: Place,
  services: readonly Service[],
  startsAt: string,
  staffId: string | undefined,
  booking?: Booking,
): Promise<unknown> {
  const passed = Date.parse(startsAt) <= api.now();
  if (isError(error, 'conflict', 'slot_unavailable') || (passed && isError(error, 'conflict', 'too_soon'))) {
    const alternatives = await alternativesNear(api, place, services, startsAt, staffId);
    const kind = passed ? 'time_passed' : 'slot_taken';
    return failure(kind, { alternatives: alternatives.length }, { alternatives, detail: error.message });
  }
  if (isError(error, 'conflict', 'late_change')) {
    return failure('late_change', { detail: error.message, phone: place.phoneSpoken });
  }
  if (isError(error, 'conflict', 'not_changeable')) {
    return failure('not_changeable', { status: booking?.status ?? 'closed' }, { detail: error.message });
  }
  if (isError(error, 'booking_protection_required')) {
    return failure('protection_required', { location: place.location.name, phone: place.phoneSpoken });
  }
  return error;
}

/** Free times on the day asked for (and the day after) nearest to the time asked for. */
async function alternativesNear(
  api: BookingApi,
  place: Place,
  services: readonly Service[],
  startsAt: string,
  staffId: string | undefined,
): Promise<SpokenSlot[]> {
  const target = Date.parse(startsAt);
  const [found, team] = await Promise.all([
    api.availability(place.location.slug, {
      serviceIds: services.map((s) => s.id),
      date: localDateAt(target, place.zone),
      days: 2,
      staffId,
    }),
    api.listStaff(place.location.slug),
  ]);
  const others = found.slots.filter((slot) => Date.parse(slot.starts_at) !== target);
  return spokenSlots(nearest(others, target, ALTERNATIVES), place, team, api.now());
}

/** The booking with this reference, or ok false booking_not_found. */
async function existing(api: BookingApi, reference: string): Promise<Booking> {
  try {
    return await api.getBooking(reference);
  } catch (error) {
    if (isError(error, 'not_found')) fail('booking_not_found', { reference });
    throw error;
  }
}

export const getBookingTool = defineTool({
  name: 'get_booking',
  title: 'Read a booking',
  description: 'A booking by its reference: status, time, services, staff and the words to read it back.',
  input: { reference: Reference },
  output: {
    ...BookingOutput,
    pending: z
      .object({ requirements: z.array(z.string()), expires_at: z.string() })
      .nullable()
      .describe('Steps the customer still has to finish online, and when the hold lapses.'),
  },
  annotations: READ_ONLY,
  async run(args, { api }) {
    const booking = await existing(api, args.reference);
    const [summary] = await speakBookings(api, [booking]);
    return {
      booking: summary!,
      spoken: `${summary!.spoken}, ${booking.status.replaceAll('_', ' ')}.`,
      pending: booking.pending_confirmation,
    };
  },
});

export const rescheduleTool = defineTool({
  name: 'reschedule',
  title: 'Move a booking',
  description:
    'Moves a booking to another free time (find_slots with the same services), optionally to another staff member; ' +
    'without staff it stays with the same one. ok false with code conflict: the time is taken (alternatives) or ' +
    'the shop does not allow changes this close to the appointment (hint).',
  input: {
    reference: Reference,
    starts_at: z.string().describe("The new start: a slot's starts_at from find_slots."),
    staff: z.string().optional().describe('Another staff member by name or id.'),
  },
  output: BookingOutput,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run(args, { api }) {
    const booking = await existing(api, args.reference);
    const place = await placeOfSlug(api, booking.location_slug);
    // In the booking's order: availability takes the services back to back as listed.
    const offered = await api.listServices(place.location.slug);
    const services = booking.service_ids.flatMap((id) => offered.filter((s) => s.id === id));
    const staff = args.staff === undefined ? undefined : await resolveStaff(api, place, args.staff, services);
    const startsAt = resolveStart(args.starts_at, place, api.now());
    let moved: Booking;
    try {
      moved = await api.rescheduleBooking(booking.reference, {
        starts_at: startsAt,
        ...(staff && { staff_id: staff.id }),
      });
    } catch (error) {
      throw await explainRefusal(
        api,
        error,
        place,
        services,
        startsAt,
        staff?.id ?? booking.staff_id,
        booking,
      );
    }
    const [summary] = await speakBookings(api, [moved]);
    return { booking: summary!, spoken: `Moved: ${summary!.spoken}.` };
  },
});

export const cancelTool = defineTool({
  name: 'cancel',
  title: 'Cancel a booking',
  description:
    "Cancels a booking. The shop's policy window decides whether a paid deposit is refunded (deposit_refunded). " +
    'ok false with code conflict: too close to the appointment to cancel here, or already cancelled or past.',
  input: { reference: Reference, reason: z.string().max(1000).optional().describe('Shown to staff.') },
  output: {
    ...BookingOutput,
    cancelled_at: z.string(),
    deposit_refunded: z.boolean(),
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run(args, { api }) {
    const booking = await existing(api, args.reference);
    const place = await placeOfSlug(api, booking.location_slug);
    let cancelled: Awaited<ReturnType<BookingApi['cancelBooking']>>;
    try {
      cancelled = await api.cancelBooking(booking.reference, args.reason);
    } catch (error) {
      throw await explainRefusal(api, error, place, [], booking.starts_at, booking.staff_id, booking);
    }
    const [summary] = (await speakBookings(api, [{ ...booking, status: cancelled.status }])) as [
      SpokenBooking,
    ];
    return {
      booking: summary,
      spoken: `Cancelled: ${summary.spoken}.${cancelled.deposit_refunded ? ' The deposit will be refunded.' : ''}`,
      cancelled_at: cancelled.cancelled_at,
      deposit_refunded: cancelled.deposit_refunded,
    };
  },
});
