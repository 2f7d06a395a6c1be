import { randomUUID } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DateTime } from 'luxon';
import { createApiKey, getLiveApiKey, listApiKeys, revokeApiKey } from '../../app/api-key-service.ts';
import { getAvailability } from '../../app/availability-service.ts';
import { previewCancellation, rescheduleHorizon, rescheduleRefusal } from '../../app/booking-changes.ts';
import {
  bookForCaller,
  diaryStamp,
  loadBookingDetail,
  loadDiary,
  searchClients,
  servicesOfferedAt,
  staffNamesAt,
} from '../../app/console-service.ts';
import type { CursorSecrets } from '../../app/cursor-secrets.ts';
import type { AppDeps } from '../../app/deps.ts';
import { listLocations, requireLocation } from '../../app/directory-service.ts';
import { listMessages, markMessageDone } from '../../app/message-service.ts';
import { listConnectors, revokeConnector } from '../../app/oauth-connectors.ts';
import { isAlreadySent } from '../../app/once-forms.ts';
import { RECENT_OUTBOX_LIMIT, recentOutbox, zonesOfMessages } from '../../app/outbox-service.ts';
import { sendLink } from '../../app/send-link.ts';
import {
  type ChangeScope,
  cancelWithScope,
  followingVisits,
  rescheduleWithScope,
} from '../../app/series-changes.ts';
import { type ConsoleSession, canManageKeys, signIn, signOut } from '../../app/staff-account-service.ts';
import {
  chargeFee,
  checkOut,
  complete,
  markNoShow,
  mayWaiveFees,
  payDepositByStaff,
  waiveFee,
} from '../../app/staff-actions.ts';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listDeliveries,
  listWebhookEndpoints,
  sendTestEvent,
} from '../../app/webhooks/endpoints.ts';
import { API_KEY_SCOPES, type ApiKeyScope } from '../../domain/api-key.ts';
import type { Booking, FeeKind } from '../../domain/booking/booking.ts';
import { changeTerms } from '../../domain/booking/change-policy.ts';
import { heldTermsOf } from '../../domain/booking/holds.ts';
import { AppError, isAppError } from '../../domain/errors.ts';
import {
  OUTBOX_STATUSES,
  type OutboxMessage,
  type OutboxNotice,
  type OutboxStatus,
} from '../../domain/outbox.ts';
import { deliveriesCursor } from '../delivery-cursor.ts';
import { isFault, toAppError } from '../error-envelope.ts';
import { acceptPageFields, type Fields, instantOf } from '../page-fields.ts';
import { withPublicPaths } from '../pages/page-shell.ts';
import { plainWords } from '../pages/people-words.ts';
import { publicBaseUrl, publicPath, publicPathPrefix } from '../public-base-url.ts';
import { repeatOf } from '../repeat-fields.ts';
import {
  bookingBody,
  CANCEL_TERMS_CHANGED,
  cancelBody,
  type Done,
  rescheduleBody,
  waiveBody,
  whereItIs,
} from './booking-pages.ts';
import { calendarPages } from './calendar-routes.ts';
import { connectorsBody } from './connectors-page.ts';
import { consoleScript } from './console-script.ts';
import {
  bookBody,
  clientsBody,
  DONE_MESSAGES_SHOWN,
  type KeptBooking,
  type KeyForm,
  keysBody,
  messagesBody,
  revokeKeyBody,
  signInBody,
} from './desk-pages.ts';
import { diaryBody } from './diary-page.ts';
import { outboxBody } from './outbox-page.ts';
import { type Formats, formats, ICON_PATH, ICON_SVG, page, type Shell, securePage } from './page.ts';
import { ERROR_TITLES, sendProblem } from './problem-page.ts';
import {
  assertCsrf,
  assertOwnOrigin,
  ConsoleRedirect,
  ConsoleRefusal,
  clearSessionCookie,
  pollSession,
  requireSession,
  safeNext,
  setSessionCookie,
} from './session.ts';
import { waitlistPages } from './waitlist-routes.ts';
import {
  deleteWebhookBody,
  deliveriesBody,
  type EndpointForm,
  type WebhookDone,
  webhookBase,
  webhooksBody,
} from './webhooks-page.ts';

/**
 * The staff console at /console (design.md 8.4): server-rendered pages for the front desk, signed in
 * with staff accounts. Every change goes through the same use cases as the API and the CLI. Outside
 * /v1 and its API keys, hidden from the OpenAPI document; answers are HTML pages, failures included.
 */
type Handler = (request: FastifyRequest, reply: FastifyReply, session: ConsoleSession) => Promise<unknown>;

const FORM_LIMIT_BYTES = 16 * 1024;

/** Said on the keys page when its form was sent again (a reload of the answer that showed the key). */
const ALREADY_SENT =
  'That form was already sent, and issued its key then: it is in the list below. Its key was shown only once; if it was not copied, revoke it and issue another.';

/** Deliveries on one page of an endpoint's log. */
const DELIVERIES_PAGE_SIZE = 25;

/** The field of the desk's booking form a refusal's param names (said beside it). */
const BOOKING_FIELDS: Record<string, KeptBooking['field']> = {
  starts_at: 'slot',
  staff_id: 'slot',
  first_name: 'first_name',
  last_name: 'last_name',
  phone: 'phone',
  email: 'email',
  notes: 'notes',
  repeat_every_weeks: 'repeat_every_weeks',
  repeat_count: 'repeat_count',
};

