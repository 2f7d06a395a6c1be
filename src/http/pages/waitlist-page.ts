import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { DateTime } from 'luxon';
import type { AppDeps } from '../../app/deps.ts';
import { type PublicOrganisation, publicOrganisation, publicServices } from '../../app/public-booking.ts';
import { joinWaitlistOnPublicPage, type PublicWaitlistJoined } from '../../app/waitlist/public-entries.ts';
import type { Location, ServiceWithStaff } from '../../domain/catalogue.ts';
import { AppError } from '../../domain/errors.ts';
import { TIMES_OF_DAY, type TimeOfDay } from '../../domain/waitlist.ts';
import {
  esc,
  type FieldRefusal,
  refusalBeside,
  refuseCrossSiteForm,
  refusedState,
  type SendPage,
} from './page-shell.ts';
import { forPeople } from './people-words.ts';
import { stylistsFor } from './time-picker.ts';

/**
 * "Tell me if a time frees up" (design.md 9.4) on the public booking page: the form shown when the
 * customer's search finds no free time, and POST /p/{organisation_slug}/waitlist, which joins the
 * waitlist as a stranger may (public-entries.ts) and answers a page saying what was asked and where
 * an offer will come. A plain form, no script, as the booking form.
 */

/** The parts of the day as the customer reads them (domain/waitlist.ts timeOfDay). */
export const TIME_WORDS: Record<TimeOfDay, string> = {
  morning: 'Morning (before 12:00)',
  afternoon: 'Afternoon (12:00 to 17:00)',
  evening: 'Evening (from 17:00)',
};

/** The fields of the waitlist form a refusal may name: it is said beside them. */
const WAITLIST_FIELDS: readonly string[] = [
  'from_date',
  'to_date',
  'times',
  'first_name',
  'last_name',
  'phone',
  'email',
];

/** What the customer typed into the waitlist form, to show it again when it is refused. */
export type WaitlistTyped = Partial<
  Record<'from_date' | 'to_date' | 'first_name' | 'last_name' | 'phone' | 'email', string>
> & { times?: readonly string[] };

/**
 * The form under "no free times": the search's services, its day as the dates (changeable); sent back
 * refused, with what was typed (`typed`).
 */
export function waitlistForm(
  organisation: PublicOrganisation,
  location: Location,
  /** What was searched: the services, and the stylist when one was chosen (waited for alone). */
  search: { serviceIds: readonly string[]; staff?: { id: string; name: string } | undefined },
  date: string,
  typed: WaitlistTyped = {},
  refused?: FieldRefusal,
): string {
  const times = TIMES_OF_DAY.map(
    (time) =>
      `<label class="choice"><input type="checkbox" name="times" value="${time}"${typed.times?.includes(time) ? ' checked' : ''}>${esc(TIME_WORDS[time])}</label>`,
  ).join('\n');
  // A field's label, the refusal beside it when it is the one refused, and its own attributes with
  // what was typed (or `fallback`) after `before`.
  const input = (
    name: Exclude<keyof WaitlistTyped, 'times'>,
    label: string,
    before: string,
    after = '',
    fallback?: string,
  ) => {
    const value = typed[name] ?? fallback;
    return `<label for="wl_${name}">${label}</label>
${refusalBeside(refused, name, `wl_${name}`)}<input id="wl_${name}" name="${name}" ${before}${value ? ` value="${esc(value)}"` : ''}${after}${refusedState(refused, name, `wl_${name}`)}>`;
  };
  return `<section aria-labelledby="waitlist-heading">
<h2 id="waitlist-heading">Tell me if a time frees up</h2>
<p>Join the waitlist: when a time that suits you${search.staff ? ` with ${esc(search.staff.name)}` : ''} frees up (someone cancels), we send you a message with a link, and hold that time for you for ${location.policy.waitlistOfferMinutes} minutes. Nothing is booked until you claim it.</p>
<form method="post" action="${esc(`/p/${organisation.slug}/waitlist`)}">
<input type="hidden" name="location" value="${esc(location.slug)}">
<input type="hidden" name="services" value="${esc(search.serviceIds.join(','))}">
${search.staff ? `<input type="hidden" name="staff" value="${esc(search.staff.id)}">\n` : ''}<fieldset><legend>When</legend>
${input('from_date', 'From', 'type="date"', ' required', date)}
${input('to_date', 'Until', 'type="date"', ' required', date)}
</fieldset>
<fieldset id="wl_times"${refused?.field === 'times' ? ' aria-describedby="wl_times-error"' : ''}><legend>Times of day (none ticked: any time)</legend>
${refusalBeside(refused, 'times', 'wl_times')}${times}
</fieldset>
<fieldset><legend>Your details</legend>
${input('first_name', 'First name', 'autocomplete="given-name" required maxlength="60"')}
${input('last_name', 'Last name', 'autocomplete="family-name" required maxlength="60"')}
${input('phone', 'Phone', 'type="tel" autocomplete="tel" maxlength="30"')}
${input('email', 'E-mail', 'type="email" autocomplete="email" maxlength="254"')}
<p>Give a phone number or an e-mail address (or both): that is where we tell you.</p>
</fieldset>
<div class="actions"><button type="submit" class="primary">Tell me if a time frees up</button></div>
</form>
</section>`;
}

