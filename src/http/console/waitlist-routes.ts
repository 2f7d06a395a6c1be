import type { FastifyReply, FastifyRequest } from 'fastify';
import { searchClients } from '../../app/console-service.ts';
import type { AppDeps } from '../../app/deps.ts';
import { listLocations } from '../../app/directory-service.ts';
import type { ConsoleSession } from '../../app/staff-account-service.ts';
import { addToWaitlistAtDesk, waitlistAtDesk } from '../../app/waitlist/desk.ts';
import { leaveWaitlist } from '../../app/waitlist/entries.ts';
import { AppError } from '../../domain/errors.ts';
import { localDateAt } from '../../domain/time-format.ts';
import {
  TIMES_OF_DAY,
  type TimeOfDay,
  WAITLIST_STATUSES,
  type WaitlistStatus,
} from '../../domain/waitlist.ts';
import type { Fields } from '../page-fields.ts';
import { waitDatesWords } from '../pages/people-words.ts';
import { formats, type Shell } from './page.ts';
import { ConsoleRefusal } from './session.ts';
import {
  emptyWaitlistForm,
  type WaitlistDone,
  type WaitlistForm,
  waitlistBody,
  waitlistPath,
} from './waitlist-page.ts';

/**
 * The console's Waitlist routes (every role, as the diary): GET /console/waitlist (a location's
 * entries, a client search for the add form), POST /console/waitlist (add), POST
 * /console/waitlist/{id}/remove (leaveWaitlist). The refusals of the waitlist's use cases are said on
 * the page, the typed values kept; anything else is the console's error page.
 */
