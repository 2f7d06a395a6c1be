import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { getAvailability, whyNothingIsLeftToday } from '../../app/availability-service.ts';
import {
  closedToMoves,
  previewCancellation,
  previewReschedule,
  rescheduleBooking,
  rescheduleHorizon,
} from '../../app/booking-changes.ts';
import {
  bookingPagePath,
  bookingPageUrl,
  PROVIDER_RETURN,
  providerReturnUrl,
} from '../../app/booking-page-token.ts';
import {
  type BookingPageView,
  type EndedOffer,
  getBookingPage,
  type SeriesVisit,
} from '../../app/booking-pages.ts';
import { startCardSetup } from '../../app/card-setup-service.ts';
import { type CodeOutcome, proveByCode, resendCode } from '../../app/contact-proof.ts';
import type { AppDeps } from '../../app/deps.ts';
import { publicServices } from '../../app/public-booking.ts';
import { withPageMove } from '../../app/resend-limit.ts';
import { cancelWithScope } from '../../app/series-changes.ts';
import { someoneWorksOn } from '../../app/start-check.ts';
import { claimOffer, declineOffer } from '../../app/waitlist/claims.ts';
import type { Slot } from '../../domain/availability/types.ts';
import type { Fee } from '../../domain/booking/booking.ts';
import { type ChangeDisclosure, changeTerms, decideChange } from '../../domain/booking/change-policy.ts';
import { heldTermsOf } from '../../domain/booking/holds.ts';
import type { StaffRef } from '../../domain/catalogue.ts';
import { counted } from '../../domain/counted.ts';
import { AppError, isAppError } from '../../domain/errors.ts';
import { maskedRecipient } from '../../domain/outbox.ts';
import {
  CODE_DIGITS,
  CODE_TRIES,
  CODE_VALID_MS,
  CONTACT_VERIFICATION,
} from '../../domain/public-booking-policy.ts';
import { localDateAt } from '../../domain/time-format.ts';
import { WAITLIST_CLAIM } from '../../domain/waitlist.ts';
import { instantOf } from '../page-fields.ts';
import { publicBaseUrl } from '../public-base-url.ts';
import { callLinkHtml } from './call-link.ts';
import {
  esc,
  type FieldRefusal,
  type Formatter,
  formatter,
  redirect,
  refusalBeside,
  refuseCrossSiteForm,
  refusedState,
  type SendPage,
} from './page-shell.ts';
import { plainWords } from './people-words.ts';
import {
  type DaysFound,
  dayStrip,
  dayWindow,
  dayWords,
  emptyDayReasonHtml,
  isCalendarDate,
  nobodyWorksOn,
  STRIP_DAYS,
  startsOn,
  stylistsFor,
  timeGroups,
  todayNeedsCause,
  zoneWords,
} from './time-picker.ts';

/**
 * One booking's page, /p/manage/{token}, reached from every message and from booking_page_url: the
 * booking, the hold's time left, its outstanding steps (deposit through the payment provider's
 * checkout, the card Booking Protection needs through the provider's setup), and cancelling or moving
 * it within the location's policy. A change is always shown first with what it costs (the fee to the
 * saved card, a kept deposit), from the same dry-run decision the change makes, and made only when
 * the customer confirms.
 */
