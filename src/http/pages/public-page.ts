import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { getAvailability, whyNothingIsLeftToday } from '../../app/availability-service.ts';
import { bookingPagePath } from '../../app/booking-page-token.ts';
import type { AppDeps } from '../../app/deps.ts';
import {
  bookOnPublicPage,
  formKey,
  isFormKey,
  PUBLIC_SERIES_VISITS,
  type PublicOrganisation,
  publicLocations,
  publicOrganisation,
  publicServices,
} from '../../app/public-booking.ts';
import { someoneWorksOn } from '../../app/start-check.ts';
import type { Location, ServiceWithStaff, StaffRef } from '../../domain/catalogue.ts';
import { AppError, isAppError } from '../../domain/errors.ts';
import { TAKES_NO_BOOKINGS, takesNoPublicBookings } from '../../domain/public-booking-policy.ts';
import { localDateAt } from '../../domain/time-format.ts';
import { withRetryAfter } from '../error-envelope.ts';
import { instantOf } from '../page-fields.ts';
import { publicBaseUrl } from '../public-base-url.ts';
import { repeatFieldset, repeatOf } from '../repeat-fields.ts';
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
import { forPeople, NO_SUCH_LOCATION, plainWords } from './people-words.ts';
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
import { type WaitlistTyped, waitlistForm } from './waitlist-page.ts';

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
      const organisation = await publicOrganisation(deps.db, request.params.org);
      const page = await bookingPage(deps, organisation, request.query);
      return sendPage(reply.code(page.status), `Book – ${organisation.name}`, page.html, {
        keptForBack: true,
      });
    });

    // The forms' addresses opened as pages (a bookmark, history, a reload of a refusal): the salon's page.
    for (const form of ['book', 'waitlist']) {
      app.get<{ Params: OrgParams }>(`/p/:org/${form}`, hidden, async (request, reply) => {
        const organisation = await publicOrganisation(deps.db, request.params.org);
        return redirect(reply, `/p/${encodeURIComponent(organisation.slug)}`);
      });
    }

    app.post<{ Params: OrgParams; Body: Record<string, string | undefined> }>(
      '/p/:org/book',
      { ...hidden, onRequest: refuseCrossSiteForm },
      async (request, reply) => {
        const organisation = await publicOrganisation(deps.db, request.params.org);
        const body = request.body ?? {};
        const startsAt = instantOf(body.starts_at);
        try {
          if (Number.isNaN(startsAt))
            throw new AppError('invalid_request', 'Choose one of the free times.', 'starts_at');
          const token = await bookOnPublicPage(deps, publicBaseUrl(request), organisation, {
            locationSlug: body.location ?? '',
            serviceIds: listOf(body.services),
            staffId: body.staff || undefined,
            startsAt,
            firstName: body.first_name ?? '',
            lastName: body.last_name ?? '',
            phone: body.phone || undefined,
            email: body.email || undefined,
            notes: body.notes || undefined,
            address: request.ip,
            repeat: repeatOf(body, PUBLIC_SERIES_VISITS),
            formKey: isFormKey(body.form_key) ? body.form_key : undefined,
          });
          return redirect(reply, bookingPagePath(token));
        } catch (error) {
          // A deposit or a card no provider here can take is the salon's setting, not a fault: said
          // on the form, what was typed kept, as any refusal.
          const refusal = isAppError(error) && (error.status < 500 || error.code === 'payments_unavailable');
          if (!refusal || !body.location) throw error;
          // Not booked: the same page again, what was typed kept, saying what to change.
          const choices = { location: body.location, services: body.services, staff: body.staff };
          const date = Number.isNaN(startsAt) ? body.date : undefined;
          // A series' clashes name free times on the location's clock.
          const where = (await publicLocations(deps.db, organisation.id)).find(
            (l) => l.slug === body.location,
          );
          const place = where && { timezone: where.timezone, locale: organisation.locale };
          const page = await bookingPage(
            deps,
            organisation,
            { ...choices, date },
            {
              // A form that already booked for someone else comes back as a fresh one (a new key).
              fields: error.param === 'form_key' ? { ...body, form_key: undefined } : body,
              startsAt: Number.isNaN(startsAt) ? undefined : startsAt,
              alert: forPeople(error, place),
              words: plainWords(error, place),
              field: error.param,
            },
          );
          withRetryAfter(reply, error);
          return sendPage(reply.code(error.status), `Not booked yet – ${organisation.name}`, page.html);
        }
      },
    );
  };
}