export interface ConsoleKit {
  get(
    path: string,
    handler: (request: FastifyRequest, reply: FastifyReply, session: ConsoleSession) => Promise<unknown>,
  ): void;
  post(
    path: string,
    handler: (
      request: FastifyRequest,
      reply: FastifyReply,
      session: ConsoleSession,
      form: Fields,
    ) => Promise<unknown>,
  ): void;
  shell(session: ConsoleSession, title: string, current?: Shell['current']): Shell;
  send(reply: FastifyReply, shell: Shell, body: string): FastifyReply;
  redirect(reply: FastifyReply, location: string): FastifyReply;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The refusals said on the page rather than on the error page. */
const SAID_ON_FORM = new Set(['invalid_request', 'conflict', 'not_found']);

export function waitlistPages(deps: AppDeps, kit: ConsoleKit): void {
  const now = () => deps.clock.nowMs();

  const render = async (
    reply: FastifyReply,
    session: ConsoleSession,
    shown: {
      locationSlug?: string | undefined;
      status?: string | undefined;
      after?: string | undefined;
      query?: string | undefined;
      form?: WaitlistForm;
      done?: string | undefined;
      listError?: string | undefined;
    },
  ) => {
    const org = session.organisation.id;
    const locations = (await listLocations(deps.db, org, { after: null, limit: 100 })).items;
    const slug = shown.locationSlug || locations[0]?.slug;
    if (!slug) throw new ConsoleRefusal(404, 'No location', 'This organisation has no active location.');
    const status = statusOf(shown.status);
    const waitlist = await waitlistAtDesk(
      deps.db,
      org,
      { locationSlug: slug, status: status === 'all' ? undefined : status },
      afterOf(shown.after),
      now(),
    );
    const query = shown.query ?? '';
    const matches = await searchClients(deps.db, org, query, now());
    const f = formats(session.organisation.locale, waitlist.location.timezone);
    const form = shown.form ?? emptyWaitlistForm(localDateAt(now(), waitlist.location.timezone));
    return kit.send(
      reply,
      kit.shell(session, `Waitlist – ${waitlist.location.name}`, 'waitlist'),
      waitlistBody({
        // A location taken out of the catalogue is offered while its list is shown, so it stays chosen.
        locations: locations.some((l) => l.id === waitlist.location.id)
          ? locations
          : [...locations, waitlist.location],
        waitlist,
        status,
        query,
        matches,
        form,
        f,
        csrf: session.csrfToken,
        done: shown.done,
        listError: shown.listError,
      }),
    );
  };

  kit.get('/console/waitlist', async (request, reply, session) => {
    const query = request.query as {
      location?: string;
      status?: string;
      after?: string;
      q?: string;
      done?: string;
    };
    return render(reply, session, {
      locationSlug: query.location,
      status: query.status,
      after: query.after,
      query: query.q,
      done: query.done,
    });
  });

  kit.post('/console/waitlist', async (_request, reply, session, form) => {
    const typed: WaitlistForm = {
      clientId: form.client_id ?? '',
      firstName: form.first_name ?? '',
      lastName: form.last_name ?? '',
      phone: form.phone ?? '',
      email: form.email ?? '',
      serviceIds: (form.service_id ?? '').split('\n').filter(Boolean),
      staffId: form.staff_id ?? '',
      fromDate: form.from_date ?? '',
      toDate: form.to_date ?? '',
      times: (form.times ?? '').split('\n').filter(Boolean),
    };
    const locationSlug = form.location ?? '';
    try {
      const existing = typed.clientId !== '' && typed.clientId !== 'new';
      if (existing && !UUID.test(typed.clientId))
        throw new AppError('invalid_request', 'Choose a client found by the search.', 'client_id');
      for (const id of typed.serviceIds) {
        if (!UUID.test(id))
          throw new AppError('invalid_request', 'Choose services from the list.', 'service_ids');
      }
      if (typed.serviceIds.length === 0)
        throw new AppError('invalid_request', 'Choose at least one service.', 'service_ids');
      if (typed.staffId !== '' && !UUID.test(typed.staffId))
        throw new AppError('invalid_request', 'Choose a staff member from the list.', 'staff_id');
      for (const field of ['fromDate', 'toDate'] as const) {
        if (!/^\d{4}-\d{2}-\d{2}$/.test(typed[field]))
          throw new AppError(
            'invalid_request',
            'Give the dates as days.',
            field === 'fromDate' ? 'from_date' : 'to_date',
          );
      }
      const times = typed.times.filter((t): t is TimeOfDay =>
        (TIMES_OF_DAY as readonly string[]).includes(t),
      );
      if (times.length !== typed.times.length)
        throw new AppError('invalid_request', 'Choose morning, afternoon or evening (or none).', 'times');
      await addToWaitlistAtDesk(
        deps.db,
        session.organisation.id,
        {
          locationSlug,
          clientId: existing ? typed.clientId : undefined,
          client: existing
            ? undefined
            : {
                firstName: typed.firstName,
                lastName: typed.lastName,
                phone: typed.phone.trim() || undefined,
                email: typed.email.trim() || undefined,
              },
          serviceIds: [...typed.serviceIds],
          staffId: typed.staffId || undefined,
          fromDate: typed.fromDate,
          toDate: typed.toDate,
          times,
        },
        now(),
      );
      return kit.redirect(reply, waitlistPath(locationSlug, { done: 'added' satisfies WaitlistDone }));
    } catch (error) {
      if (!(error instanceof AppError) || !SAID_ON_FORM.has(error.code) || error.param === 'location')
        throw error;
      return render(reply.code(error.status), session, {
        locationSlug,
        // Refused dates in the form's labels (From, Until), as the public page says them.
        form: { ...typed, error: { message: waitDatesWords(error) ?? error.message, param: error.param } },
      });
    }
  });

  kit.post('/console/waitlist/:id/remove', async (request, reply, session, form) => {
    const { id } = request.params as { id: string };
    const locationSlug = form.location ?? '';
    try {
      if (!UUID.test(id)) throw new AppError('not_found', 'No waitlist entry has this id.', 'id');
      await leaveWaitlist(deps.db, session.organisation.id, id, now(), `user:${session.user.id}`);
    } catch (error) {
      if (!(error instanceof AppError) || !SAID_ON_FORM.has(error.code)) throw error;
      return render(reply.code(error.status), session, { locationSlug, listError: error.message });
    }
    return kit.redirect(reply, waitlistPath(locationSlug, { done: 'removed' satisfies WaitlistDone }));
  });
}

function statusOf(asked: string | undefined): WaitlistStatus | 'all' {
  if (asked === 'all') return 'all';
  return WAITLIST_STATUSES.find((s) => s === asked) ?? 'waiting';
}

/** A "Later entries" link's `after` (joined time and id); anything else starts from the first. */
function afterOf(after: string | undefined): { createdAt: number; id: string } | null {
  const match = /^(\d{1,16}):([0-9a-f-]{36})$/i.exec(after ?? '');
  return match ? { createdAt: Number(match[1]), id: match[2]!.toLowerCase() } : null;
}