export function publicWaitlistRoutes(deps: AppDeps, sendPage: SendPage): FastifyPluginAsyncZod {
  return async (app) => {
    app.post<{ Params: { org: string }; Body: Record<string, string | undefined> }>(
      '/p/:org/waitlist',
      { schema: { hide: true }, onRequest: refuseCrossSiteForm },
      async (request, reply) => {
        const organisation = await publicOrganisation(deps.db, request.params.org);
        const body = request.body ?? {};
        let joined: PublicWaitlistJoined;
        try {
          joined = await joinWaitlistOnPublicPage(deps, organisation, {
            locationSlug: body.location ?? '',
            serviceIds: listOf(body.services),
            staffId: body.staff?.trim() || undefined,
            fromDate: dateOf(body.from_date, 'from_date'),
            toDate: dateOf(body.to_date, 'to_date'),
            times: timesOf(body.times),
            firstName: body.first_name ?? '',
            lastName: body.last_name ?? '',
            phone: body.phone?.trim() || undefined,
            email: body.email?.trim() || undefined,
            address: request.ip,
          });
        } catch (error) {
          const again = await refusedForm(deps, organisation, body, error);
          if (!again) throw error;
          reply.status((error as AppError).status);
          return sendPage(reply, `Tell me if a time frees up – ${organisation.name}`, again);
        }
        const { services } = await publicServices(deps.db, organisation.id, joined.wants.location.slug);
        return sendPage(
          reply,
          `On the waitlist – ${organisation.name}`,
          joinedBody(organisation, joined, services),
        );
      },
    );
  };
}

/**
 * A refused form (a field to put right) sent back with the reason in plain words and
 * what was typed, as the booking form is; null when there is no form to send back (an unknown
 * location: the error page says so).
 */
async function refusedForm(
  deps: AppDeps,
  organisation: PublicOrganisation,
  body: Record<string, string | undefined>,
  error: unknown,
): Promise<string | null> {
  // A cap reached (429) is the error page's, with its Retry-After: sending the form again would not help.
  if (!(error instanceof AppError) || error.status === 429 || error.status >= 500) return null;
  let location: Location;
  let services: ServiceWithStaff[];
  try {
    ({ location, services } = await publicServices(deps.db, organisation.id, body.location ?? ''));
  } catch {
    return null;
  }
  const staff = stylistsFor(services, listOf(body.services)).find((s) => s.id === body.staff);
  const typed: WaitlistTyped = {
    from_date: body.from_date,
    to_date: body.to_date,
    first_name: body.first_name,
    last_name: body.last_name,
    phone: body.phone,
    email: body.email,
    times: (body.times ?? '').split('\n'),
  };
  const date = typed.from_date ?? '';
  const words = forPeople(error);
  // Said beside the field it is about (page-shell.ts FieldRefusal); anything else at the top.
  const beside = WAITLIST_FIELDS.includes(error.param ?? '');
  const refused = beside ? { field: error.param!, words } : undefined;
  return `<h1>Tell me if a time frees up</h1>
${beside ? '' : `<p role="alert">${esc(words)}</p>\n`}${waitlistForm(organisation, location, { serviceIds: listOf(body.services), staff }, date, typed, refused)}
<p><a href="${esc(`/p/${organisation.slug}`)}">Back to the booking page</a></p>`;
}

