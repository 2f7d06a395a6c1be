import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { bookingPagePath } from '../../app/booking-page-token.ts';
import type { AppDeps } from '../../app/deps.ts';
import {
  bookOnPublicPage,
  PUBLIC_SERIES_MAX_VISITS,
  type PublicOrganisation,
  publicLocations,
  publicOrganisation,
  publicServices,
  publicSlots,
} from '../../app/public-booking.ts';
import type { Location, ServiceWithStaff } from '../../domain/catalogue.ts';
import { AppError } from '../../domain/errors.ts';
import { localDateAt } from '../../domain/time-format.ts';
import { publicBaseUrl } from '../public-base-url.ts';
import { repeatFieldset, repeatOf } from '../repeat-fields.ts';
import {
  esc,
  type Formatter,
  formatter,
  redirect,
  refuseCrossSiteForm,
  type SendPage,
} from './page-shell.ts';
import { waitlistForm } from './waitlist-page.ts';

/**
 * The public booking page, GET /p/{organisation_slug}: one page that grows as the customer chooses
 * (plain GET forms, no script): the location, one or more services, a day and a free time from the
 * API's availability engine, then name and phone or e-mail; POST .../book makes the booking and sends
 * the customer to its own page (/p/manage/{token}), which shows the reference and any step left
 * (a deposit, the card Booking Protection needs).
 */
export function publicBookingRoutes(deps: AppDeps, sendPage: SendPage): FastifyPluginAsyncZod {
  return async (app) => {
    const hidden = { schema: { hide: true } };
    app.get<{ Params: OrgParams; Querystring: Choices }>('/p/:org', hidden, async (request, reply) => {
      const now = deps.clock.nowMs();
      const organisation = await publicOrganisation(deps.db, request.params.org);
      const locations = await publicLocations(deps.db, organisation.id);
      const query = request.query;
      const slug = query.location ?? (locations.length === 1 ? locations[0]!.slug : undefined);
      const parts = [
        `<h1>Book at ${esc(organisation.name)}</h1>`,
        locationForm(organisation, locations, slug),
      ];
      if (slug) {
        const { location, services } = await publicServices(deps.db, organisation.id, slug);
        const f = formatter({ ...organisation, timezone: location.timezone });
        const chosen = listOf(query.services).filter((id) => services.some((s) => s.id === id));
        const date = query.date ?? localDateAt(now, location.timezone);
        parts.push(servicesForm(organisation, location, services, chosen, date, f));
        if (chosen.length > 0) {
          if (!/^\d{4}-\d{2}-\d{2}$/.test(date))
            throw new AppError('invalid_request', 'Choose a day.', 'date');
          const starts = await publicSlots(deps.db, organisation.id, location, chosen, date, now);
          parts.push(detailsForm(organisation, location, chosen, starts, f));
          // Nothing fits the search: the customer may ask to be told when a time frees up.
          if (starts.length === 0) parts.push(waitlistForm(organisation, location, chosen, date));
        }
      }
      return sendPage(reply, `Book – ${organisation.name}`, parts.join('\n'));
    });

    app.post<{ Params: OrgParams; Body: Record<string, string | undefined> }>(
      '/p/:org/book',
      { ...hidden, onRequest: refuseCrossSiteForm },
      async (request, reply) => {
        const organisation = await publicOrganisation(deps.db, request.params.org);
        const body = request.body ?? {};
        const startsAt = Date.parse(body.starts_at ?? '');
        if (Number.isNaN(startsAt))
          throw new AppError('invalid_request', 'Choose one of the free times.', 'starts_at');
        const token = await bookOnPublicPage(deps, publicBaseUrl(request), organisation, {
          locationSlug: body.location ?? '',
          serviceIds: listOf(body.services),
          startsAt,
          firstName: body.first_name ?? '',
          lastName: body.last_name ?? '',
          phone: body.phone || undefined,
          email: body.email || undefined,
          notes: body.notes || undefined,
          address: request.ip,
          repeat: repeatOf(body),
        });
        return redirect(reply, bookingPagePath(token));
      },
    );
  };
}