export function manageRoutes(deps: AppDeps, sendPage: SendPage): FastifyPluginAsyncZod {
  // With the provider, which returns a deposit paid online on a timely cancellation.
  const customer = (view: BookingPageView) => ({
    organisationId: view.organisation.id,
    actor: 'page:customer',
    payments: deps.payments,
  });
  /** What moving the booking to `at` (with `staffId`, or its own stylist) would mean, or why it cannot. */
  const previewMove = (view: BookingPageView, at: number, staffId: string | undefined, now: number) =>
    previewReschedule(deps.db, customer(view), view.booking.reference, { startsAt: at, staffId }, now);
  return async (app) => {
    const hidden = { schema: { hide: true } };
    const form = { ...hidden, onRequest: refuseCrossSiteForm };

    /**
     * The booking's page; `alert` said at its top, or beside `field` when it is about one shown; `moved`
     * when the customer has just moved it here.
     */
    const showBooking = (
      reply: FastifyReply,
      view: BookingPageView,
      alert?: string,
      field?: string,
      moved = false,
    ) => {
      // Its steps' forms are answered with redirects to the provider's hosted pages: named in its CSP.
      const handsOver = needsCard(view) || owesDeposit(view);
      const now = deps.clock.nowMs();
      return sendPage(reply, titleOf(view, now), bookingBody(view, now, alert, field, moved), {
        formTargets: handsOver ? (deps.payments?.handOverOrigins ?? []) : [],
      });
    };

    app.get<{ Params: TokenParams; Querystring: Record<string, string | undefined> }>(
      '/p/manage/:token',
      hidden,
      async (request, reply) => {
        const view = await getBookingPage(deps.db, request.params.token, deps.clock.nowMs());
        const refusal = codeRefusal(view, request.query.refused);
        if (refusal) return showBooking(reply, view, refusal, 'code');
        if (request.query[PROVIDER_RETURN] === '1' && (needsCard(view) || owesDeposit(view))) {
          // Back from the provider's page before its word on the step arrived: done there, perhaps.
          return showBooking(reply, view, PROVIDER_NOT_HEARD);
        }
        if (request.query[MOVED] === '1') return showBooking(reply, view, undefined, undefined, true);
        return showBooking(
          reply,
          view,
          request.query.sent === '1' && awaitsProof(view) ? NEW_CODE_SENT : undefined,
        );
      },
    );

    // The code that proves the contact a public booking gave (contact-proof.ts). A refused code is
    // answered with a redirect to the booking's page, which says why (Post/Redirect/Get): Back and
    // Reload then read the page again, and never send an old code that would use up one of its tries.
    app.post<{ Params: TokenParams; Body: { code?: string } }>(
      '/p/manage/:token/verify',
      form,
      async (request, reply) => {
        const now = deps.clock.nowMs();
        const view = await getBookingPage(deps.db, request.params.token, now);
        const outcome = await proveByCode(
          deps.db,
          { organisationId: view.organisation.id, bookingId: view.booking.id },
          request.body?.code ?? '',
          now,
        );
        const path = bookingPagePath(view.token);
        return redirect(reply, outcome.proven ? path : `${path}?refused=${outcome.reason}`);
      },
    );
    // A waitlist offer (design.md 9.4): claim the time, let it go, or leave the waitlist.
    for (const [action, run] of [
      ['claim', (view: BookingPageView, now: number) => claimOffer(deps.db, offerTarget(view), now)],
      [
        'decline',
        (view: BookingPageView, now: number) => declineOffer(deps.db, offerTarget(view), false, now),
      ],
      ['leave', (view: BookingPageView, now: number) => declineOffer(deps.db, offerTarget(view), true, now)],
    ] as const) {
      app.post<{ Params: TokenParams }>(`/p/manage/:token/${action}`, form, async (request, reply) => {
        const now = deps.clock.nowMs();
        // The link used twice: the first claim went through, and this one lands on the booking too.
        // Anything else is a time no longer held: let go, or lapsed.
        const settled = (view: BookingPageView) =>
          action === 'claim' && view.booking.status !== 'expired' && isClaimed(view)
            ? redirect(reply, bookingPagePath(view.token))
            : showBooking(reply.code(409), view, 'This time is no longer held for you.');
        const view = await getBookingPage(deps.db, request.params.token, now);
        if (!awaitsClaim(view)) return settled(view);
        // Settled between the page read and the claim's turn (the other button, or the same one in
        // another tab, went first): said as it now stands, not as if this claim had been taken.
        if ((await run(view, now)) === 'not_held') {
          return settled(await getBookingPage(deps.db, request.params.token, now));
        }
        return redirect(reply, bookingPagePath(view.token));
      });
    }
    app.post<{ Params: TokenParams }>('/p/manage/:token/resend', form, async (request, reply) => {
      const now = deps.clock.nowMs();
      const view = await getBookingPage(deps.db, request.params.token, now);
      // Proven meanwhile (the link, or the code in another tab): "Send a new code" lands on the booking.
      if (isProven(view)) return redirect(reply, bookingPagePath(view.token));
      await resendCode(
        deps.db,
        { store: deps.rateLimitStore },
        { organisationId: view.organisation.id, bookingId: view.booking.id },
        now,
      );
      return redirect(reply, `${bookingPagePath(view.token)}?sent=1`);
    });

    // The deposit: on to the provider's checkout of the booking's open session.
    app.post<{ Params: TokenParams }>('/p/manage/:token/pay', form, async (request, reply) => {
      const view = await getBookingPage(deps.db, request.params.token, deps.clock.nowMs());
      // Paid meanwhile in another tab (the page was open on "Pay deposit"): Pay lands on the booking.
      if (view.booking.status === 'confirmed') return redirect(reply, bookingPagePath(view.token));
      refuseBeforeProof(view);
      refuseBeforeClaim(view);
      const session = view.booking.checkoutSessionId;
      if (!deps.payments || !session || !isPending(view)) {
        throw new AppError('conflict', 'This booking has no deposit waiting to be paid.');
      }
      return redirect(reply, deps.payments.checkoutUrl(session, publicBaseUrl(request)));
    });

    // The card for Booking Protection: on to the provider's card setup, which returns here.
    app.post<{ Params: TokenParams }>('/p/manage/:token/setup', form, async (request, reply) => {
      const now = deps.clock.nowMs();
      const view = await getBookingPage(deps.db, request.params.token, now);
      refuseBeforeProof(view);
      refuseBeforeClaim(view);
      const base = publicBaseUrl(request);
      // Saved, the provider sends the customer back marked as such; left, to the page as it is.
      const saved = providerReturnUrl(base, view.token);
      const setup = await startCardSetup(
        deps.db,
        deps.payments,
        view.organisation.id,
        view.booking.reference,
        publicBaseUrl(request),
        now,
        { successUrl: saved, cancelUrl: bookingPageUrl(base, view.token) },
      );
      return redirect(reply, setup.url);
    });

    app.get<{ Params: TokenParams }>('/p/manage/:token/cancel', hidden, async (request, reply) => {
      const now = deps.clock.nowMs();
      const view = await getBookingPage(deps.db, request.params.token, now);
      refuseChangeBeforeClaim(view);
      const preview = await previewCancellation(deps.db, customer(view), view.booking.reference, now);
      return sendPage(
        reply,
        'Cancel your booking',
        cancelBody(
          view,
          preview.refusal ? cancelRefusalWords(view, preview.refusal.message) : undefined,
          preview.disclosure,
        ),
      );
    });
    app.post<{ Params: TokenParams }>('/p/manage/:token/cancel', form, async (request, reply) => {
      const now = deps.clock.nowMs();
      const view = await getBookingPage(deps.db, request.params.token, now);
      refuseChangeBeforeClaim(view);
      // What the page said cancelling means is what the customer agreed to: changed since (the
      // window passed while the page was open, the salon moved it), nothing is cancelled and the
      // page says what it means now. A refusal (cancelled already, started) is the cancellation's own.
      const terms = (request.body as { terms?: unknown } | undefined)?.terms;
      if (typeof terms === 'string') {
        const preview = await previewCancellation(deps.db, customer(view), view.booking.reference, now);
        if (preview.refusal === null && terms !== changeTerms(preview.booking.startsAt, preview.disclosure)) {
          const again = await getBookingPage(deps.db, request.params.token, now);
          return sendPage(
            reply.code(409),
            'Cancel your booking',
            cancelBody(again, undefined, preview.disclosure, true),
          );
        }
      }
      try {
        await cancelWithScope(
          deps.db,
          customer(view),
          view.booking.reference,
          'cancelled on the booking page',
          visitsWaitingOnItsCode(view).length > 0 ? 'following' : 'one',
          now,
          false,
        );
      } catch (error) {
        // The form sent twice (a double click): the first cancelled it, and this one lands on it too.
        if (!isAppError(error) || error.status !== 409) throw error;
        const again = await getBookingPage(deps.db, request.params.token, deps.clock.nowMs());
        if (again.booking.status !== 'cancelled') throw error;
      }
      return redirect(reply, bookingPagePath(view.token));
    });

    app.get<{ Params: TokenParams; Querystring: MoveQuery }>(
      '/p/manage/:token/reschedule',
      hidden,
      async (request, reply) => {
        const now = deps.clock.nowMs();
        const view = await getBookingPage(deps.db, request.params.token, now);
        refuseBeforeProof(view);
        refuseChangeBeforeClaim(view);
        // A move the policy forbids now (late): said at once, with what can still be done.
        const refusal = moveRefusal(view, now);
        if (refusal)
          return sendPage(reply.code(409), 'Move your booking', moveRefusedBody(view, refusal, now));
        const query = request.query;
        const stylists = await stylistsOfView(deps, view);
        const staff = stylists.find((m) => m.id === query.staff);
        const today = localDateAt(now, view.location.timezone);
        if (query.date !== undefined && !isCalendarDate(query.date))
          throw new AppError('invalid_request', 'Choose a day.', 'date');
        const chosenAt = query.starts_at === undefined ? undefined : parseInstant(query.starts_at);
        const asked =
          chosenAt === undefined
            ? (query.date ?? localDateAt(Math.max(now, view.booking.startsAt), view.location.timezone))
            : localDateAt(chosenAt, view.location.timezone);
        const window = dayWindow(today, asked);
        const location = await rescheduleHorizon(deps.db, view.booking, view.location);
        const search = {
          location,
          serviceIds: view.booking.serviceIds,
          staffId: staff?.id,
          excludeBookingId: view.booking.id,
          movesHold: heldTermsOf(view.booking, now),
        };
        const availability = await getAvailability(
          deps.db,
          view.organisation.id,
          { ...search, fromDate: window.start, days: STRIP_DAYS },
          now,
        );
        // The booking's own time is not a move.
        const others = availability.slots.filter((slot) => slot.startsAt !== view.booking.startsAt);
        const found: DaysFound = {
          window,
          location,
          locale: view.organisation.locale,
          availability: { ...availability, slots: others },
          staffName: staff?.name,
        };
        if (chosenAt === undefined && nobodyWorksOn(found, window.date)) {
          found.open = {
            someoneWorks: await someoneWorksOn(deps.db, view.organisation.id, view.location, window.date),
            services: view.services.map((s) => s.name).join(' and '),
          };
        }
        if (chosenAt === undefined && todayNeedsCause(found, window.date)) {
          found.todayCause = await whyNothingIsLeftToday(
            deps.db,
            view.organisation.id,
            search,
            now,
            view.booking.startsAt,
          );
        }
        if (chosenAt !== undefined && isWhereItIs(view, chosenAt, staff?.id)) {
          // The move made already (Back to its confirmation after it was confirmed): nothing to move.
          const back = moveHref(view, staff, localDateAt(chosenAt, view.location.timezone));
          return sendPage(reply, 'Move your booking', alreadyThereBody(view, back));
        }
        if (chosenAt !== undefined) {
          // A time was chosen: what moving there would mean, before the customer confirms.
          const at = chosenAt;
          const staffId = staff?.id ?? stylistAt(others, at, view.booking.staffId);
          const preview = await previewMove(view, at, staffId, now);
          const refused =
            preview.refusal?.message ?? (preview.slot ? undefined : 'That time is no longer free.');
          const back = moveHref(view, staff, localDateAt(at, view.location.timezone));
          const body = moveConfirmBody(
            view,
            at,
            preview.slot?.staffId ?? staffId,
            stylists,
            refused,
            back,
            preview.disclosure,
          );
          return sendPage(reply.code(refused ? 409 : 200), 'Move your booking', body);
        }
        return sendPage(reply, 'Move your booking', moveBody(view, found, stylists, staff));
      },
    );
    app.post<{ Params: TokenParams; Body: { starts_at?: string; staff_id?: string; terms?: string } }>(
      '/p/manage/:token/reschedule',
      form,
      async (request, reply) => {
        const now = deps.clock.nowMs();
        const view = await getBookingPage(deps.db, request.params.token, now);
        refuseBeforeProof(view);
        refuseChangeBeforeClaim(view);
        const at = parseInstant(request.body?.starts_at);
        const staffId = request.body?.staff_id || undefined;
        // Confirmed twice (a second tab, a double tap): the first moved it; nothing is moved or sent again.
        const movedPath = `${bookingPagePath(view.token)}?${MOVED}=1`;
        if (isWhereItIs(view, at, staffId)) return redirect(reply, movedPath);
        // What the confirmation said moving means is what the customer agreed to: changed since (the
        // window passed while it was open, the salon moved the booking), nothing moves and the page
        // says what it means now. A refusal (the time taken meanwhile) is the move's own.
        const terms = request.body?.terms;
        if (typeof terms === 'string' && !Number.isNaN(at)) {
          const preview = await previewMove(view, at, staffId, now);
          if (
            preview.refusal === null &&
            preview.slot &&
            terms !== changeTerms(view.booking.startsAt, preview.disclosure)
          ) {
            const back = moveHref(view, undefined, localDateAt(at, view.location.timezone));
            const stylists = await stylistsOfView(deps, view);
            const body = moveConfirmBody(
              view,
              at,
              preview.slot.staffId,
              stylists,
              undefined,
              back,
              preview.disclosure,
              true,
            );
            return sendPage(reply.code(409), 'Move your booking', body);
          }
        }
        try {
          // Each move tells the booking's contact: a few an hour, or the page could message it without end.
          await withPageMove(
            { store: deps.rateLimitStore },
            { organisationId: view.organisation.id, bookingId: view.booking.id },
            now,
            () =>
              rescheduleBooking(
                deps.db,
                customer(view),
                view.booking.reference,
                { startsAt: at, staffId },
                now,
              ),
          );
        } catch (error) {
          // Too many moves: the error page, with Retry-After; choosing another time would not help.
          if (!isAppError(error) || error.status >= 500 || error.code === 'rate_limited') throw error;
          // Taken meanwhile (or no longer allowed): the day's other times, not a dead end.
          const again = await getBookingPage(deps.db, request.params.token, deps.clock.nowMs());
          const back = moveHref(view, undefined, localDateAt(at, view.location.timezone));
          return sendPage(
            reply.code(error.status),
            'Move your booking',
            moveFailedBody(again, plainWords(error), back),
          );
        }
        return redirect(reply, movedPath);
      },
    );
  };
}

