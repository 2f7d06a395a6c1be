import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from '../../app/idempotency.ts';
import { REPEAT_LIMITS } from '../../domain/booking/series.ts';
import { LIVE_STATUSES } from '../../domain/booking/state-machine.ts';
import { type OutboxKind, type OutboxNotice, sentSentence } from '../../domain/outbox.ts';
import { localDateAt } from '../../domain/time-format.ts';
import {
  alsoNamingContact,
  contactForms,
  nameForms,
  newClientContact,
  startForm,
} from '../argument-forms.ts';
import {
  type Booking,
  type BookingApi,
  type Cancellation,
  type NewBooking,
  ReplayedRefusal,
  type Service,
} from '../booking-api.ts';
import { BOOKING_CALLER_TEXT, CALLER_TEXT_NOTE, callerTextAt } from '../caller-text.ts';
import { explainNobodyFree, explainRefusal, refusedForOwnStaff } from '../refusals.ts';
import {
  namesNoOneInParticular,
  type Place,
  placeOfSlug,
  resolveLocation,
  resolveServices,
  resolveStaff,
  resolveStaffIfNamed,
  resolveStart,
} from '../resolution.ts';
import {
  speakInstants,
  speakOtherStylists,
  speakSeriesDates,
  speakVisits,
  VISITS_SAID_IN_FULL,
  weeksBetweenVisits,
} from '../series-words.ts';
import { speakDateTime, speakPrice } from '../speech.ts';
import { isWaitlistOffer, SpokenBookingSchema, speakBookings, statusSentence } from '../spoken-bookings.ts';
import { fail, isError, ReferenceArgument } from '../tool-kit.ts';
import { defineTool, READ_ONLY } from '../tool-spec.ts';
import { listed } from '../word-lists.ts';
import { feesSentence } from './booking-terms.ts';
import { ChangeOutput, describeChange, sentAfterChange, sentWhenCancelled } from './change-outcome.ts';
import { clientForBooking, NewClientInput } from './client-tools.ts';
import { ServicesArgument } from './find-slots.ts';
import { recipientsReached } from './recipients.ts';
import { waitlistAfterRelease } from './waitlist-tools.ts';

const Scope = z.enum(['one', 'following']).optional();

const BookingOutput = {
  booking: SpokenBookingSchema.describe(
    'The booking (the REST Booking), with names and the words to read it back.',
  ),
  spoken: z.string(),
};

/**
 * Where an answer with a booking carries text callers wrote: the booking, and each visit of its series
 * it lists (the REST Booking's `series.occurrences`, and the later visits a change with scope
 * following moves or cancels), each a booking with the note and name of its own.
 */
const BOOKING_ANSWER_CALLER_TEXT = ['booking', 'booking.series.occurrences[]', 'booking.following[]'].flatMap(
  (path) => callerTextAt(path, BOOKING_CALLER_TEXT),
);