/** An action whose outcome the booking already shows, by the action: what it did, and how that shows. */
const ALREADY_DONE: Record<string, { said: Done; holds: (booking: Booking) => boolean }> = {
  complete: { said: 'completed', holds: (b) => b.status === 'completed' },
  check_out: { said: 'needs_checkout', holds: (b) => b.status === 'needs_checkout' },
  no_show: { said: 'no_show', holds: (b) => b.status === 'no_show' },
  deposit_paid: { said: 'deposit_paid', holds: (b) => b.depositStatus === 'paid' },
};

export function consoleRoutes(deps: AppDeps, cursorSecrets: CursorSecrets) {
  const now = () => deps.clock.nowMs();
  return async (app: FastifyInstance) => {
    // Forms post urlencoded (the API keeps its JSON-only rule); every query and form is text fields,
    // repeated names (several services) joined with a newline.
    acceptPageFields(app, FORM_LIMIT_BYTES);

    app.setErrorHandler(async (error: FastifyError, request, reply) => {
      if (error instanceof ConsoleRedirect) return redirect(reply, error.location);
      if (error instanceof ConsoleRefusal) {
        return sendProblem(reply, error.status, error.title, error.message, request.id);
      }
      const appError = toAppError(error, request);
      if (isFault(error, appError)) request.log.error({ err: error }, 'console request failed');
      const title = ERROR_TITLES[appError.status] ?? 'Something went wrong';
      return sendProblem(reply, appError.status, title, appError.message, request.id);
    });

    const hidden = { schema: { hide: true } };
    const get = (path: string, handler: Handler) =>
      app.get(path, hidden, async (request, reply) =>
        handler(request, reply, await requireSession(deps.db, request, now(), reply)),
      );
    const post = (
      path: string,
      handler: (
        request: FastifyRequest,
        reply: FastifyReply,
        session: ConsoleSession,
        form: Fields,
      ) => Promise<unknown>,
    ) =>
      app.post(path, hidden, async (request, reply) => {
        assertOwnOrigin(request);
        const session = await requireSession(deps.db, request, now(), reply);
        const form = formOf(request);
        assertCsrf(session, form);
        return handler(request, reply, session, form);
      });
    const shell = (session: ConsoleSession, title: string, current?: Shell['current']): Shell => ({
      title,
      current,
      canManageKeys: canManageKeys(session.user.role),
      session: {
        email: session.user.email,
        role: session.user.role,
        organisationName: session.organisation.name,
        csrfToken: session.csrfToken,
      },
    });

    app.get('/console/assets/console.js', hidden, async (request, reply) =>
      reply
        .type('text/javascript; charset=utf-8')
        .header('cache-control', 'no-cache')
        .header('x-content-type-options', 'nosniff')
        .send(consoleScript(publicPathPrefix(request))),
    );

    app.get(ICON_PATH, hidden, async (_request, reply) =>
      reply
        .type('image/svg+xml')
        .header('cache-control', 'public, max-age=86400')
        .header('x-content-type-options', 'nosniff')
        .send(ICON_SVG),
    );

    app.get('/console', hidden, async (_request, reply) => redirect(reply, '/console/diary'));

    // Any other address under /console (a link cut short, an old bookmark, a form's answer opened
    // again, which is a GET of a POST-only address) is the console's own page with the way back to
    // the diary, never the API's JSON envelope; it asks for no session and names nothing of one.
    app.all('/console/*', hidden, async () => {
      throw new ConsoleRefusal(404, 'Not found', 'There is no console page at this address.');
    });

    app.get<{ Querystring: { next?: string; expired?: string } }>(
      '/console/sign-in',
      hidden,
      async (request, reply) => {
        const notice =
          request.query.expired === '1' ? 'Your session has ended. Please sign in again.' : undefined;
        return send(reply, { title: 'Sign in' }, signInBody({ next: safeNext(request.query.next), notice }));
      },
    );

    app.post('/console/sign-in', hidden, async (request, reply) => {
      assertOwnOrigin(request);
      const form = formOf(request);
      // Checked before the password: a refused address signs nobody in.
      const next = safeNext(form.next);
      const outcome = await signIn(
        deps.db,
        deps.rateLimitStore,
        {
          organisationSlug: form.organisation ?? '',
          email: form.email ?? '',
          password: form.password ?? '',
          address: request.ip,
        },
        now(),
      );
      if (!outcome.ok) {
        const error =
          outcome.reason === 'throttled'
            ? `Too many failed sign-ins. Try again in ${Math.ceil(outcome.retryAfterMs / 60_000)} minutes.`
            : 'The organisation, e-mail or password is wrong.';
        if (outcome.reason === 'throttled')
          reply.header('retry-after', Math.ceil(outcome.retryAfterMs / 1000));
        return send(
          reply.code(outcome.reason === 'throttled' ? 429 : 401),
          { title: 'Sign in' },
          signInBody({
            error,
            next,
            organisation: form.organisation,
            email: form.email,
          }),
        );
      }
      setSessionCookie(reply, outcome.token);
      return redirect(reply, next);
    });

    post('/console/sign-out', async (_request, reply, session) => {
      await signOut(deps.db, session);
      clearSessionCookie(reply);
      return redirect(reply, '/console/sign-in');
    });

    get('/console/diary', async (request, reply, session) => {
      const query = request.query as { location?: string; date?: string; view?: string };
      // `?date=` twice (a link pasted onto another) arrives joined by a newline (acceptPageFields):
      // which day is meant is not ours to guess, and the joined text is no date to quote back.
      if (query.date?.includes('\n')) throw new AppError('invalid_request', 'Give one date.', 'date');
      const view = query.view === 'week' ? 'week' : 'day';
      const location = query.location || undefined;
      const zoneOf = location
        ? (await requireLocation(deps.db, session.organisation.id, location, 'location')).timezone
        : await firstLocationZone(deps, session);
      const date = query.date || DateTime.fromMillis(now(), { zone: zoneOf }).toISODate()!;
      const diary = await loadDiary(
        deps.db,
        session.organisation.id,
        location,
        date,
        view === 'week' ? 7 : 1,
        now(),
      );
      const f = formats(session.organisation.locale, diary.location.timezone);
      return send(
        reply,
        shell(session, `Diary – ${diary.location.name}`, 'diary'),
        diaryBody(diary, view, f, now()),
      );
    });

    // What the live updates ask (console.js): JSON, 401 once the session has ended.
    app.get<{ Querystring: { location?: string } }>(
      '/console/diary/stamp',
      hidden,
      async (request, reply) => {
        const session = await pollSession(deps.db, request, now());
        if (!session) return reply.code(401).header('cache-control', 'no-store').send({ signed_in: false });
        const stamp = await diaryStamp(deps.db, session.organisation.id, request.query.location ?? '');
        return reply.header('cache-control', 'no-store').send({ stamp });
      },
    );

    /** A booking's page: `done` what was just done, or `refusal` why a change was not. */
    const bookingPage = async (
      reply: FastifyReply,
      session: ConsoleSession,
      reference: string,
      said: { done?: string | undefined; refusal?: string },
    ) => {
      const detail = await loadBookingDetail(deps.db, session.organisation.id, reference);
      const f = formats(session.organisation.locale, detail.location.timezone);
      return send(
        reply,
        shell(session, `Booking ${detail.booking.reference}`, 'diary'),
        bookingBody(
          detail,
          f,
          session.csrfToken,
          said.done,
          now(),
          await mayWaiveFees(deps.db, session.organisation.id, session.user.role),
          said.refusal,
        ),
      );
    };
    /**
     * A change to a booking, made; refused as a conflict (another desk, the customer or the phone
     * agent changed it first, or the same form was sent twice), the booking's page as it now is, with
     * why nothing was done, instead of a dead end.
     */
    const changeBooking = async (
      reply: FastifyReply,
      session: ConsoleSession,
      reference: string,
      change: () => Promise<unknown>,
    ) => {
      try {
        return await change();
      } catch (error) {
        if (!isAppError(error) || error.code !== 'conflict') throw error;
        return bookingPage(reply.code(409), session, reference, { refusal: error.message });
      }
    };

    get('/console/bookings/:reference', async (request, reply, session) => {
      const { reference } = request.params as { reference: string };
      const done = (request.query as { done?: string }).done;
      return bookingPage(reply, session, reference, { done });
    });

    // Waiving a fee: asked first, with a reason the event log keeps; the organisation may keep it
    // to owners and admins (policies.fee_waivers).
    const refuseWaiver = async (session: ConsoleSession) => {
      if (!(await mayWaiveFees(deps.db, session.organisation.id, session.user.role))) {
        throw new ConsoleRefusal(403, 'Not allowed', 'Only an owner or admin may waive fees here.');
      }
    };
    const feeKindOf = (value: string | undefined) => (value === 'no_show' ? 'no_show' : 'late_cancellation');
    get('/console/bookings/:reference/waive', async (request, reply, session) => {
      await refuseWaiver(session);
      const { reference } = request.params as { reference: string };
      const detail = await loadBookingDetail(deps.db, session.organisation.id, reference);
      const f = formats(session.organisation.locale, detail.location.timezone);
      const kind = feeKindOf((request.query as { fee?: string }).fee);
      const body = waiveBody(detail, kind, f, session.csrfToken);
      return send(reply, shell(session, `Waive a fee – ${detail.booking.reference}`, 'diary'), body);
    });
    post('/console/bookings/:reference/waive', async (request, reply, session, form) => {
      await refuseWaiver(session);
      const { reference } = request.params as { reference: string };
      const kind = feeKindOf(form.fee);
      const reason = (form.reason ?? '').trim();
      if (reason === '') {
        const detail = await loadBookingDetail(deps.db, session.organisation.id, reference);
        const f = formats(session.organisation.locale, detail.location.timezone);
        const body = waiveBody(detail, kind, f, session.csrfToken, 'Give the reason for waiving the fee.');
        return send(
          reply.code(400),
          shell(session, `Waive a fee – ${detail.booking.reference}`, 'diary'),
          body,
        );
      }
      const { actor } = changer(session);
      return changeBooking(reply, session, reference, async () => {
        const done = await waiveFee(deps.db, session.organisation.id, reference, now(), kind, actor, reason);
        return redirect(reply, doneAt(done.booking.reference, 'fee_waived'));
      });
    });

    post('/console/bookings/:reference/action', async (request, reply, session, form) => {
      const { reference } = request.params as { reference: string };
      const org = session.organisation.id;
      const fee =
        form.fee === 'no_show' || form.fee === 'late_cancellation' ? (form.fee as FeeKind) : undefined;
      const { actor } = changer(session);
      // Each action answers with the booking's reference and the key of what the flash says was done.
      const did = (said: Done) => (done: { booking: { reference: string } }) => ({
        reference: done.booking.reference,
        said,
      });
      const actions: Record<string, () => Promise<{ reference: string; said: Done }>> = {
        complete: () => complete(deps.db, org, reference, now(), actor).then(did('completed')),
        check_out: () => checkOut(deps.db, org, reference, now(), actor).then(did('needs_checkout')),
        no_show: () => markNoShow(deps.db, org, reference, now(), actor).then(did('no_show')),
        deposit_paid: () =>
          payDepositByStaff(deps.db, org, reference, now(), actor).then(did('deposit_paid')),
        charge_fee: () =>
          chargeFee(deps.db, org, reference, now(), fee, deps.payments, actor).then(did('fee_charged')),
        send_link: async () => {
          const sent = await sendLink(
            deps.db,
            { store: deps.rateLimitStore },
            org,
            reference,
            now(),
            deps.messageProviders,
          );
          return { reference: sent.reference, said: sentAgain(sent.notices) };
        },
      };
      // Own names only: "constructor" or "__proto__" is no action.
      const run = Object.hasOwn(actions, form.action ?? '') ? actions[form.action!] : undefined;
      if (!run) throw new ConsoleRefusal(400, 'Unknown action', 'This action does not exist.');
      try {
        const done = await run();
        return redirect(reply, doneAt(done.reference, done.said));
      } catch (error) {
        if (!isAppError(error) || error.code !== 'conflict') throw error;
        // Refused because what it does is done already (the button pressed twice, a reload of its
        // answer, a second tab): said as done, as a cancellation or a move sent twice is.
        const held = Object.hasOwn(ALREADY_DONE, form.action!) ? ALREADY_DONE[form.action!] : undefined;
        const { booking } = await loadBookingDetail(deps.db, org, reference);
        if (held?.holds(booking)) return redirect(reply, doneAt(booking.reference, held.said));
        return bookingPage(reply.code(409), session, reference, { refusal: error.message });
      }
    });

    /** The cancel page: what cancelling means now; `alert`, why a form sent from it did nothing (older terms, a refused reason). */
    const cancelPage = async (
      reply: FastifyReply,
      session: ConsoleSession,
      reference: string,
      alert: string | null = null,
      reason = '',
    ) => {
      const detail = await loadBookingDetail(deps.db, session.organisation.id, reference);
      const preview = await previewCancellation(deps.db, changer(session), reference, now());
      const f = formats(session.organisation.locale, detail.location.timezone);
      const later = await followingVisits(deps.db, detail.booking, now());
      const body = cancelBody(
        detail,
        preview.disclosure,
        preview.refusal?.message ?? null,
        f,
        session.csrfToken,
        later.map((visit) => visit.startsAt),
        alert,
        reason,
      );
      return send(reply, shell(session, `Cancel ${detail.booking.reference}`, 'diary'), body);
    };

    get('/console/bookings/:reference/cancel', async (request, reply, session) => {
      const { reference } = request.params as { reference: string };
      return cancelPage(reply, session, reference);
    });

    post('/console/bookings/:reference/cancel', async (request, reply, session, form) => {
      const { reference } = request.params as { reference: string };
      const reason = form.reason?.trim() || undefined;
      // The terms the page stated are the ones the desk agreed to: changed since (the window passed,
      // another desk moved it), nothing is cancelled and the page states the new ones. A refusal
      // (cancelled meanwhile, started) is left to the cancellation itself to say.
      if (form.terms !== undefined) {
        const preview = await previewCancellation(deps.db, changer(session), reference, now());
        if (
          preview.refusal === null &&
          form.terms !== changeTerms(preview.booking.startsAt, preview.disclosure)
        ) {
          return cancelPage(reply.code(409), session, reference, CANCEL_TERMS_CHANGED, reason);
        }
      }
      return changeBooking(reply, session, reference, async () => {
        // With the provider, which returns a deposit paid online on a timely cancellation.
        const staff = { ...changer(session), payments: deps.payments };
        try {
          const result = await cancelWithScope(
            deps.db,
            staff,
            reference,
            reason,
            scopeOf(form),
            now(),
            false,
          );
          const said = result.following.length > 0 ? 'cancelled_following' : 'cancelled';
          return redirect(reply, doneAt(result.booking.reference, said));
        } catch (error) {
          // A reason the browser's field would not let through (too long, a control character): the
          // form again with what was typed and why, not an error page that loses it.
          if (!isAppError(error) || error.code !== 'invalid_request' || error.param !== 'reason') throw error;
          return cancelPage(reply.code(400), session, reference, error.message, reason);
        }
      });
    });

    get('/console/bookings/:reference/reschedule', async (request, reply, session) => {
      const { reference } = request.params as { reference: string };
      const detail = await loadBookingDetail(deps.db, session.organisation.id, reference);
      const zone = detail.location.timezone;
      const f = formats(session.organisation.locale, zone);
      const title = `Reschedule ${detail.booking.reference}`;
      // Refused whatever time is picked (late, or its state): said now, with no times to pick.
      const refusal = await rescheduleRefusal(deps.db, changer(session), reference, now());
      const later = await followingVisits(deps.db, detail.booking, now());
      const series = {
        laterVisits: later.map((visit) => visit.startsAt),
        following: later.length > 0 && (request.query as { scope?: string }).scope === 'following',
      };
      if (refusal) {
        const body = rescheduleBody(detail, '', [], new Map(), f, session.csrfToken, refusal);
        return send(reply, shell(session, title, 'diary'), body);
      }
      const date =
        (request.query as { date?: string }).date ||
        DateTime.fromMillis(detail.booking.startsAt, { zone }).toISODate()!;
      // A visit of a series may lie, and move, beyond max_advance_days by the series' own length.
      const location = await rescheduleHorizon(
        deps.db,
        detail.booking,
        await requireLocation(deps.db, session.organisation.id, detail.location.slug, 'location'),
      );
      const availability = await getAvailability(
        deps.db,
        session.organisation.id,
        {
          location,
          serviceIds: detail.booking.serviceIds,
          excludeBookingId: detail.booking.id,
          movesHold: heldTermsOf(detail.booking, now()),
          fromDate: date,
          days: 1,
        },
        now(),
      );
      const names = await staffNamesAt(deps.db, session.organisation.id, location.id);
      return send(
        reply,
        shell(session, title, 'diary'),
        rescheduleBody(detail, date, availability.slots, names, f, session.csrfToken, null, series),
      );
    });

    const MOVED_MEANWHILE =
      'Someone else moved this booking while the page was open, so the time picked was not applied. It is shown where it is now: reschedule it again if it should still move.';

    post('/console/bookings/:reference/reschedule', async (request, reply, session, form) => {
      const { reference } = request.params as { reference: string };
      const startsAt = instantOf(form.starts_at);
      if (Number.isNaN(startsAt))
        throw new ConsoleRefusal(400, 'Pick a time', 'Choose one of the free times.');
      const staffId = form.staff_id || undefined;
      const { booking } = await loadBookingDetail(deps.db, session.organisation.id, reference);
      // Where it already is (the same time confirmed twice, in a second tab): nothing moved or sent again.
      if (booking.startsAt === startsAt && (staffId === undefined || staffId === booking.staffId))
        return redirect(reply, doneAt(booking.reference, 'rescheduled'));
      // Picked on a page opened before someone else moved it: moving it again would undo their move
      // (and text the customer twice). Nothing moves; the booking is shown where it now is.
      if (form.from !== undefined && form.from !== whereItIs(booking)) {
        return bookingPage(reply.code(409), session, reference, { refusal: MOVED_MEANWHILE });
      }
      return changeBooking(reply, session, reference, async () => {
        const moved = await rescheduleWithScope(
          deps.db,
          changer(session),
          reference,
          { startsAt, staffId },
          scopeOf(form),
          now(),
          false,
        );
        const said = moved.following.length > 0 ? 'rescheduled_following' : 'rescheduled';
        return redirect(reply, doneAt(moved.booking.reference, said));
      });
    });

    /** The desk's booking form for a location, services and a day; `kept`, a refused one sent back. */
    const bookPage = async (
      reply: FastifyReply,
      session: ConsoleSession,
      query: { location?: string | undefined; date?: string | undefined; service_id?: string | undefined },
      kept?: KeptBooking,
    ) => {
      const org = session.organisation.id;
      const locations = (await listLocations(deps.db, org, { after: null, limit: 100 })).items;
      const location = query.location
        ? await requireLocation(deps.db, org, query.location, 'location')
        : locations[0];
      if (!location)
        throw new ConsoleRefusal(404, 'No location', 'This organisation has no active location.');
      const chosen = (query.service_id ?? '').split('\n').filter(Boolean);
      const date = query.date || DateTime.fromMillis(now(), { zone: location.timezone }).toISODate()!;
      const slots =
        chosen.length === 0
          ? null
          : (
              await getAvailability(
                deps.db,
                org,
                { location, serviceIds: chosen, fromDate: date, days: 1 },
                now(),
              )
            ).slots;
      const body = bookBody({
        locations,
        location,
        services: await servicesOfferedAt(deps.db, org, location),
        chosen,
        date,
        slots,
        staffNames: await staffNamesAt(deps.db, org, location.id),
        f: formats(session.organisation.locale, location.timezone),
        csrf: session.csrfToken,
        currency: session.organisation.currency,
        ...(kept && { kept }),
      });
      return send(reply, shell(session, 'Book', 'book'), body);
    };

    get('/console/book', async (request, reply, session) =>
      bookPage(reply, session, request.query as { location?: string; date?: string; service_id?: string }),
    );

    post('/console/book', async (request, reply, session, form) => {
      const [startsAtText, staffId] = (form.slot ?? '').split('|');
      const startsAt = instantOf(startsAtText);
      if (Number.isNaN(startsAt) || !staffId)
        throw new ConsoleRefusal(400, 'Pick a time', 'Choose one of the free times.');
      try {
        const created = await bookForCaller(
          deps.db,
          { id: session.user.id, organisationId: session.organisation.id },
          {
            locationSlug: form.location ?? '',
            serviceIds: (form.service_id ?? '').split('\n').filter(Boolean),
            staffId,
            startsAt,
            client: {
              firstName: form.first_name ?? '',
              lastName: form.last_name ?? '',
              phone: form.phone?.trim() || undefined,
              email: form.email?.trim() || undefined,
            },
            notes: form.notes?.trim() || undefined,
            repeat: repeatOf(form),
          },
          now(),
          { payments: deps.payments, publicBaseUrl: publicBaseUrl(request) },
        );
        return redirect(
          reply,
          doneAt(
            created.booking.reference,
            created.existing ? 'already_booked' : created.clientOnFile ? 'booked_client_on_file' : 'booked',
          ),
        );
      } catch (error) {
        // Refused (a phone that does not read, the time taken meanwhile): the form again, as typed,
        // with the day's times as they now are and the refusal beside its field; never a dead end
        // that loses what the caller said.
        if (!isAppError(error) || (error.status !== 400 && error.status !== 409)) throw error;
        const location = await requireLocation(
          deps.db,
          session.organisation.id,
          form.location ?? '',
          'location',
        );
        const date = DateTime.fromMillis(startsAt, { zone: location.timezone }).toISODate()!;
        return bookPage(
          reply.code(error.status),
          session,
          { location: location.slug, date, service_id: form.service_id },
          {
            fields: form,
            refusal: plainWords(error, { timezone: location.timezone, locale: session.organisation.locale }),
            field: BOOKING_FIELDS[error.param ?? ''],
          },
        );
      }
    });

    waitlistPages(deps, { get, post, shell, send, redirect });
    calendarPages(deps, { get, post, shell, send, redirect }, (session) => firstLocationZone(deps, session));

    get('/console/clients', async (request, reply, session) => {
      const q = (request.query as { q?: string }).q ?? '';
      const matches = await searchClients(deps.db, session.organisation.id, q, now());
      const locale = session.organisation.locale;
      return send(
        reply,
        shell(session, 'Clients', 'clients'),
        clientsBody(q, matches, (zone) => formats(locale, zone)),
      );
    });

    get('/console/messages', async (_request, reply, session) => {
      const org = session.organisation.id;
      // Every open message, and the latest done ones the page shows: not every message ever taken.
      const [open, done, locations] = await Promise.all([
        listMessages(deps.db, org, { status: 'open' }),
        listMessages(deps.db, org, { status: 'done', latest: DONE_MESSAGES_SHOWN }),
        listLocations(deps.db, org, { after: null, limit: 100 }),
      ]);
      const messages = [...open, ...done];
      const locale = session.organisation.locale;
      const f = formats(locale, locations.items[0]?.timezone ?? 'UTC');
      // A message about a location names it, its time in that location's zone: the desk of that salon
      // knows the call back is theirs.
      const places = new Map(
        locations.items.map((l) => [l.id, { name: l.name, f: formats(locale, l.timezone) }]),
      );
      return send(
        reply,
        shell(session, 'Messages', 'messages'),
        messagesBody(messages, f, session.csrfToken, places),
      );
    });

    post('/console/messages/:id/done', async (request, reply, session) => {
      await markMessageDone(deps.db, (request.params as { id: string }).id, now(), session.organisation.id);
      return redirect(reply, '/console/messages');
    });

    get('/console/outbox', async (request, reply, session) => {
      const asked = (request.query as { status?: string }).status;
      const status = OUTBOX_STATUSES.find((s) => s === asked) as OutboxStatus | undefined;
      const messages = await recentOutbox(deps.db, session.organisation.id, status);
      // Each message's times in its booking's location's zone, as that booking's page says them.
      const locale = session.organisation.locale;
      const zones = await zonesOfMessages(deps.db, session.organisation.id, messages);
      const fallback = formats(locale, await firstLocationZone(deps, session));
      const byZone = new Map<string, Formats>();
      const formatsOf = (message: OutboxMessage) => {
        const zone = zones.get(message.bookingId);
        if (zone === undefined) return fallback;
        const known = byZone.get(zone);
        if (known) return known;
        const f = formats(locale, zone);
        byZone.set(zone, f);
        return f;
      };
      return send(
        reply,
        shell(session, 'Outbox', 'outbox'),
        outboxBody(messages, status, RECENT_OUTBOX_LIMIT, formatsOf, now()),
      );
    });

    const keysPage = async (
      reply: FastifyReply,
      session: ConsoleSession,
      shown: { created?: { key: string; label: string }; notice?: string; refused?: KeyForm } = {},
    ) => {
      const keys = await listApiKeys(deps.db, session.organisation.slug);
      const f = formats(session.organisation.locale, await firstLocationZone(deps, session));
      return send(
        reply,
        shell(session, 'API keys', 'keys'),
        // Each form drawn gets a one-time id of its own (api-key-service.ts createApiKey's formId).
        keysBody({ keys, f, csrf: session.csrfToken, formId: randomUUID(), ...shown }),
      );
    };

    get('/console/keys', async (request, reply, session) => {
      requireKeyManager(session);
      const done = (request.query as { done?: string }).done;
      return keysPage(reply, session, { notice: done === 'already_sent' ? ALREADY_SENT : undefined });
    });

    post('/console/keys', async (_request, reply, session, form) => {
      requireKeyManager(session);
      const typed = { label: form.label ?? '', scope: form.scope ?? '' };
      try {
        // The form offers only the scopes there are: another one is a tampered form, refused rather
        // than issued as some scope the owner did not choose.
        if (!API_KEY_SCOPES.includes(typed.scope as ApiKeyScope)) {
          throw new AppError('invalid_request', 'Scope is read and write or read only.', 'scope');
        }
        const created = await createApiKey(
          deps.db,
          {
            organisationSlug: session.organisation.slug,
            label: typed.label,
            scope: typed.scope as ApiKeyScope,
            formId: form.form_id || undefined,
          },
          now(),
        );
        // The plaintext is in this one answer only (no redirect that would need to carry it); a browser
        // reloading it posts the same form again, which issues nothing (the form's one-time id).
        return keysPage(reply.code(201), session, { created: { key: created.key, label: created.label } });
      } catch (error) {
        if (isAlreadySent(error)) return redirect(reply, '/console/keys?done=already_sent');
        // A refused label or scope is said on the form, what was typed kept, as the webhook form does.
        if (!(error instanceof AppError) || error.code !== 'invalid_request') throw error;
        return keysPage(reply.code(error.status), session, {
          refused: { ...typed, error: error.message, field: error.param === 'scope' ? 'scope' : 'label' },
        });
      }
    });

    // Revoking cuts off whatever uses the key at once and cannot be undone: the list links here, to a
    // page that says so and asks, rather than revoking in one click.
    get('/console/keys/:id/revoke', async (request, reply, session) => {
      requireKeyManager(session);
      const key = await getLiveApiKey(
        deps.db,
        session.organisation.id,
        (request.params as { id: string }).id,
      );
      return send(reply, shell(session, 'Revoke API key', 'keys'), revokeKeyBody(key, session.csrfToken));
    });

    post('/console/keys/:id/revoke', async (request, reply, session) => {
      requireKeyManager(session);
      await revokeApiKey(deps.db, (request.params as { id: string }).id, now(), session.organisation.id);
      return redirect(reply, '/console/keys');
    });

    get('/console/connectors', async (_request, reply, session) => {
      requireConnectorManager(session);
      const connectors = await listConnectors(deps.db, session.organisation.id);
      const f = formats(session.organisation.locale, await firstLocationZone(deps, session));
      return send(
        reply,
        shell(session, 'Connectors', 'connectors'),
        connectorsBody(connectors, f, session.csrfToken),
      );
    });

    post('/console/connectors/:id/revoke', async (request, reply, session) => {
      requireConnectorManager(session);
      await revokeConnector(deps.db, session.organisation.id, (request.params as { id: string }).id, now());
      return redirect(reply, '/console/connectors');
    });

    const webhooksPage = async (
      reply: FastifyReply,
      session: ConsoleSession,
      shown: {
        form?: EndpointForm;
        created?: { url: string; secret: string };
        done?: string | undefined;
      } = {},
    ) => {
      const endpoints = await listWebhookEndpoints(deps.db, session.organisation.id);
      const f = formats(session.organisation.locale, await firstLocationZone(deps, session));
      return send(
        reply,
        shell(session, 'Webhooks', 'webhooks'),
        // Each form drawn gets a one-time id of its own (once-forms.ts).
        webhooksBody({ endpoints, f, csrf: session.csrfToken, formId: randomUUID(), ...shown }),
      );
    };

    get('/console/webhooks', async (request, reply, session) => {
      requireWebhookManager(session);
      return webhooksPage(reply, session, { done: (request.query as { done?: string }).done });
    });

    post('/console/webhooks', async (_request, reply, session, form) => {
      requireWebhookManager(session);
      const typed = {
        url: form.url ?? '',
        description: form.description ?? '',
        // Ticked boxes come as one field, a newline between them (page-fields.ts).
        events: (form.events ?? '').split('\n').filter(Boolean),
      };
      try {
        // A doubled url field arrives joined by a newline, which URL parsing would silently drop,
        // gluing two addresses into one.
        if (typed.url.includes('\n'))
          throw new AppError('invalid_request', 'url must be one address.', 'url');
        const { endpoint, secret } = await createWebhookEndpoint(
          deps.db,
          session.organisation.id,
          typed,
          deps.webhookDestinations,
          now(),
          form.form_id || undefined,
        );
        // The secret is in this one answer only (no redirect that would need to carry it), as a new key;
        // a browser reloading it posts the same form again, which adds nothing (the form's one-time id).
        return webhooksPage(reply.code(201), session, { created: { url: endpoint.url, secret } });
      } catch (error) {
        if (isAlreadySent(error)) {
          return redirect(reply, `/console/webhooks?done=${'already_sent' satisfies WebhookDone}`);
        }
        // A refused URL, no events, or the organisation's 20 already there: said on the form, the
        // typed values kept; anything else is the error page's.
        if (!(error instanceof AppError) || (error.code !== 'invalid_request' && error.code !== 'conflict')) {
          throw error;
        }
        return webhooksPage(reply.code(error.status), session, {
          form: { ...typed, error: { message: error.message, param: error.param } },
        });
      }
    });

    get('/console/webhooks/:id/delete', async (request, reply, session) => {
      requireWebhookManager(session);
      const endpoint = await getWebhookEndpoint(deps.db, session.organisation.id, endpointIdOf(request));
      return send(
        reply,
        shell(session, 'Delete webhook endpoint', 'webhooks'),
        deleteWebhookBody(endpoint, session.csrfToken),
      );
    });

    post('/console/webhooks/:id/delete', async (request, reply, session) => {
      requireWebhookManager(session);
      await deleteWebhookEndpoint(deps.db, session.organisation.id, endpointIdOf(request));
      return redirect(reply, `/console/webhooks?done=${'deleted' satisfies WebhookDone}`);
    });

    post('/console/webhooks/:id/test', async (request, reply, session) => {
      requireWebhookManager(session);
      const id = endpointIdOf(request);
      await sendTestEvent(deps.db, session.organisation.id, id, now());
      return redirect(reply, `${webhookBase(id)}/deliveries?done=${'test_sent' satisfies WebhookDone}`);
    });

    get('/console/webhooks/:id/deliveries', async (request, reply, session) => {
      requireWebhookManager(session);
      const query = request.query as { before?: string; done?: string };
      const endpoint = await getWebhookEndpoint(deps.db, session.organisation.id, endpointIdOf(request));
      const cursors = await deliveriesCursor(cursorSecrets, session.organisation.id, endpoint.id);
      const beforeSeq = beforeOf(query.before, (before) => cursors.decode(before, now()));
      const deliveries = await listDeliveries(deps.db, session.organisation.id, endpoint.id, {
        beforeSeq,
        limit: DELIVERIES_PAGE_SIZE,
      });
      const f = formats(session.organisation.locale, await firstLocationZone(deps, session));
      return send(
        reply,
        shell(session, 'Webhook deliveries', 'webhooks'),
        deliveriesBody({
          endpoint,
          deliveries: deliveries.items,
          older: deliveries.next === null ? null : cursors.encode(deliveries.next, now()),
          paged: beforeSeq !== null,
          f,
          csrf: session.csrfToken,
          done: query.done,
        }),
      );
    });
  };
}