interface TokenParams {
  token: string;
}

/** The query a move leads to the booking's page with, so that the page says it was moved. */
const MOVED = 'moved';

/** The booking already starts at `at` (with `staffId`, when one is named): moving it there changes nothing. */
function isWhereItIs(view: BookingPageView, at: number, staffId: string | undefined): boolean {
  return view.booking.startsAt === at && (staffId === undefined || staffId === view.booking.staffId);
}

function parseInstant(value: string | undefined): number {
  const at = instantOf(value);
  if (Number.isNaN(at))
    throw new AppError('invalid_request', 'Choose one of the times offered.', 'starts_at');
  return at;
}

function isPending(view: BookingPageView): boolean {
  return view.booking.status === 'pending_payment' || view.booking.status === 'pending_confirmation';
}

/**
 * A public booking waits for its customer to prove their contact (design.md 9.1): the code is the
 * only step offered, and nothing else (paying, a card, moving it) is done before it.
 */
function awaitsProof(view: BookingPageView): boolean {
  return isPending(view) && view.booking.pendingRequirements.includes(CONTACT_VERIFICATION);
}

/**
 * The later visits of a series booked on the public page that wait for the code this visit holds (its
 * first: one code confirms them all). Cancelled with it, as nothing could confirm them once it is.
 */