/** The fields of the details form a refusal may name: it is said beside them (page-shell.ts FieldRefusal). */
const DETAILS_FIELDS: readonly string[] = ['starts_at', 'first_name', 'last_name', 'phone', 'email'];
/** The repeat fields (repeat-fields.ts), on the form where a series can be booked (policy code). */
const REPEAT_FIELDS: readonly string[] = ['repeat_every_weeks', 'repeat_count'];

/**
 * Whether the details form shows `field`, so that a refusal naming it is said beside it; else it is
 * said at the top (a repeat refused where no series can be booked online has no field to be beside).
 */
function besideAField(organisation: PublicOrganisation, field: string | undefined): boolean {
  if (field === undefined) return false;
  if (DETAILS_FIELDS.includes(field)) return true;
  return REPEAT_FIELDS.includes(field) && organisation.policy.verification === 'code';
}

/** A form sent back: what was typed, the time chosen, and what to change. */
interface Kept {
  fields: Record<string, string | undefined>;
  startsAt: number | undefined;
  alert: string;
  /**
   * The refusal alone, without `alert`'s "your details are kept below": said where the page shows no
   * booking form for them (no time left that day, or no service chosen any more).
   */
  words: string;
  /** The field the refusal is about (the error's param), said beside it and focused. */
  field?: string | undefined;
}

/**
 * The booking page for these choices: the location, the services and stylist, then (services
 * chosen) the week's days, the chosen day's times and the details form, or why the day has none
 * and the waitlist. `kept` fills the form again after a refusal. A location the link names that takes
 * no bookings here (closed, renamed, mistyped) is a 404 page that offers the salon's locations.
 */
