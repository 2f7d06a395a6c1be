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
    created?: { staffName: string; url: string },
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
      calendarsBody({ staff, feeds, busy, created, f, csrf: session.csrfToken }),
    );
  };

  kit.get('/console/calendars', async (_request, reply, session) => {
    requireManager(session);
    return render(reply, session);
  });

  kit.post('/console/calendars/feeds', async (request, reply, session, form) => {
    requireManager(session);
    const { feed, token } = await createFeed(deps.db, session.organisation.id, form.staff_id ?? '', now());
    // The address is in this one answer only (no redirect that would need to carry it).
    const url = `${publicBaseUrl(request)}${feedPath(token)}`;
    return render(reply.code(201), session, { staffName: feed.staffName, url });
  });

  kit.post('/console/calendars/feeds/:id/revoke', async (request, reply, session) => {
    requireManager(session);
    await revokeCalendarFeed(deps.db, session.organisation.id, (request.params as { id: string }).id, now());
    return kit.redirect(reply, '/console/calendars');
  });
}

function requireManager(session: ConsoleSession): void {
  if (!canManageKeys(session.user.role)) {
    throw new ConsoleRefusal(403, 'Not allowed', 'Only owners and admins manage calendar feeds.');
  }
}