function visitsWaitingOnItsCode(view: BookingPageView): SeriesVisit[] {
  if (!awaitsProof(view) || view.proof?.bookingId !== view.booking.id) return [];
  return (view.seriesVisits ?? []).filter(
    (visit) => visit.startsAt > view.booking.startsAt && visit.status === 'pending_confirmation',
  );
}

/** The contact proven (or never asked to be): confirmed, or on to a step after the proof. */
function isProven(view: BookingPageView): boolean {
  return view.booking.status === 'confirmed' || (isPending(view) && !awaitsProof(view));
}

/** 409 while a waitlist offer waits for its claim: nothing is paid or saved for a time not taken. */
function refuseBeforeClaim(view: BookingPageView): void {
  if (awaitsClaim(view)) {
    throw new AppError(
      'conflict',
      'First book this time on this page; then you can pay or save a card for it.',
    );
  }
}

/** A waitlist offer not claimed yet: claiming (or letting it go) is the one thing to do. */
function awaitsClaim(view: BookingPageView): boolean {
  return isPending(view) && view.booking.pendingRequirements.includes(WAITLIST_CLAIM);
}

/** A waitlist offer whose claim was made (confirmed, or on to its deposit or card). */
function isClaimed(view: BookingPageView): boolean {
  return view.booking.status === 'confirmed' || (isPending(view) && !awaitsClaim(view));
}

function offerTarget(view: BookingPageView) {
  return {
    organisationId: view.organisation.id,
    bookingId: view.booking.id,
    reference: view.booking.reference,
  };
}

/** The offer step: the freed time, and the three answers. */
function claimStep(path: string): string {
  return `<h2>A time has freed up for you</h2>
<p>You asked to hear when a time frees up. This one is held for you alone until the time above; after that it goes to the next person waiting.</p>
<form method="post" action="${esc(`${path}/claim`)}"><div class="actions"><button type="submit" class="primary">Book this time</button></div></form>
<form method="post" action="${esc(`${path}/decline`)}"><div class="actions"><button type="submit" class="secondary">Not this time, keep me on the waitlist</button></div></form>
<form method="post" action="${esc(`${path}/leave`)}"><div class="actions"><button type="submit" class="secondary">Take me off the waitlist</button></div></form>`;
}

/**
 * 409 while a waitlist offer waits for its claim: the time is not the customer's booking yet, so it
 * is neither cancelled nor moved (which would tell them of a booking they never made); the offer's
 * own answers (claim, let go, leave) are the way.
 */
function refuseChangeBeforeClaim(view: BookingPageView): void {
  if (awaitsClaim(view)) {
    throw new AppError(
      'conflict',
      'This time is offered to you, not booked yet: book it or let it go on this page.',
    );
  }
}

/** 409 while the booking waits for its contact's proof. */
function refuseBeforeProof(view: BookingPageView): void {
  if (awaitsProof(view)) {
    throw new AppError(
      'conflict',
      'First confirm the booking with the code we sent you; then you can go on with it here.',
    );
  }
}

/** The step of saving Booking Protection's card is open: the page offers it. */
function needsCard(view: BookingPageView): boolean {
  return (
    isPending(view) && !awaitsProof(view) && view.booking.pendingRequirements.includes('protection_setup')
  );
}

/** A deposit is due through the provider's checkout: the page offers to pay it. */
function owesDeposit(view: BookingPageView): boolean {
  const { booking } = view;
  return (
    isPending(view) &&
    !awaitsProof(view) &&
    booking.depositStatus === 'pending' &&
    booking.checkoutSessionId !== null &&
    booking.depositMinor !== null
  );
}

function isChangeable(view: BookingPageView, now: number): boolean {
  const live = isPending(view) || view.booking.status === 'confirmed';
  return live && now < view.booking.startsAt;
}

/**
 * Whether the appointment has come: under way, or over (its end passed, or the salon marked it done).
 * Null before it, and for a booking that never became one (cancelled, expired, missed).
 */
function appointmentCame(view: BookingPageView, now: number): 'started' | 'over' | null {
  const { status, startsAt, endsAt } = view.booking;
  if (status === 'completed' || status === 'needs_checkout') return 'over';
  if (status !== 'confirmed' || now < startsAt) return null;
  return now < endsAt ? 'started' : 'over';
}

function titleOf(view: BookingPageView, now: number): string {
  // An old message's link opened after the visit: not "Booking confirmed ... See you then!".
  const came = appointmentCame(view, now);
  if (came === 'started') return 'Appointment started';
  if (came === 'over') return 'Appointment over';
  if (view.booking.status === 'expired' && view.endedOffer) {
    if (!view.endedOffer.letGo) return 'Offer lapsed';
    return view.endedOffer.byCustomer ? 'Time let go' : 'Offer withdrawn';
  }
  switch (view.booking.status) {
    case 'confirmed':
      return 'Booking confirmed';
    case 'pending_payment':
    case 'pending_confirmation':
      return 'Finish your booking';
    case 'cancelled':
      return 'Booking cancelled';
    case 'expired':
      return 'Booking expired';
    default:
      return 'Your booking';
  }
}

function formatOf(view: BookingPageView): Formatter {
  return formatter({
    locale: view.organisation.locale,
    currency: view.booking.currency,
    timezone: view.location.timezone,
  });
}

/** A deposit's state in words: one not paid is due only while the booking waits for it. */
function depositWords(booking: BookingPageView['booking']): string {
  if (booking.depositStatus !== 'pending') return booking.depositStatus;
  return booking.status === 'expired' || booking.status === 'cancelled' ? 'not paid' : 'due';
}