/** The confirmation: what they wait for, where the offer will come, how long it is held. */
function joinedBody(
  organisation: PublicOrganisation,
  joined: PublicWaitlistJoined,
  services: readonly ServiceWithStaff[],
): string {
  const { wants, reachedBy } = joined;
  const location = wants.location;
  const names = wants.serviceIds.map((id) => services.find((s) => s.id === id)?.name ?? 'A service');
  const dates = new Intl.DateTimeFormat(organisation.locale, { dateStyle: 'full', timeZone: 'UTC' });
  const day = (date: string) =>
    `<time datetime="${esc(date)}">${esc(dates.format(Date.parse(`${date}T12:00:00Z`)))}</time>`;
  const when =
    wants.fromDate === wants.toDate ? day(wants.fromDate) : `${day(wants.fromDate)} to ${day(wants.toDate)}`;
  const times = wants.times === null ? 'Any time' : wants.times.map((t) => TIME_WORDS[t]).join(', ');
  const staff =
    wants.staffId && stylistsFor([...services], wants.serviceIds).find((s) => s.id === wants.staffId);
  const where = [
    reachedBy.sms && `a text to <strong>${esc(reachedBy.sms)}</strong>`,
    reachedBy.email && `an e-mail to <strong>${esc(reachedBy.email)}</strong>`,
  ]
    .filter(Boolean)
    .join(' and ');
  return `<h1>You are on the waitlist</h1>
<p role="status">We will tell you if a time frees up at ${esc(location.name)}.</p>
<dl>
<dt>Services</dt><dd>${names.map(esc).join(', ')}</dd>
${staff ? `<dt>With</dt><dd>${esc(staff.name)}</dd>\n` : ''}<dt>Dates</dt><dd>${when}</dd>
<dt>Times</dt><dd>${esc(times)}</dd>
</dl>
<p>When a time that suits you frees up, we send ${where} with a link. That time is held for you for ${location.policy.waitlistOfferMinutes} minutes: claim it from the link to book it, or let it go. The same link lets you leave the waitlist.</p>
<p>Nothing is booked until you claim a time. After the last date you asked for, your request ends by itself.</p>
<p><a href="${esc(`/p/${organisation.slug}?location=${encodeURIComponent(location.slug)}`)}">Back to the booking page</a></p>`;
}

/** Service ids as the form gives them (public-page.ts reads them the same way). */
function listOf(value: string | undefined): string[] {
  return [...new Set((value ?? '').split(/[,\n]/).filter((v) => v.length > 0))].slice(0, 10);
}

function dateOf(value: string | undefined, field: 'from_date' | 'to_date'): string {
  const date = (value ?? '').trim();
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || !DateTime.fromISO(date).isValid) {
    throw new AppError(
      'invalid_request',
      field === 'from_date' ? 'Choose the first day you could come.' : 'Choose the last day you could come.',
      field,
    );
  }
  return date;
}

/** The ticked parts of the day (each one of TIMES_OF_DAY; anything else is refused). */
function timesOf(value: string | undefined): TimeOfDay[] {
  const ticked = (value ?? '').split('\n').filter((v) => v.length > 0);
  const times = ticked.filter((v): v is TimeOfDay => (TIMES_OF_DAY as readonly string[]).includes(v));
  if (times.length !== ticked.length) {
    throw new AppError('invalid_request', 'Choose morning, afternoon or evening (or none).', 'times');
  }
  return [...new Set(times)];
}