export const bookTool = defineTool({
  name: 'book',
  title: 'Book an appointment',
  description:
    'Books a find_slots time for client_id or a new client, once per caller and time (existing true). ' +
    'Deposit: held until paid at payment_url. Booking Protection: a hold finished on booking_page_url. ' +
    `${CALLER_TEXT_NOTE}`,
  input: {
    location: z.string().optional(),
    services: ServicesArgument,
    starts_at: z.string().describe('A find_slots starts_at, or as said ("Tuesday at 2:30 pm").'),
    staff: z.string().optional().describe("Name or id; else the slot's own or anyone free."),
    client_id: z.string().optional().describe('From lookup_client or register_client.'),
    client: NewClientInput.optional().describe('A new client, instead of client_id.'),
    notes: z.string().max(1000).optional().describe('For the stylist.'),
    repeat: z
      .object({
        every_weeks: z.int().min(REPEAT_LIMITS.everyWeeks.min).max(REPEAT_LIMITS.everyWeeks.max),
        count: z.int().min(REPEAT_LIMITS.count.min).max(REPEAT_LIMITS.count.max),
      })
      .optional()
      .describe('A series: same time every every_weeks weeks, count visits.'),
  },
  output: {
    ...BookingOutput,
    series: z
      .object({
        id: z.string(),
        every_weeks: z.int(),
        count: z.int().describe('The visits of the series.'),
        occurrences: z.array(
          z.object({
            reference: z.string(),
            starts_at: z.string(),
            spoken: z.string(),
            status: z.string(),
            payment_url: z.string().optional(),
            booking_page_url: z.string().optional(),
          }),
        ),
      })
      .optional(),
    status: z.string(),
    existing: z.boolean().describe('true: the caller already held this booking; nothing new was made.'),
    payment_url: z
      .string()
      .nullable()
      .describe('Where the caller pays the deposit; the booking is held until then.'),
    booking_page_url: z
      .string()
      .optional()
      .describe(
        'Only for a pending_confirmation hold: the booking page where the caller finishes it (card, any deposit).',
      ),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  failureMembers: ['choices', 'alternatives', 'reason', 'clashes'],
  callerSupplied: BOOKING_ANSWER_CALLER_TEXT,
  formProblems: (given) => [
    ...startForm(given),
    ...contactForms(given, true),
    ...newClientContact(given),
    ...nameForms(given, true),
  ],
  async run(args, { api }) {
    const place = await resolveLocation(api, args.location);
    const services = await resolveServices(api, place, args.services);
    const staff = await resolveStaffIfNamed(api, place, args.staff, services);
    const startsAt = await resolveStart(api, place, args.starts_at).catch(
      alsoNamingContact(args, newClientContact),
    );
    const clientId = await clientForBooking(api, args, place.location.country);
    // A second booking of the same person at the same time is never what a caller wants (a retry
    // with a changed argument, another stylist named): book answers with the one they hold. Asked
    // for a series, only a series they hold is that answer; a single visit then is its first clash.
    const heldNow = async () => {
      const holding = await api.liveBookingAt(clientId, place.location.slug, startsAt);
      return args.repeat && !holding?.series_id ? undefined : holding;
    };
    let held = await heldNow();
    let booking: Booking;
    if (held) booking = held;
    else {
      const body: NewBooking = {
        location_slug: place.location.slug,
        service_ids: services.map((s) => s.id),
        client_id: clientId,
        starts_at: startsAt,
        ...(staff && { staff_id: staff.id }),
        ...(args.notes !== undefined && { notes: args.notes }),
        ...(args.repeat && { repeat: args.repeat }),
      };
      let made: Awaited<ReturnType<typeof bookOnce>>;
      try {
        made = await bookOnce(api, body, heldNow);
      } catch (error) {
        throw await explainRefusal(api, error, { place, services, startsAt, staffId: staff?.id, clientId });
      }
      if ('held' in made) held = made.held;
      booking = 'held' in made ? made.held : made.booked;
    }
    const series = args.repeat && booking.series_id ? await api.seriesBookings(booking.series_id) : [];
    const [summary] = await speakBookings(api, [booking]);
    const { deposit } = booking;
    const unpaid = booking.status === 'pending_payment' ? deposit : null;
    const unfinished = booking.status === 'pending_confirmation';
    const already = held ? 'You already have this booking; nothing new was booked. ' : '';
    const stepsLeft = `${unfinished ? ` ${stepsLeftSentence(booking, series)}` : ''}${seriesDepositsSentence(series, summary!.hold_expires_spoken, place.locale)}${await feesSentence(api, booking, place)}`;
    // The booking's transaction wrote its messages to whatever the client gave (see outbox-service).
    const sent = held ? '' : sentSentence(await noticesOf(api, clientId, booking.status), { brief: true });
    // A series the caller already held repeats by its own rule, whatever this call asked for.
    const everyWeeks =
      (held &&
        weeksBetweenVisits(
          series.map((b) => b.starts_at),
          place.zone,
        )) ??
      args.repeat?.every_weeks ??
      1;
    const repeats = series.length > 1 ? await seriesAnswer(api, series, everyWeeks, place) : null;
    const reference = repeats
      ? `The first visit's reference is ${summary!.reference_spoken}; each visit has its own.`
      : `The reference is ${summary!.reference_spoken}.`;
    return {
      booking: summary!,
      ...(repeats && { series: repeats.series }),
      status: booking.status,
      existing: held !== undefined,
      spoken: `${already}${statusSentence(summary!, place.locale)}${repeats ? ` ${repeats.spoken}` : ''} ${reference}${stepsLeft}${sent ? ` ${sent}` : ''}`,
      payment_url: booking.payment_url,
      // Only where it is the next step: every booking carries it too, and book's answer must stay short.
      ...(unfinished && booking.booking_page_url && { booking_page_url: booking.booking_page_url }),
      // When the link was sent, spoken says so (and book's answer must stay short).
      ...(unpaid && !sent && { hint: 'Give the caller the payment link.' }),
      // Nothing could be sent (a number of a country the salon does not text, and no e-mail): the
      // caller would otherwise wait for a text that never comes.
      ...(booking.status === 'confirmed' &&
        !held &&
        !sent && {
          hint: 'No confirmation could be sent: the salon does not text that number and there is no e-mail on file; tell the caller, and make sure they note the reference.',
        }),
      // When the link was sent, spoken says so and what is left to do.
      ...(unfinished &&
        !sent && {
          hint: 'Give the caller the booking page link; the booking is confirmed once they finish it there before the hold ends.',
        }),
    };
  },
});

/** "Its 3 later visits are cancelled too: ...", with any of them that is late and what that costs. */
async function laterVisitsCancelled(
  api: BookingApi,
  following: Cancellation['following'],
  place: Place,
  dryRun: boolean,
): Promise<string> {
  if (following.length === 0) return '';
  const bookings = await Promise.all(following.map((c) => api.getBooking(c.reference)));
  const starts = bookings.map((b) => b.starts_at);
  const when = speakVisits(starts, place, api.now());
  const visits = following.length === 1 ? 'visit' : 'visits';
  const costs = laterVisitsCosts(
    starts,
    following.map((c) => ({
      ...c.change,
      kept: c.deposit_refunded === false && c.change.deposit_refunded === false,
    })),
    place,
    api.now(),
    dryRun,
  );
  return ` Its ${following.length} later ${visits} ${dryRun ? 'would be' : following.length === 1 ? 'is' : 'are'} cancelled too${when}.${costs}`;
}

/**
 * What changing the later visits of a series means for them, each under its own policy window: the
 * ones that are late, any late-cancellation fee, a deposit kept. Up to VISITS_SAID_IN_FULL of them are
 * named, opening a sentence ("Tomorrow, Tuesday 9 March at 10 am is late."); more are counted.
 */
function laterVisitsCosts(
  starts: readonly string[],
  changes: readonly { late: boolean; fee: { amount: number; currency: string } | null; kept?: boolean }[],
  place: Place,
  now: number,
  dryRun: boolean,
): string {
  const which = (picked: boolean[]) => {
    const chosen = starts.filter((_, i) => picked[i]);
    const words =
      chosen.length > VISITS_SAID_IN_FULL
        ? chosen.length === starts.length
          ? `all ${chosen.length} of them`
          : `${chosen.length} of them`
        : listed(speakInstants(chosen, place, now));
    return { count: chosen.length, words, opening: words.charAt(0).toUpperCase() + words.slice(1) };
  };
  const late = which(changes.map((c) => c.late));
  const charged = changes.filter((c) => c.fee !== null && c.fee.amount > 0);
  const fee = which(changes.map((c) => c.fee !== null && c.fee.amount > 0));
  const kept = which(changes.map((c) => c.kept === true));
  const sentences: string[] = [];
  if (late.count > 0) sentences.push(`${late.opening} ${late.count === 1 ? 'is' : 'are'} late.`);
  if (fee.count > 0) {
    const currency = charged[0]!.fee!.currency;
    const oneCurrency = charged.every((c) => c.fee!.currency === currency);
    const total = oneCurrency
      ? ` (${speakPrice(
          charged.reduce((sum, c) => sum + c.fee!.amount, 0),
          currency,
          place.locale,
        )}${fee.count === 1 ? '' : ' in all'})`
      : '';
    sentences.push(`A late-cancellation fee ${dryRun ? 'would be' : 'is'} due for ${fee.words}${total}.`);
  }
  if (kept.count > 0) sentences.push(`The deposit is kept for ${kept.words}.`);
  return sentences.map((sentence) => ` ${sentence}`).join('');
}

/** A series booked: its visits, and the words saying when they are and with whom, where not the first's stylist. */
async function seriesAnswer(api: BookingApi, series: readonly Booking[], everyWeeks: number, place: Place) {
  const now = api.now();
  const live = series.filter((b) => (LIVE_STATUSES as readonly string[]).includes(b.status));
  // The team is read (over REST, a request) only for a series whose visits are not all with one stylist.
  const team = live.some((b) => b.staff_id !== live[0]?.staff_id)
    ? new Map((await api.listStaff(place.location.slug)).map((s) => [s.id, s.name]))
    : new Map<string, string>();
  return {
    spoken: `It repeats ${speakSeriesDates(
      live.map((b) => b.starts_at),
      everyWeeks,
      place,
      now,
    )}${speakOtherStylists(live, team, place, now)}.`,
    series: {
      id: series[0]!.series_id ?? '',
      every_weeks: everyWeeks,
      count: series.length,
      // Each visit's own link while it waits for one (a deposit, a card): each is its own booking.
      occurrences: live.map((b) => ({
        reference: b.reference,
        starts_at: b.starts_at,
        spoken: speakDateTime(Date.parse(b.starts_at), place.zone, place.locale, now),
        status: b.status,
        ...(b.status === 'pending_payment' && b.payment_url && { payment_url: b.payment_url }),
        ...(b.status === 'pending_confirmation' &&
          b.booking_page_url && { booking_page_url: b.booking_page_url }),
      })),
    },
  };
}

/**
 * For a series whose visits wait for their deposits: each has its own, paid at its own link, and
 * lapses on its own when its hold ends (docs/recurring.md), so a caller who pays the first link alone
 * keeps the first visit alone. "Held for the deposit of 20 pounds" said of the first is not all of it.
 */
function seriesDepositsSentence(
  series: readonly Booking[],
  holdSpoken: string | null,
  locale: Place['locale'],
): string {
  const owing = series.filter((b) => b.status === 'pending_payment' && b.deposit !== null);
  const first = owing[0]?.deposit;
  if (owing.length < 2 || !first) return '';
  const amounts = owing.map((b) => b.deposit!.amount);
  const each = amounts.every((a) => a === first.amount)
    ? ` of ${speakPrice(first.amount, first.currency, locale)}`
    : '';
  const total = speakPrice(
    amounts.reduce((sum, a) => sum + a, 0),
    first.currency,
    locale,
  );
  // The first visit's hold is said when it is every owing visit's (a series the caller held, its
  // first visit paid already, says none).
  const oneHold = owing.every((b) => b.hold_expires_at === series[0]?.hold_expires_at);
  const by = oneHold && holdSpoken ? `by ${holdSpoken}` : 'in time';
  const live = series.filter((b) => (LIVE_STATUSES as readonly string[]).includes(b.status)).length;
  const which =
    owing.length === live
      ? `Each of the ${owing.length} visits has its`
      : `${owing.length} of the visits each have their`;
  return ` ${which} own deposit${each} (${total} in all) and own payment link; a visit whose deposit is not paid ${by} lapses.`;
}

/**
 * A preview of a change of one visit of a series (scope one): the agent hears that the later visits
 * stay as they are, so it can ask whether the caller means them too ("cancel my appointment" said of
 * a standing one). Nothing with scope following, or for the last visit.
 */
async function laterVisitsStayNote(
  api: BookingApi,
  booking: Booking,
  scope: 'one' | 'following' | undefined,
): Promise<string> {
  if (scope === 'following' || !booking.series_id) return '';
  const later = (await api.seriesBookings(booking.series_id)).filter(
    (b) =>
      Date.parse(b.starts_at) > Date.parse(booking.starts_at) &&
      (LIVE_STATUSES as readonly string[]).includes(b.status),
  ).length;
  if (later === 0) return '';
  const stay = later === 1 ? '1 later visit stays as it is' : `${later} later visits stay as they are`;
  return ` It is one visit of a series: its ${stay} unless the caller wants ${later === 1 ? 'it' : 'them'} changed too (scope following).`;
}

/** A dry run's next step, for the agent (its spoken is for the caller). */
const CONFIRM_FIRST = 'Ask the caller whether to go ahead; if so, call again without dry_run.';

/**
 * What a caller holding a pending_confirmation booking is told to finish on its page, by the steps it
 * waits for: a waitlist offer's claim (the steps after it are said on the page), Booking Protection's
 * card (and deposit), a deposit alone (an offer claimed at a location without Booking Protection).
 * One card saved on any visit of a series is saved for every visit held for the client
 * (docs/recurring.md): with more than one waiting for it, the caller hears that one card does for all.
 */
function stepsLeftSentence(booking: Booking, series: readonly Booking[] = []): string {
  const steps = booking.pending_confirmation?.requirements ?? [];
  if (steps.includes('waitlist_claim')) {
    return 'This time is offered to you from the waitlist: please claim it on the booking page to book it.';
  }
  if (steps.includes('protection_setup')) {
    const waiting = series.filter(
      (visit) =>
        visit.status === 'pending_confirmation' &&
        visit.client_id === booking.client_id &&
        (visit.pending_confirmation?.requirements ?? []).includes('protection_setup'),
    ).length;
    if (waiting > 1) {
      const all = waiting === 2 ? 'both' : `all ${waiting}`;
      return steps.includes('deposit')
        ? `This location needs Booking Protection: please save a card and pay the deposit on the booking page; that one card is saved for ${all} visits, and each visit's own page asks for its deposit.`
        : `This location needs Booking Protection: please save a card on the booking page; that one card confirms ${all} visits.`;
    }
    const what = steps.includes('deposit') ? 'save a card and pay the deposit' : 'save a card';
    return `This location needs Booking Protection: please ${what} on the booking page to confirm it.`;
  }
  if (steps.includes('deposit')) return 'Please pay the deposit on the booking page to confirm it.';
  return 'Please finish it on the booking page to confirm it.';
}

/** Where a new booking's first message went: each channel the client has, as the outbox wrote it. */
async function noticesOf(api: BookingApi, clientId: string, status: string): Promise<OutboxNotice[]> {
  const kind = FIRST_MESSAGE[status];
  if (!kind) return [];
  return (await recipientsReached(api, clientId)).map((r) => ({ kind, ...r }));
}

const FIRST_MESSAGE: Partial<Record<string, OutboxKind>> = {
  confirmed: 'confirmed',
  pending_payment: 'payment_link',
  pending_confirmation: 'booking_page_link',
};

/**
 * POST /bookings with a key made of the caller, the place and the instant (and whether a series is
 * asked for), so a host's retry, a second call with the same request however it was worded, or one
 * made at the same moment naming another stylist or service, meets the booking the first one made. A
 * replay answers with the response stored back then, so the booking's status now is asked for: if it
 * is no longer live (cancelled meanwhile, or its deposit hold lapsed), the caller wants a new one, and
 * the key is extended with the old reference, so each live booking still has exactly one key.
 *
 * The same key with other arguments (idempotency_key_reused) is another call for the same caller at
 * the same instant that got there first: its booking, still live, is the answer (`held`, as book's
 * own check before booking finds it: the two calls never make two bookings). When none is live (that
 * call was refused, or its booking cancelled since), these arguments are booked under a key of their
 * own, as before.
 *
 * A refusal stored under the key is not the answer now: the slot may have been freed (a booking
 * cancelled, a hold lapsed) or come within the notice window since. The request is then made again
 * under a key of the current REFUSAL_RETRY_MS window, so identical calls made together still share
 * one key (one booking between them), and a refusal is never older than that window.
 */
async function bookOnce(
  api: BookingApi,
  body: NewBooking,
  heldNow: () => Promise<Booking | undefined>,
): Promise<{ booked: Booking } | { held: Booking }> {
  const digest = (value: unknown) => createHash('sha256').update(canonicalJson(value)).digest('hex');
  const moment = {
    client_id: body.client_id,
    location_slug: body.location_slug,
    starts_at: Date.parse(body.starts_at),
    series: body.repeat !== undefined,
  };
  let key = `mcp-book-at-${digest(moment)}`;
  let windowed = false;
  let ownKey = false;
  for (;;) {
    let outcome: Awaited<ReturnType<BookingApi['createBooking']>>;
    try {
      outcome = await api.createBooking(body, key);
    } catch (error) {
      if (isError(error, 'idempotency_key_reused') && !ownKey) {
        const held = await heldNow();
        if (held) return { held };
        key = `mcp-book-${digest(body)}`;
        ownKey = true;
        continue;
      }
      if (!(error instanceof ReplayedRefusal) || windowed) throw error;
      key = `${key}-${Math.floor(api.now() / REFUSAL_RETRY_MS)}`;
      windowed = true;
      continue;
    }
    const { booking, replayed } = outcome;
    // Booked just now: the answer is the booking as it is.
    if (!replayed) return { booked: booking };
    const current = await api.getBooking(booking.reference);
    if ((LIVE_STATUSES as readonly string[]).includes(current.status)) return { booked: current };
    key = `${key}-after-${booking.reference}`;
  }
}

/** How long a refusal of one booking request stands before the same request is tried again. */
const REFUSAL_RETRY_MS = 10_000;

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
  description: `A booking by reference: status, time, price; while held, when it lapses and its links. ${CALLER_TEXT_NOTE}`,
  input: { reference: ReferenceArgument },
  output: {
    ...BookingOutput,
    pending: z
      .object({ requirements: z.array(z.string()), expires_at: z.string() })
      .nullable()
      .describe('Steps the customer still has to finish online, and when the hold lapses.'),
  },
  annotations: READ_ONLY,
  callerSupplied: BOOKING_ANSWER_CALLER_TEXT,
  async run(args, { api }) {
    const booking = await existing(api, args.reference);
    const place = await placeOfSlug(api, booking.location_slug);
    const [summary] = await speakBookings(api, [booking]);
    return {
      booking: summary!,
      spoken: `${statusSentence(summary!, place.locale)} The reference is ${summary!.reference_spoken}.`,
      pending: booking.pending_confirmation,
    };
  },
});