/** The booking's facts, shared by every page about it. */
export function bookingSummary(view: BookingPageView, f: Formatter): string {
  const { booking } = view;
  const services = view.services.map((s) => `${esc(s.name)} (${esc(f.money(s.priceMinor))})`).join(', ');
  const deposit =
    booking.depositMinor === null
      ? ''
      : `<dt>Deposit</dt><dd>${esc(f.money(booking.depositMinor))} (${esc(depositWords(booking))})</dd>\n`;
  const fees = (['late_cancellation', 'no_show'] as const)
    .map((kind) => booking.fees[kind])
    .filter((fee) => fee !== undefined)
    .map((fee) => `<dt>${FEE_NAMES[fee.kind]}</dt><dd>${esc(feeWords(fee, f))}</dd>\n`)
    .join('');
  return `<dl>
<dt>Booking reference</dt><dd><strong>${esc(booking.reference)}</strong></dd>
${view.clientName === null ? '' : `<dt>Name</dt><dd>${esc(view.clientName)}</dd>\n`}<dt>Location</dt><dd>${esc(view.location.name)}</dd>
<dt>Appointment</dt><dd>${f.time(booking.startsAt)}</dd>
<dt>With</dt><dd>${esc(view.staffName)}</dd>
<dt>Services</dt><dd>${services}</dd>
<dt>Total</dt><dd>${esc(f.money(booking.totalPriceMinor))}</dd>
${deposit}${fees}</dl>`;
}

const FEE_NAMES: Record<Fee['kind'], string> = {
  late_cancellation: 'Late cancellation fee',
  no_show: 'Missed appointment fee',
};

/**
 * A fee the booking incurred (a late cancellation, a missed appointment), as it now stands: the
 * customer was told before cancelling what would be charged, and the page says it again afterwards,
 * then what the salon did with it.
 */
export function feeWords(fee: Fee, f: Formatter): string {
  const amount = `${f.money(fee.amountMinor)} (${fee.feePercentage}% of the price)`;
  const credit =
    fee.depositCreditMinor > 0 ? `, less the deposit of ${f.money(fee.depositCreditMinor)} you paid` : '';
  const charge = f.money(fee.chargeAmountMinor);
  switch (fee.status) {
    case null:
      return `${amount}${credit}: ${charge} to be charged to your saved card.`;
    case 'charged':
      return `${amount}${credit}: ${charge} charged to your saved card.`;
    case 'deposit_covered':
      return `${amount}: covered by the deposit you paid; nothing more is charged.`;
    case 'waived':
      return `${amount}: waived by the salon; nothing is charged.`;
    case 'failed':
      return `${amount}${credit}: ${charge} could not be charged to your saved card; the salon may contact you.`;
  }
}

/** A visit's statuses while it is held, not yet booked. */
const HELD: ReadonlySet<string> = new Set(['pending_payment', 'pending_confirmation']);

const VISIT_STATUS: Partial<Record<string, string>> = {
  pending_payment: 'held, not yet confirmed',
  pending_confirmation: 'held, not yet confirmed',
  confirmed: 'booked',
  needs_checkout: 'done',
  completed: 'done',
  no_show: 'missed',
  cancelled: 'cancelled',
  expired: 'released',
};

/**
 * The visits of the booking's series, each with a link to its own page, where it is finished, moved
 * or cancelled: the customer finds every visit from any one of them. Empty for a booking of no series.
 */
function seriesVisitsList(view: BookingPageView, f: Formatter): string {
  const visits = view.seriesVisits;
  if (!visits || visits.length < 2) return '';
  const items = visits.map((visit) => {
    const when = f.time(visit.startsAt);
    const status = VISIT_STATUS[visit.status] ?? visit.status.replace('_', ' ');
    if (visit.reference === view.booking.reference) return `<li>${when} (${esc(status)}): this page</li>`;
    const link = visit.token ? `<a href="${esc(bookingPagePath(visit.token))}">${when}</a>` : when;
    return `<li>${link} (${esc(status)}), reference ${esc(visit.reference)}</li>`;
  });
  // This visit done, later ones still held (each its own deposit or card): "See you then!" alone would
  // leave them to lapse unnoticed.
  const held = isPending(view)
    ? 0
    : visits.filter((v) => v.reference !== view.booking.reference && HELD.has(v.status)).length;
  const stillHeld =
    held === 0
      ? ''
      : `<p class="notice">${held === 1 ? 'The other visit held for you is not booked yet: open it below to finish it' : `The ${held} other visits held for you are not booked yet: open each one below to finish it`}, or it is released.</p>\n`;
  return `<h2>Your visits in this series</h2>
${stillHeld}<p>Each visit has its own page, where it is finished, moved or cancelled.</p>
<ul>
${items.join('\n')}
</ul>`;
}