async function bookingPage(
  deps: AppDeps,
  organisation: PublicOrganisation,
  query: Choices,
  kept?: Kept,
): Promise<{ html: string; status: number }> {
  const now = deps.clock.nowMs();
  const locations = await publicLocations(deps.db, organisation.id);
  const unknown = query.location !== undefined && !locations.some((l) => l.slug === query.location);
  const slug = unknown
    ? undefined
    : (query.location ?? (locations.length === 1 ? locations[0]!.slug : undefined));
  const parts = [`<h1>Book at ${esc(organisation.name)}</h1>`];
  // Caps of 0: the salon books by phone only; a form would be filled in to be refused.
  if (takesNoPublicBookings(organisation.policy)) {
    parts.push(`<p class="notice" role="status">${esc(TAKES_NO_BOOKINGS)}</p>`);
    return { html: parts.join('\n'), status: 200 };
  }
  // The refusal at the top, unless the details form is shown and says it beside its field; where the
  // page has no booking form to keep the details in, without saying they are kept there.
  let alert = kept?.words;
  const page = (besideItsField = false) => {
    if (alert !== undefined && !besideItsField)
      parts.splice(1, 0, `<p role="alert" class="fee">${esc(alert)}</p>`);
    return { html: parts.join('\n'), status: 200 };
  };
  if (unknown) {
    // Said once: a form sent for that location was refused for the same reason (its alert).
    if (!kept)
      parts.push(`<p role="alert" class="fee">${esc(`${NO_SUCH_LOCATION} Choose one of ours below.`)}</p>`);
    parts.push(locationForm(organisation, locations, undefined));
    return { ...page(), status: 404 };
  }
  parts.push(locationForm(organisation, locations, slug));
  if (!slug) return page();
  const { location, services } = await publicServices(deps.db, organisation.id, slug);
  const f = formatter({ ...organisation, timezone: location.timezone });
  const chosen = listOf(query.services).filter((id) => services.some((s) => s.id === id));
  const stylists = stylistsFor(services, chosen);
  const staff = stylists.find((s) => s.id === query.staff);
  const today = localDateAt(now, location.timezone);
  const askedDate = kept?.startsAt === undefined ? query.date : localDateAt(kept.startsAt, location.timezone);
  if (askedDate !== undefined && !isCalendarDate(askedDate))
    throw new AppError('invalid_request', 'Choose a day.', 'date');
  const window = dayWindow(today, askedDate);
  parts.push(
    servicesForm(organisation, location, services, stylists, { chosen, staff, date: window.date }, f),
  );
  if (chosen.length === 0) return page();
  // Under `public_verification: code` a booking made here is held for its code first: the times
  // offered leave that hold time before they start (holdNotice), as the booking's own check does.
  const search = {
    location,
    serviceIds: chosen,
    staffId: staff?.id,
    heldFor: { proofFirst: organisation.policy.verification === 'code' },
  };
  const availability = await getAvailability(
    deps.db,
    organisation.id,
    { ...search, fromDate: window.start, days: STRIP_DAYS },
    now,
  );
  const found: DaysFound = {
    window,
    location,
    locale: organisation.locale,
    availability,
    staffName: staff?.name,
  };
  if (nobodyWorksOn(found, window.date)) {
    const names = services.filter((s) => chosen.includes(s.id)).map((s) => s.name);
    found.open = {
      someoneWorks: await someoneWorksOn(deps.db, organisation.id, location, window.date),
      services: names.join(' and '),
    };
  }
  if (todayNeedsCause(found, window.date)) {
    found.todayCause = await whyNothingIsLeftToday(deps.db, organisation.id, search, now);
  }
  const keep: Record<string, string> = { location: location.slug, services: chosen.join(',') };
  if (staff) keep.staff = staff.id;
  parts.push(dayStrip(found, { action: `/p/${organisation.slug}`, keep }));
  const starts = startsOn(found, window.date);
  parts.push(`<h2 id="times">${esc(dayWords(window.date, window, organisation.locale))}</h2>
<p>${esc(zoneWords(location, organisation.locale, window.date))}</p>`);
  if (starts.length === 0) {
    parts.push(`<p role="status">No free times that day. ${emptyDayReasonHtml(found, window.date)}</p>`);
    // Nothing fits the search: the customer may ask to be told when a time frees up. A refused booking
    // form's details go on there (the last time taken meanwhile, the day closed since).
    parts.push(
      waitlistForm(organisation, location, { serviceIds: chosen, staff }, window.date, typedOf(kept)),
    );
    if (kept) alert = `${kept.words} ${NO_OTHER_TIME}`;
  } else {
    alert = kept?.alert;
    parts.push(detailsForm(organisation, location, { chosen, staff, starts }, kept));
    return page(besideAField(organisation, kept?.field));
  }
  return page();
}

/** A booking refused over a day that has no free time left: where the customer goes on. */
const NO_OTHER_TIME =
  'No other time is free that day: choose another day above, or ask below to be told when a time frees up.';

/** The details a refused booking form held, for the waitlist's form. */
function typedOf(kept: Kept | undefined): WaitlistTyped {
  const { first_name, last_name, phone, email } = kept?.fields ?? {};
  return { first_name, last_name, phone, email };
}

interface OrgParams {
  org: string;
}