interface OrgParams {
  org: string;
}

interface Choices {
  location?: string;
  services?: string;
  date?: string;
}

/** Service ids as a form gives them: repeated fields (joined by a newline: page-fields.ts), or one comma-separated value. */
function listOf(value: string | undefined): string[] {
  return [...new Set((value ?? '').split(/[,\n]/).filter((v) => v.length > 0))].slice(0, 10);
}

function locationForm(
  organisation: PublicOrganisation,
  locations: Location[],
  chosen: string | undefined,
): string {
  const options = locations
    .map(
      (l) => `<option value="${esc(l.slug)}"${l.slug === chosen ? ' selected' : ''}>${esc(l.name)}</option>`,
    )
    .join('\n');
  return `<form method="get" action="${esc(`/p/${organisation.slug}`)}">
<label for="location">Location</label>
<select id="location" name="location" required>
${chosen ? '' : '<option value="">Choose a location</option>\n'}${options}
</select>
<div class="actions"><button type="submit" class="secondary">Choose location</button></div>
</form>`;
}

function servicesForm(
  organisation: PublicOrganisation,
  location: Location,
  services: ServiceWithStaff[],
  chosen: string[],
  date: string,
  f: Formatter,
): string {
  const items = services
    .map((s) => {
      const deposit = s.depositMinor ? `, deposit ${f.money(s.depositMinor)}` : '';
      const checked = chosen.includes(s.id) ? ' checked' : '';
      return `<label class="choice"><input type="checkbox" name="services" value="${esc(s.id)}"${checked}>${esc(s.name)} – ${esc(f.money(s.priceMinor))}, ${s.durationMinutes} min${esc(deposit)}</label>`;
    })
    .join('\n');
  const protection = location.protection.applies
    ? `<p class="notice">Bookings at ${esc(location.name)} need a card saved for Booking Protection; you will be asked for it after choosing a time.</p>\n`
    : '';
  return `<form method="get" action="${esc(`/p/${organisation.slug}`)}">
<input type="hidden" name="location" value="${esc(location.slug)}">
${protection}<fieldset><legend>Services</legend>
${items}
</fieldset>
<label for="date">Day</label>
<input id="date" name="date" type="date" value="${esc(date)}" required>
<div class="actions"><button type="submit" class="secondary">Show free times</button></div>
</form>`;
}

function detailsForm(
  organisation: PublicOrganisation,
  location: Location,
  serviceIds: string[],
  starts: number[],
  f: Formatter,
): string {
  if (starts.length === 0) return '<p role="status">No free times that day; choose another day.</p>';
  const times = starts
    .map(
      (at, i) =>
        `<label class="choice"><input type="radio" name="starts_at" value="${esc(new Date(at).toISOString())}"${i === 0 ? ' required' : ''}>${f.time(at)}</label>`,
    )
    .join('\n');
  return `<form method="post" action="${esc(`/p/${organisation.slug}/book`)}">
<input type="hidden" name="location" value="${esc(location.slug)}">
<input type="hidden" name="services" value="${esc(serviceIds.join(','))}">
<fieldset><legend>Free times</legend>
${times}
</fieldset>
<fieldset><legend>Your details</legend>
<label for="first_name">First name</label>
<input id="first_name" name="first_name" autocomplete="given-name" required maxlength="60">
<label for="last_name">Last name</label>
<input id="last_name" name="last_name" autocomplete="family-name" required maxlength="60">
<label for="phone">Phone</label>
<input id="phone" name="phone" type="tel" autocomplete="tel" maxlength="30">
<label for="email">E-mail</label>
<input id="email" name="email" type="email" autocomplete="email" maxlength="254">
<p>Give a phone number or an e-mail address (or both).${
    organisation.policy.verification === 'code'
      ? ' We will send a 6-digit code there: the booking is confirmed once you enter it.'
      : ''
  }</p>
</fieldset>
${organisation.policy.verification === 'code' ? repeatFieldset(PUBLIC_SERIES_MAX_VISITS) : ''}
<div class="actions"><button type="submit" class="primary">Confirm booking</button></div>
</form>`;
}