function bookingBody(
  view: BookingPageView,
  now: number,
  alert?: string,
  field?: string,
  moved = false,
): string {
  const f = formatOf(view);
  const { booking } = view;
  const path = bookingPagePath(view.token);
  const parts = [`<p>${esc(view.organisation.name)}</p>`, `<h1>${esc(titleOf(view, now))}</h1>`];
  // A refused code is said beside the code's field, when that is shown; anything else at the top.
  const refused =
    alert !== undefined && field === 'code' && awaitsProof(view) ? { field, words: alert } : undefined;
  if (alert && !refused) parts.push(`<p role="alert" class="fee">${esc(alert)}</p>`);
  if (isPending(view) && booking.holdExpiresAt !== null) {
    const minutes = Math.max(1, Math.ceil((booking.holdExpiresAt - now) / 60_000));
    parts.push(
      `<p class="notice" role="status">Your time is held for <strong>${counted(minutes, 'more minute', 'more minutes')}</strong> (until ${f.time(booking.holdExpiresAt)}). Finish the steps below to confirm it; otherwise it is released.</p>`,
    );
  }
  const came = appointmentCame(view, now);
  if (came === 'started') {
    parts.push('<p role="status">Your appointment has started.</p>');
  } else if (came === 'over') {
    parts.push(
      `<p role="status">This appointment is over. <a href="${esc(bookAgainHref(view))}">Book again</a>${view.location.active ? ` (the same services, at ${esc(view.location.name)})` : ''}.</p>`,
    );
  } else if (booking.status === 'confirmed' && moved) {
    parts.push(
      `<p role="status">Moved: you are now booked for ${f.time(booking.startsAt)} with ${esc(view.staffName)}. See you then!</p>`,
    );
  } else if (booking.status === 'confirmed') {
    parts.push('<p role="status">You are booked. See you then!</p>');
  }
  if (booking.status === 'cancelled')
    parts.push(`<p><a href="${esc(bookAgainHref(view))}">Book another time</a></p>`);
  if (booking.status === 'expired' && view.endedOffer) {
    parts.push(endedOfferWords(view, view.endedOffer));
  } else if (booking.status === 'expired') {
    parts.push(
      `<p role="alert">This booking was not finished in time and the time was released. <a href="${esc(bookAgainHref(view))}">Book again</a>${view.location.active ? ` (the same services, at ${esc(view.location.name)})` : ''}.</p>`,
    );
  }
  // The code first: on a phone, the one thing to do is above the fold.
  if (awaitsProof(view)) parts.push(proofStep(view, path, refused));
  if (awaitsClaim(view)) parts.push(claimStep(path));
  parts.push(bookingSummary(view, f));
  if (awaitsClaim(view)) return parts.join('\n');
  const visits = seriesVisitsList(view, f);
  if (visits) parts.push(visits);
  if (isPending(view)) {
    const steps: string[] = [];
    if (needsCard(view)) {
      steps.push(`<li><p>Save a card for Booking Protection. Nothing is charged now; ${esc(protectionWords(view))}</p>
<form method="post" action="${esc(`${path}/setup`)}"><button type="submit" class="primary">Save a card</button></form></li>`);
    }
    if (owesDeposit(view) && booking.depositMinor !== null) {
      steps.push(`<li><p>Pay the deposit of ${esc(f.money(booking.depositMinor))}; it counts towards the total.</p>
<form method="post" action="${esc(`${path}/pay`)}"><button type="submit" class="primary">Pay deposit ${esc(f.money(booking.depositMinor))}</button></form></li>`);
    }
    if (steps.length > 0) parts.push(`<h2>To confirm your booking</h2>\n<ol>\n${steps.join('\n')}\n</ol>`);
  }
  if (isChangeable(view, now) && awaitsProof(view)) {
    parts.push(`<p><a href="${esc(`${path}/cancel`)}">Cancel the booking</a></p>`);
  } else if (isChangeable(view, now)) {
    // A late move the location forbids is not offered (it could only be refused).
    const moveRefused = moveRefusal(view, now);
    const call = callLinkHtml(view.location);
    const phone = call ? ` To ask about another time, call ${call}.` : '';
    parts.push(`<h2>Need to change it?</h2>
<p>${moveRefused ? `${esc(moveRefused)}${phone}` : esc(policyWords(view))}</p>
<div class="actions">
${moveRefused ? '' : `<a href="${esc(`${path}/reschedule`)}">Change the time</a>\n`}<a href="${esc(`${path}/cancel`)}">Cancel the booking</a>
</div>`);
  }
  return parts.join('\n');
}

/**
 * A waitlist offer that ended unclaimed: what the customer did (let it go, and whether they left the
 * waitlist), that the salon took them off the waitlist, or that it lapsed, and the way to book; never that a booking of theirs expired. Of a lapse
 * nothing is said of the entry: one made on the public page ends with it, once the sweeper records it.
 */
function endedOfferWords(view: BookingPageView, ended: EndedOffer): string {
  const what = ended.letGo
    ? !ended.byCustomer
      ? 'This time is no longer held for you: the salon has taken you off the waitlist.'
      : ended.stillWaiting
        ? 'You let this time go. You are still on the waitlist: we will tell you if another time frees up.'
        : 'You let this time go and left the waitlist.'
    : 'This time was held for you and not booked in time, so it went to the next person waiting.';
  return `<p role="status">${esc(what)} <a href="${esc(bookAgainHref(view))}">Book a time</a></p>`;
}

/**
 * The public booking page with the same location and services chosen; its first step when the
 * location no longer takes bookings (its address on the page would be Not found).
 */
export function bookAgainHref(view: BookingPageView): string {
  if (!view.location.active) return `/p/${view.organisation.slug}`;
  const query = new URLSearchParams({
    location: view.location.slug,
    services: view.booking.serviceIds.join(','),
  });
  return `/p/${view.organisation.slug}?${query.toString()}`;
}

const NEW_CODE_SENT = 'We sent you a new code; the one before no longer works.';
const PROVIDER_NOT_HEARD =
  'If you have just paid or saved a card, the payment provider is still telling us: this can take a minute. Reload this page to see it.';

/**
 * The refusals of a code the verify form redirects with (?refused=): the flag says only that a code was
 * refused and how; what the page says comes from the proof (codeRefusal).
 */
const CODE_REFUSALS: ReadonlySet<string> = new Set<Exclude<CodeOutcome, { proven: true }>['reason']>([
  'wrong',
  'spent',
  'expired',
  'unreadable',
]);

/** The code step of a public booking: where the code went, the form, and a new code. */
function proofStep(view: BookingPageView, path: string, refused: FieldRefusal | undefined): string {
  const proof = view.proof;
  const where = proof
    ? proof.channel === 'sms'
      ? `by text to ${maskedRecipient('sms', proof.to)}`
      : `by e-mail to ${proof.to.replace(/^(.).*(@.*)$/, '$1…$2')}`
    : 'to the phone number or e-mail address you gave';
  const minutes = CODE_VALID_MS / 60_000;
  return `<h2>Confirm it is you</h2>
<p>We sent a ${CODE_DIGITS}-digit code ${esc(where)}. Enter it here, or open the link in that message. The code works for ${minutes} minutes; your booking is not confirmed until then.</p>
<form method="post" action="${esc(`${path}/verify`)}">
<label for="code">Code</label>
${refusalBeside(refused, 'code', 'code')}<input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="12" required${refusedState(refused, 'code', 'code')}>
<div class="actions"><button type="submit" class="primary">Confirm booking</button></div>
</form>
<form method="post" action="${esc(`${path}/resend`)}">
<div class="actions"><button type="submit" class="secondary">Send a new code</button></div>
</form>`;
}