interface Choices {
  location?: string | undefined;
  services?: string | undefined;
  date?: string | undefined;
  /** The stylist's id; absent: anyone. */
  staff?: string | undefined;
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
  stylists: StaffRef[],
  choice: { chosen: string[]; staff: StaffRef | undefined; date: string },
  f: Formatter,
): string {
  const items = services
    .map((s) => {
      const deposit = s.depositMinor ? `, deposit ${f.money(s.depositMinor)}` : '';
      const checked = choice.chosen.includes(s.id) ? ' checked' : '';
      return `<label class="choice"><input type="checkbox" name="services" value="${esc(s.id)}"${checked}>${esc(s.name)} – ${esc(f.money(s.priceMinor))}, ${s.durationMinutes} min${esc(deposit)}</label>`;
    })
    .join('\n');
  const protection = location.protection.applies
    ? `<p class="notice">Bookings at ${esc(location.name)} need a card saved for Booking Protection; you will be asked for it after choosing a time.</p>\n`
    : '';
  const staffOptions = stylists
    .map(
      (m) =>
        `<option value="${esc(m.id)}"${m.id === choice.staff?.id ? ' selected' : ''}>${esc(m.name)}</option>`,
    )
    .join('');
  return `<form method="get" action="${esc(`/p/${organisation.slug}`)}">
<input type="hidden" name="location" value="${esc(location.slug)}">
${protection}<fieldset><legend>Services</legend>
${items}
</fieldset>
<label for="staff">Stylist</label>
<select id="staff" name="staff"><option value="">Anyone</option>${staffOptions}</select>
<label for="date">Day</label>
<input id="date" name="date" type="date" value="${esc(choice.date)}" required>
<div class="actions"><button type="submit" class="secondary">Show free times</button></div>
</form>`;
}

function detailsForm(
  organisation: PublicOrganisation,
  location: Location,
  choice: { chosen: string[]; staff: StaffRef | undefined; starts: number[] },
  kept: Kept | undefined,
): string {
  // What was typed, when the form comes back after a refusal (nothing on a fresh form: bytes count).
  const typed = (name: string) => {
    const value = kept?.fields[name];
    return value ? ` value="${esc(value)}"` : '';
  };
  const key = isFormKey(kept?.fields.form_key) ? kept.fields.form_key : formKey();
  const refused: FieldRefusal | undefined =
    kept?.field === undefined ? undefined : { field: kept.field, words: kept.alert };
  // A field's label, the refusal beside it when it is the one refused, and its own attributes.
  const field = (name: string, label: string, attributes: string) =>
    `<label for="${name}">${label}</label>
${refusalBeside(refused, name, name)}<input id="${name}" name="${name}" ${attributes}${typed(name)}${refusedState(refused, name, name)}>`;
  const staff = choice.staff ? `<input type="hidden" name="staff" value="${esc(choice.staff.id)}">\n` : '';
  return `<form method="post" action="${esc(`/p/${organisation.slug}/book`)}">
<input type="hidden" name="location" value="${esc(location.slug)}">
<input type="hidden" name="services" value="${esc(choice.chosen.join(','))}">
${staff}<input type="hidden" name="form_key" value="${esc(key)}">
<p>Choose a time${choice.staff ? ` with ${esc(choice.staff.name)}` : ''}:</p>
${refusalBeside(refused, 'starts_at', 'starts_at')}${timeGroups(choice.starts, location, organisation.locale, kept?.startsAt, refused?.field === 'starts_at' ? 'starts_at-error' : undefined)}
<fieldset><legend>Your details</legend>
${field('first_name', 'First name', 'autocomplete="given-name" required maxlength="60"')}
${field('last_name', 'Last name', 'autocomplete="family-name" required maxlength="60"')}
${field('phone', 'Phone', 'type="tel" autocomplete="tel" maxlength="30"')}
${field('email', 'E-mail', 'type="email" autocomplete="email" maxlength="254"')}
<p>Give a phone number or an e-mail address (or both).${
    organisation.policy.verification === 'code'
      ? ' We will send a 6-digit code there: the booking is confirmed once you enter it.'
      : ''
  }</p>
</fieldset>
${organisation.policy.verification === 'code' ? repeatFieldset({ visits: PUBLIC_SERIES_VISITS, kept: kept?.fields, refused }) : ''}
<div class="actions"><button type="submit" class="primary">Confirm booking</button></div>
</form>`;
}