/** A booking's page saying what was just done (booking-pages.ts DONE_TEXTS). */
function doneAt(reference: string, done: Done): string {
  return `/console/bookings/${encodeURIComponent(reference)}?done=${done}`;
}

/** What sending again did: by which channels (the page's messages show to whom). */
function sentAgain(notices: readonly OutboxNotice[]): Done {
  const sms = notices.some((n) => n.channel === 'sms');
  const email = notices.some((n) => n.channel === 'email');
  return sms && email ? 'sent_sms_email' : sms ? 'sent_sms' : 'sent_email';
}

/** A change of this visit only, or (a visit of a series) of it and every later one. */
function scopeOf(form: Fields): ChangeScope {
  return form.scope === 'following' ? 'following' : 'one';
}

function changer(session: ConsoleSession) {
  return { organisationId: session.organisation.id, actor: `user:${session.user.id}` };
}

function requireKeyManager(session: ConsoleSession): void {
  if (!canManageKeys(session.user.role)) {
    throw new ConsoleRefusal(403, 'Not allowed', 'Only owners and admins manage API keys.');
  }
}

function requireConnectorManager(session: ConsoleSession): void {
  if (!canManageKeys(session.user.role)) {
    throw new ConsoleRefusal(403, 'Not allowed', 'Only owners and admins manage connected apps.');
  }
}