/** What the page says when a code did not prove the contact. */
function codeRefusal(view: BookingPageView, refused: string | undefined): string | undefined {
  const proof = view.proof;
  if (!proof || !awaitsProof(view) || !CODE_REFUSALS.has(refused ?? '')) return undefined;
  // Said from the proof as it is now: the tries left are the database's, and a code spent, expired or
  // replaced (a new one sent) since the refusal is said as it is, or not at all.
  switch (proof.state) {
    case 'usable':
      if (refused === 'unreadable')
        return `The code has ${CODE_DIGITS} digits: check the latest message we sent and enter all of them.`;
      return refused === 'wrong' && proof.triesLeft < CODE_TRIES
        ? `That code is not right. Check the latest message we sent; ${counted(proof.triesLeft, 'try is', 'tries are')} left for this code.`
        : undefined;
    case 'spent':
      return 'That code was entered wrongly too many times. Send a new code and enter that one.';
    case 'expired':
      return 'That code has expired. Send a new code and enter that one.';
    default:
      return undefined;
  }
}

/** What the location's policy makes of a change before it starts: late, or not possible at all. */
function policyWords(view: BookingPageView): string {
  const { cancellationWindowHours: hours, lateCancellation, lateReschedule } = view.location.policy;
  const before = `less than ${counted(hours, 'hour')} before the appointment`;
  const costs = 'you will see what that costs before you confirm.';
  if (lateReschedule === 'forbid' && lateCancellation === 'forbid') {
    return `It cannot be moved or cancelled here ${before}.`;
  }
  if (lateReschedule === 'forbid')
    return `It cannot be moved here ${before}; a cancellation then is late: ${costs}`;
  if (lateCancellation === 'forbid')
    return `It cannot be cancelled here ${before}; a move then is late: ${costs}`;
  return `Changes and cancellations ${before} are late: ${costs}`;
}

function protectionWords(view: BookingPageView): string {
  const late = view.booking.protection.lateCancellationFeePercentage;
  const noShow = view.booking.protection.noShowFeePercentage;
  const words: string[] = [];
  if (late) words.push(`${late}% of the price if you cancel late`);
  if (noShow) words.push(`${noShow}% if you do not come`);
  return words.length > 0 ? `the card may be charged ${words.join(', or ')}.` : 'the card is kept on file.';
}

/** What a change costs, in words: the fee to the saved card, what becomes of a paid deposit. */
function costWords(view: BookingPageView, disclosure: ChangeDisclosure, kind: 'cancel' | 'move'): string {
  const f = formatOf(view);
  const lateness = disclosure.late ? ['This is a late change under the cancellation policy.'] : [];
  const sentences: string[] = [];
  if (disclosure.fee && disclosure.fee.amountMinor > 0) {
    const fee = disclosure.fee;
    const credit =
      fee.depositCreditMinor > 0 ? `, less the deposit of ${f.money(fee.depositCreditMinor)} you paid` : '';
    sentences.push(
      `A late cancellation fee of ${f.money(fee.amountMinor)} (${fee.feePercentage}% of the price) applies${credit}: ${f.money(fee.chargeAmountMinor)} will be charged to your saved card.`,
    );
  }
  if (disclosure.depositOutcome === 'retained' && view.booking.depositMinor !== null) {
    sentences.push(`Your deposit of ${f.money(view.booking.depositMinor)} will be kept.`);
  } else if (disclosure.depositOutcome === 'refunded' && view.booking.depositMinor !== null) {
    sentences.push(`Your deposit of ${f.money(view.booking.depositMinor)} will be refunded.`);
  } else if (disclosure.depositOutcome === 'carried_over') {
    sentences.push('Your deposit moves with the booking.');
  }
  // Nothing to pay or lose (late or not): said, so that "late" alone does not leave the cost unknown.
  if (sentences.length === 0)
    sentences.push(
      kind === 'cancel' ? 'There is no charge for cancelling.' : 'There is no charge for moving it.',
    );
  return [...lateness, ...sentences].join(' ');
}

/**
 * Why the cancel page cannot cancel, in the customer's words: one already cancelled (the back button,
 * a second tab) is said to be so, not refused as the API words the state machine's refusal.
 */
function cancelRefusalWords(view: BookingPageView, message: string): string {
  return view.booking.status === 'cancelled' ? 'This booking is already cancelled.' : message;
}

/** Said above the terms when those the customer confirmed are no longer the booking's. */
const TERMS_CHANGED =
  'Nothing is cancelled yet: what cancelling means changed since this page was opened (the appointment came inside the cancellation window, or the booking was changed). Here is what it means now.';

function cancelBody(
  view: BookingPageView,
  refusal: string | undefined,
  disclosure: ChangeDisclosure,
  termsChanged = false,
): string {
  const f = formatOf(view);
  const path = bookingPagePath(view.token);
  if (refusal) {
    return `<h1>Cancel your booking</h1>
<p role="alert">${esc(refusal)}</p>
${bookingSummary(view, f)}
<p><a href="${esc(path)}">Back to the booking</a></p>`;
  }
  const costly = disclosure.late || disclosure.fee !== null;
  const later = visitsWaitingOnItsCode(view);
  const alongWith =
    later.length === 0
      ? ''
      : `<p class="notice">${later.length === 1 ? 'The later visit booked with it waits for the same code and is' : `The ${later.length} later visits booked with it wait for the same code and are`} cancelled too: ${later.map((visit) => f.time(visit.startsAt)).join('; ')}.</p>\n`;
  return `<h1>Cancel your booking</h1>
${termsChanged ? `<p class="fee" role="alert">${esc(TERMS_CHANGED)}</p>\n` : ''}${bookingSummary(view, f)}
${alongWith}<p class="${costly ? 'fee' : 'notice'}" role="status">${esc(costWords(view, disclosure, 'cancel'))}</p>
<form method="post" action="${esc(`${path}/cancel`)}">
<input type="hidden" name="terms" value="${esc(changeTerms(view.booking.startsAt, disclosure))}">
<div class="actions"><button type="submit" class="primary">Yes, cancel it</button>
<a href="${esc(path)}">Keep my booking</a></div>
</form>`;
}

interface MoveQuery {
  date?: string;
  starts_at?: string;
  /** The stylist's id; absent: anyone. */
  staff?: string;
}

/**
 * Why the booking cannot be moved now (a late move the location forbids, its location made inactive
 * since), or undefined.
 */
function moveRefusal(view: BookingPageView, now: number): string | undefined {
  const decision = decideChange(view.booking, view.location.policy, 'reschedule', now);
  return closedToMoves(decision, view.location).refusal?.message;
}

