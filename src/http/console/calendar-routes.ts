import { randomUUID } from 'node:crypto';
import type { FastifyReply } from 'fastify';
import {
  busyCalendarStatuses,
  createFeed,
  feedPath,
  listCalendarFeeds,
  revokeCalendarFeed,
  staffOfOrganisation,
} from '../../app/calendars/feeds.ts';
import type { AppDeps } from '../../app/deps.ts';
import { isAlreadySent } from '../../app/once-forms.ts';
import { type ConsoleSession, canManageKeys } from '../../app/staff-account-service.ts';
import { publicBaseUrl } from '../public-base-url.ts';
import { calendarsBody } from './calendars-page.ts';
import { formats } from './page.ts';
import { ConsoleRefusal } from './session.ts';
import type { ConsoleKit } from './waitlist-routes.ts';

/**
 * The console's Calendars routes (owners and admins, as API keys: a feed's address is a credential):
 * GET /console/calendars, POST /console/calendars/feeds (make one; its address is in that answer
 * only), POST /console/calendars/feeds/{id}/revoke.
 */
export function calendarPages(
  deps: AppDeps,
  kit: ConsoleKit,
  zoneOf: (session: ConsoleSession) => Promise<string>,
) {
  const now = () => deps.clock.nowMs();

  const render = async (
    reply: FastifyReply,
    session: ConsoleSession,
    shown: { created?: { staffName: string; url: string }; notice?: string | undefined } = {},
  ) => {
    const org = session.organisation.id;
    const [staff, feeds, busy] = await Promise.all([
      staffOfOrganisation(deps.db, org),
      listCalendarFeeds(deps.db, org),
      busyCalendarStatuses(deps.db, org),
    ]);
    const f = formats(session.organisation.locale, await zoneOf(session));
    return kit.send(
      reply,
      kit.shell(session, 'Calendars', 'calendars'),
      // Each form drawn gets a one-time id of its own (once-forms.ts).
      calendarsBody({ staff, feeds, busy, f, csrf: session.csrfToken, formId: randomUUID(), ...shown }),
    );
  };

  kit.get('/console/calendars', async (request, reply, session) => {
    requireManager(session);
    const done = (request.query as { done?: string }).done;
    return render(reply, session, { notice: done === 'already_sent' ? ALREADY_SENT : undefined });
  });

  kit.post('/console/calendars/feeds', async (request, reply, session, form) => {
    requireManager(session);
    try {
      const { feed, token } = await createFeed(
        deps.db,
        session.organisation.id,
        form.staff_id ?? '',
        now(),
        form.form_id || undefined,
      );
      // The address is in this one answer only (no redirect that would need to carry it); a browser
      // reloading it posts the same form again, which makes nothing (the form's one-time id).
      const url = `${publicBaseUrl(request)}${feedPath(token)}`;
      return render(reply.code(201), session, { created: { staffName: feed.staffName, url } });
    } catch (error) {
      if (!isAlreadySent(error)) throw error;
      return kit.redirect(reply, '/console/calendars?done=already_sent');
    }
  });

  kit.post('/console/calendars/feeds/:id/revoke', async (request, reply, session) => {
    requireManager(session);
    await revokeCalendarFeed(deps.db, session.organisation.id, (request.params as { id: string }).id, now());
    return kit.redirect(reply, '/console/calendars');
  });
}

/** Said on the page when its form was sent again (a reload of the answer that showed the address). */
const ALREADY_SENT =
  'That form was already sent, and made its feed then: it is in the list below. Its address was shown only once; if it was not copied, revoke the feed and make another.';

function requireManager(session: ConsoleSession): void {
  if (!canManageKeys(session.user.role)) {
    throw new ConsoleRefusal(403, 'Not allowed', 'Only owners and admins manage calendar feeds.');
  }
}