function requireWebhookManager(session: ConsoleSession): void {
  if (!canManageKeys(session.user.role)) {
    throw new ConsoleRefusal(403, 'Not allowed', 'Only owners and admins manage webhooks.');
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The endpoint id in the path; anything but a UUID is no endpoint (and never reaches a query). */
function endpointIdOf(request: FastifyRequest): string {
  const { id } = request.params as { id: string };
  if (!UUID.test(id)) throw new AppError('not_found', 'No webhook endpoint has this id.', 'id');
  return id;
}

/**
 * The deliveries page's `before` (an "Older deliveries" link's cursor, as the REST API's), or null for
 * the latest; a cursor tampered with, of another endpoint or over an hour old is refused.
 */
function beforeOf(before: string | undefined, decode: (cursor: string) => number): number | null {
  if (before === undefined || before === '') return null;
  try {
    return decode(before);
  } catch (error) {
    if (!isAppError(error)) throw error;
    throw new ConsoleRefusal(
      400,
      'Please check',
      'This page of deliveries does not exist (or the link is over an hour old): start from the latest.',
    );
  }
}

/** The posted form (page-fields.ts made it text fields); none posted: no fields. */
function formOf(request: FastifyRequest): Fields {
  return (request.body as Fields | undefined) ?? {};
}

/** A console page; its links, forms and script are written as the routes match them (withPublicPaths). */
function send(reply: FastifyReply, shell: Shell, body: string): FastifyReply {
  return securePage(reply).send(withPublicPaths(reply, page(shell, body)));
}

/** A 303 to a console path, at its public path (under PUBLIC_BASE_URL's). */
function redirect(reply: FastifyReply, location: string): FastifyReply {
  return reply.header('cache-control', 'no-store').redirect(publicPath(reply, location), 303);
}

/** The zone of the organisation's first location, for pages that belong to no location. */
async function firstLocationZone(deps: AppDeps, session: ConsoleSession): Promise<string> {
  const first = (await listLocations(deps.db, session.organisation.id, { after: null, limit: 1 })).items[0];
  return first?.timezone ?? 'UTC';
}