/** The stylists who do all the booking's services at its location. */
async function stylistsOfView(deps: AppDeps, view: BookingPageView): Promise<StaffRef[]> {
  const { services } = await publicServices(deps.db, view.organisation.id, view.location.slug);
  return stylistsFor(services, view.booking.serviceIds);
}

/** Of the staff free at `at`, the booking's own stylist when free, else the first. */
function stylistAt(slots: Slot[], at: number, own: string): string | undefined {
  const free = slots.filter((slot) => slot.startsAt === at).map((slot) => slot.staffId);
  return free.includes(own) ? own : free[0];
}

/** A day's address on the move page, the stylist kept. */
function moveHref(view: BookingPageView, staff: StaffRef | undefined, date: string): string {
  const query = new URLSearchParams();
  if (staff) query.set('staff', staff.id);
  query.set('date', date);
  return `${bookingPagePath(view.token)}/reschedule?${query.toString()}#times`;
}

function moveBody(
  view: BookingPageView,
  found: DaysFound,
  stylists: StaffRef[],
  staff: StaffRef | undefined,
): string {
  const f = formatOf(view);
  const path = `${bookingPagePath(view.token)}/reschedule`;
  const { window, locale } = found;
  const starts = startsOn(found, window.date);
  const options = stylists
    .map(
      (m) => `<option value="${esc(m.id)}"${m.id === staff?.id ? ' selected' : ''}>${esc(m.name)}</option>`,
    )
    .join('');
  const list =
    starts.length === 0
      ? `<p role="status">No free times that day. ${emptyDayReasonHtml(found, window.date)}</p>`
      : `<form method="get" action="${esc(path)}">
${staff ? `<input type="hidden" name="staff" value="${esc(staff.id)}">\n` : ''}${timeGroups(starts, view.location, locale)}
<div class="actions"><button type="submit" class="primary">Continue</button></div></form>`;
  return `<h1>Move your booking</h1>
${bookingSummary(view, f)}
<form method="get" action="${esc(path)}">
<label for="staff">Stylist</label>
<select id="staff" name="staff"><option value="">Anyone</option>${options}</select>
<label for="date">Day</label>
<input id="date" name="date" type="date" value="${esc(window.date)}" required>
<div class="actions"><button type="submit" class="secondary">Show times</button></div>
</form>
${dayStrip(found, { action: path, keep: staff ? { staff: staff.id } : {} })}
<h2 id="times">${esc(dayWords(window.date, window, locale))}</h2>
<p>${esc(zoneWords(view.location, locale, window.date))}</p>
${list}
<p><a href="${esc(bookingPagePath(view.token))}">Back to the booking</a></p>`;
}

/** A move the policy refuses now: why, and what is still possible (keep it, cancel it, call). */
function moveRefusedBody(view: BookingPageView, refusal: string, now: number): string {
  const f = formatOf(view);
  const path = bookingPagePath(view.token);
  const call = callLinkHtml(view.location);
  const phone = call ? `<p>To ask about another time, call ${esc(view.location.name)} on ${call}.</p>\n` : '';
  const cancel =
    isChangeable(view, now) && !decideChange(view.booking, view.location.policy, 'cancel', now).refusal
      ? ` <a href="${esc(`${path}/cancel`)}">Cancel the booking</a>`
      : '';
  return `<h1>Move your booking</h1>
<p role="alert">${esc(refusal)}</p>
${bookingSummary(view, f)}
${phone}<div class="actions"><a href="${esc(path)}">Keep my booking</a>${cancel}</div>`;
}

/** A move to where the booking already is (confirmed before): said, with the booking as it is. */
function alreadyThereBody(view: BookingPageView, back: string): string {
  const f = formatOf(view);
  return `<h1>Move your booking</h1>
<p role="alert">Your booking is already at this time.</p>
${bookingSummary(view, f)}
<div class="actions"><a href="${esc(back)}">Choose another time</a>
<a href="${esc(bookingPagePath(view.token))}">Back to the booking</a></div>`;
}

/** A move that failed on confirming (taken meanwhile): why, and the way to choose again. */
function moveFailedBody(view: BookingPageView, message: string, back: string): string {
  const f = formatOf(view);
  return `<h1>Move your booking</h1>
<p role="alert">${esc(message)} Your booking is unchanged.</p>
${bookingSummary(view, f)}
<div class="actions"><a href="${esc(back)}">Choose another time</a>
<a href="${esc(bookingPagePath(view.token))}">Keep the current time</a></div>`;
}

/** Said above the terms when those the customer confirmed a move on are no longer the booking's. */
const MOVE_TERMS_CHANGED =
  'Nothing is moved yet: what moving it means changed since this page was opened (the appointment came inside the cancellation window, or the booking was changed). Here is what it means now.';

function moveConfirmBody(
  view: BookingPageView,
  at: number,
  staffId: string | undefined,
  stylists: StaffRef[],
  refusal: string | undefined,
  back: string,
  disclosure: ChangeDisclosure,
  termsChanged = false,
): string {
  const f = formatOf(view);
  const path = bookingPagePath(view.token);
  if (refusal) {
    return `<h1>Move your booking</h1>
<p role="alert">${esc(refusal)}</p>
<div class="actions"><a href="${esc(back)}">Choose another time</a>
<a href="${esc(path)}">Keep the current time</a></div>`;
  }
  const who = stylists.find((m) => m.id === staffId);
  const withWhom = who && who.id !== view.booking.staffId ? ` with ${esc(who.name)}` : '';
  return `<h1>Move your booking</h1>
${termsChanged ? `<p class="fee" role="alert">${esc(MOVE_TERMS_CHANGED)}</p>\n` : ''}<p>From ${f.time(view.booking.startsAt)} to <strong>${f.time(at)}</strong>${withWhom}.</p>
<p class="${disclosure.late ? 'fee' : 'notice'}" role="status">${esc(costWords(view, disclosure, 'move'))}</p>
<form method="post" action="${esc(`${path}/reschedule`)}">
<input type="hidden" name="starts_at" value="${esc(new Date(at).toISOString())}">
<input type="hidden" name="terms" value="${esc(changeTerms(view.booking.startsAt, disclosure))}">
${staffId ? `<input type="hidden" name="staff_id" value="${esc(staffId)}">\n` : ''}<div class="actions"><button type="submit" class="primary">Yes, move it</button>
<a href="${esc(back)}">Choose another time</a>
<a href="${esc(path)}">Keep the current time</a></div>
</form>`;
}