export const rescheduleTool = defineTool({
  name: 'reschedule',
  title: 'Move a booking',
  description: `Moves a booking to another free time; same services, and staff unless staff is given. scope following: later visits too. ${CALLER_TEXT_NOTE}`,
  input: {
    reference: ReferenceArgument,
    starts_at: z.string().describe('A find_slots starts_at, or as said ("tomorrow at noon").'),
    staff: z.string().optional().describe('Name or id, or "anyone".'),
    dry_run: z.boolean().optional().describe('true: only say what it would do.'),
    scope: Scope,
  },
  output: { ...BookingOutput, ...ChangeOutput },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  failureMembers: ['choices', 'alternatives', 'reason', 'clashes'],
  callerSupplied: BOOKING_ANSWER_CALLER_TEXT,
  formProblems: startForm,
  async run(args, { api }) {
    const booking = await existing(api, args.reference);
    const place = await placeOfSlug(api, booking.location_slug);
    // In the booking's order: availability takes the services back to back as listed.
    const offered = await api.listServices(place.location.slug);
    const services = booking.service_ids.flatMap((id) => offered.filter((s) => s.id === id));
    // Without staff a move keeps the booking's own; "anyone" is that or, when they cannot take the
    // time, whoever can (the hints offer "anyone else"), never a name for the agent to pick.
    const anyone = args.staff !== undefined && namesNoOneInParticular(args.staff);
    const staff =
      args.staff === undefined || anyone ? undefined : await resolveStaff(api, place, args.staff, services);
    const startsAt = await resolveStart(api, place, args.starts_at);
    // The time (and staff member) it already has, as a host's retry asks: the engine leaves it be.
    const stays =
      Date.parse(startsAt) === Date.parse(booking.starts_at) &&
      (staff === undefined || staff.id === booking.staff_id);
    // With scope following it still puts every later visit at that wall time: one moved on its own
    // before is moved back. What they were before tells whether anything changed.
    const before =
      stays && args.scope === 'following' && booking.series_id
        ? await api.seriesBookings(booking.series_id)
        : [];
    const move = (staffId: string | undefined) =>
      api.rescheduleBooking(booking.reference, {
        starts_at: startsAt,
        ...(staffId && { staff_id: staffId }),
        ...(args.dry_run === true && { dry_run: true }),
        ...(args.scope && { scope: args.scope }),
      });
    let moved: Awaited<ReturnType<BookingApi['rescheduleBooking']>>;
    try {
      moved = await move(staff?.id).catch(async (error: unknown) => {
        const other = anyone
          ? await colleagueFreeAt(api, error, place, services, startsAt, booking)
          : undefined;
        if (other === undefined) throw error;
        return move(other);
      });
    } catch (error) {
      const asked = { place, services, startsAt, staffId: staff?.id ?? booking.staff_id, booking };
      throw anyone ? await explainNobodyFree(api, error, asked) : await explainRefusal(api, error, asked);
    }
    const { change, ...after } = moved;
    const following = stays ? moved.following.filter((b) => movedFrom(before, b)) : moved.following;
    // Nothing moved at all: the answer says so, and nothing was sent.
    const unchanged = stays && following.length === 0;
    const [summary] = await speakBookings(api, [after]);
    const said = await describeChange(api, 'reschedule', change, booking, place);
    const later =
      following.length === 0
        ? ''
        : ` ${change.dry_run ? 'The' : 'Its'} ${following.length} later ${following.length === 1 ? 'visit' : 'visits'} ${change.dry_run ? 'would move' : 'moved'} too${speakVisits(
            following.map((b) => b.starts_at),
            place,
            api.now(),
          )}${await laterVisitsStylists(api, booking, after, following, place)}.${laterVisitsCosts(
            following.map((b) => b.starts_at),
            following.map((b) => b.change),
            place,
            api.now(),
            change.dry_run,
          )}`;
    const spoken = unchanged
      ? `That is the time it already has, so nothing changed: ${summary!.spoken}.`
      : change.dry_run
        ? `It can be moved to ${summary!.spoken}.${said.consequences}${later}`
        : `Moved: ${summary!.spoken}.${said.consequences}${later}${await sentAfterChange(api, after, 'rescheduled')}`;
    // spoken is only what the caller hears; what the agent does next is the hint (issue 44).
    const confirm = change.dry_run && !unchanged;
    const hint = confirm && `${CONFIRM_FIRST}${await laterVisitsStayNote(api, booking, args.scope)}`;
    return { booking: summary!, ...said.fields, spoken, ...(hint && { hint }) };
  },
});

/**
 * For a move to "anyone" the booking's own staff member cannot take (busy, not in then, or no longer
 * taking it here at all: made inactive, or no longer doing its services): someone else here who does
 * its services and is free at that start, or undefined.
 */
async function colleagueFreeAt(
  api: BookingApi,
  refusal: unknown,
  place: Place,
  services: readonly Service[],
  startsAt: string,
  booking: Booking,
): Promise<string | undefined> {
  if (!refusedForOwnStaff(refusal)) return undefined;
  const target = Date.parse(startsAt);
  const { slots } = await api.availability(place.location.slug, {
    serviceIds: services.map((s) => s.id),
    date: localDateAt(target, place.zone),
    days: 1,
  });
  return slots.find((slot) => Date.parse(slot.starts_at) === target && slot.staff_id !== booking.staff_id)
    ?.staff_id;
}

/**
 * Who the later visits moved with a series' visit are with, where the caller could not tell it from
 * "Cut with Ana" said of the visit asked about: those with another stylist than it ("; Tuesday 9 March
 * is with Bo": a series booked with anyone keeps each visit's own stylist, who may differ), or, when the
 * visit asked about changed stylist and every later one is with that one too, that they are ("; they are
 * with Bo too": they were with whoever they had). '' otherwise.
 */
async function laterVisitsStylists(
  api: BookingApi,
  before: Booking,
  after: Booking,
  following: readonly Booking[],
  place: Place,
): Promise<string> {
  const allWithIt = following.every((b) => b.staff_id === after.staff_id);
  if (allWithIt && after.staff_id === before.staff_id) return '';
  // Over REST the team is a request: read only when a name is to be said.
  const team = new Map((await api.listStaff(place.location.slug)).map((s) => [s.id, s.name]));
  if (!allWithIt) return speakOtherStylists([after, ...following], team, place, api.now());
  const name = team.get(after.staff_id);
  return name ? `; ${following.length === 1 ? 'it is' : 'they are'} with ${name} too` : '';
}

/** Whether a later visit's time or staff member differs from what it had before the move (unknown: it did). */
function movedFrom(before: Booking[], after: Booking): boolean {
  const was = before.find((b) => b.reference === after.reference);
  return (
    was === undefined ||
    Date.parse(was.starts_at) !== Date.parse(after.starts_at) ||
    was.staff_id !== after.staff_id
  );
}

export const cancelTool = defineTool({
  name: 'cancel',
  title: 'Cancel a booking',
  description:
    'Cancels a booking. Call with dry_run true first; tell the caller if late, any fee or kept deposit. ' +
    `scope following: later visits too. ${CALLER_TEXT_NOTE}`,
  input: {
    reference: ReferenceArgument,
    reason: z.string().max(1000).optional().describe('Shown to staff.'),
    dry_run: z.boolean().optional().describe('true: only say what it would do.'),
    scope: Scope,
  },
  output: {
    ...BookingOutput,
    ...ChangeOutput,
    cancelled_at: z.string().nullable().describe('UTC; null on a dry run.'),
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  failureMembers: ['reason'],
  callerSupplied: BOOKING_ANSWER_CALLER_TEXT,
  async run(args, { api }) {
    const booking = await existing(api, args.reference);
    const place = await placeOfSlug(api, booking.location_slug);
    // Read before the release, which takes the offer off the entry: what it leaves is said after.
    const offeredTo = isWaitlistOffer(booking) ? await api.offeredEntry(booking) : undefined;
    let cancelled: Awaited<ReturnType<BookingApi['cancelBooking']>>;
    try {
      cancelled = await api.cancelBooking(booking.reference, {
        ...(args.reason !== undefined && { reason: args.reason }),
        ...(args.dry_run === true && { dryRun: true }),
        ...(args.scope && { scope: args.scope }),
      });
    } catch (error) {
      throw await explainRefusal(api, error, {
        place,
        services: [],
        startsAt: booking.starts_at,
        staffId: booking.staff_id,
        booking,
        cancelling: true,
      });
    }
    const { change } = cancelled;
    // Read again once cancelled: its deposit is now refunded or kept, and its fee set (issue 44).
    const after = change.dry_run ? booking : await api.getBooking(booking.reference);
    const [summary] = await speakBookings(api, [after]);
    // Cancelled before this call (a series' visit asked again, with its later visits): said as it was
    // then, with what was sent then; only later visits cancelled now sent anything now.
    const earlier = booking.status === 'cancelled';
    const said = await describeChange(api, 'cancel', change, booking, place, { earlier });
    const later = await laterVisitsCancelled(api, cancelled.following, place, change.dry_run);
    const sentNow =
      change.dry_run || (earlier && later === '') ? '' : await sentAfterChange(api, after, 'cancelled');
    let spoken: string;
    if (isWaitlistOffer(booking)) {
      // A time the waitlist offered, not claimed: the engine withdraws it quietly (nothing was booked,
      // so no cancellation goes out); the entry waits on for another time unless the caller booked one.
      const left = await waitlistAfterRelease(api, booking, offeredTo, place.zone, change.dry_run);
      spoken = change.dry_run
        ? `If released now: the time offered from the waitlist, not booked: ${summary!.spoken}. Nothing would be sent${left}`
        : `Released: the time offered from the waitlist, not booked: ${summary!.spoken}. Nothing is sent${left}`;
    } else if (earlier) {
      const nothingNew = change.dry_run || sentNow !== '' ? '' : ' Nothing was sent again.';
      spoken = `Already cancelled: ${summary!.spoken}.${said.consequences}${await sentWhenCancelled(api, after)}${later}${sentNow}${nothingNew}`;
    } else if (change.dry_run) {
      spoken = `If cancelled now: ${summary!.spoken}.${said.consequences}${later}`;
    } else {
      spoken = `Cancelled: ${summary!.spoken}.${said.consequences}${later}${sentNow}`;
    }
    return {
      booking: summary!,
      ...said.fields,
      spoken,
      ...(change.dry_run && {
        hint: `${CONFIRM_FIRST}${earlier ? '' : await laterVisitsStayNote(api, booking, args.scope)}`,
      }),
      cancelled_at: change.dry_run ? null : cancelled.cancelled_at,
    };
  },
});
