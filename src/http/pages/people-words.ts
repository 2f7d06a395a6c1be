import { notPersonalWords } from '../../app/client-service.ts';
import type { AppError } from '../../domain/errors.ts';
import { withRepeatedLabel } from '../../domain/repeated-wall-times.ts';

/**
 * Where a refusal's times are read: the location's zone and the organisation's locale. A free time
 * the clocks show twice that day (they go back) is told apart from its twin with it ("01:00 BST",
 * "01:00 GMT"), as every other time the pages write is.
 */
export interface TimesPlace {
  timezone: string;
  locale: string;
}

/** A location a link or form names that takes no bookings here: closed or renamed since, or mistyped. */
export const NO_SUCH_LOCATION = 'We could not find that location: it may have closed or moved.';

/**
 * A refusal in the words a customer reads on the hosted pages. The API's messages name fields and
 * formats ("phone has no country code: give it in international form") that mean nothing on a form, where national numbers work
 * too; the API keeps them, the pages say what to do.
 */
export function plainWords(error: AppError, place?: TimesPlace): string {
  const param = error.param;
  // A number refused for what it is (contact.ts phoneRefusal), not one that is no person's own.
  const phoneProblem = param === 'phone' ? error.details?.phoneProblem : undefined;
  if (phoneProblem === 'drama') {
    return 'That number is one kept for TV and film dramas, so it is no one’s phone. Give the number you really use.';
  }
  if (phoneProblem !== undefined) {
    return 'That phone number does not look right. Check the digits; a number from abroad starts with + and its country code.';
  }
  // A number that is no person's own (client-service.ts), said to a person, not in the field's name.
  const notPersonal = param === 'phone' ? error.details?.notPersonal : undefined;
  if (typeof notPersonal === 'string') {
    return `That number is ${notPersonalWords(notPersonal)}`;
  }
  // A time not free (taken since the page showed it): the page lists the times still free, so the
  // API's "ask for availability again" would send the customer looking for what is in front of them.
  if (error.reason === 'slot_unavailable' && error.details?.outside_hours !== true) {
    return 'That time has just been taken.';
  }
  // Hours shortened since the page showed the time: the API's words add its date and "ask for availability".
  if (error.reason === 'slot_unavailable') return 'Nobody who does this works at that time any more.';
  // A service no longer offered here (moved, removed since the page showed it): the API names its id.
  if (param === 'service_ids' && (error.code === 'not_found' || NOT_OFFERED.test(error.message))) {
    return 'A service you chose is no longer booked online here.';
  }
  const clashes = seriesClashWords(error, place);
  if (clashes !== undefined) return clashes;
  // The booking form names it location, the waitlist's service (as the API) location_slug.
  if (error.code === 'not_found' && (param === 'location' || param === 'location_slug'))
    return NO_SUCH_LOCATION;
  if (param === 'first_name') return 'Please give your first name (up to 60 characters).';
  if (param === 'last_name') return 'Please give your last name (up to 60 characters).';
  const dates = waitDatesWords(error);
  if (dates !== undefined) return dates;
  if (param === 'email' && /must be an e-mail/.test(error.message)) {
    return 'That e-mail address does not look right; check it, or give a phone number instead.';
  }
  return withDaysInWords(error.message);
}

/** requireBookableServices' refusal of a service the location does not offer ("Service {id} is not offered at {slug}."). */
const NOT_OFFERED = /^Service \S+ is not offered at \S+\.$/;

/**
 * A message's dates as the pages say them: "closed on Tuesday 24 November", not the API's
 * "closed on 2026-11-24" (a day closed since the page showed it, the last day bookings are taken).
 */
function withDaysInWords(message: string): string {
  return message.replace(/\b(\d{4}-\d{2}-\d{2})\b/g, (date) => {
    const day = Date.parse(`${date}T00:00:00Z`);
    return Number.isNaN(day) ? date : DAY_WORDS.format(day);
  });
}

/**
 * A waitlist request's dates refused (domain/waitlist.ts datesRefusal), in the words of the form's own
 * fields, From and Until, not the API's from_date and to_date; undefined for any other refusal. The
 * public page's form and the console's add form both label the dates so.
 */
export function waitDatesWords(error: AppError): string | undefined {
  if (error.param !== 'from_date' && error.param !== 'to_date') return undefined;
  const message = error.message;
  if (message.startsWith('from_date is after to_date')) {
    return 'The last day (Until) is before the first (From): choose a last day on or after the first.';
  }
  const today = /^to_date is already past \(today is (\d{4}-\d{2}-\d{2})/.exec(message)?.[1];
  if (today !== undefined) {
    return `The last day (Until) has passed: choose days from today, ${DAY_WORDS.format(Date.parse(`${today}T00:00:00Z`))}, on.`;
  }
  const span = /^An entry waits for at most (\d+) days: from_date to to_date spans (\d+)\.$/.exec(message);
  if (span) {
    return `You can wait for at most ${span[1]} days; these dates span ${span[2]}. Choose a last day (Until) nearer the first (From).`;
  }
  return undefined;
}

/**
 * A series refused because some of its visits are not free (409 series_clash): the API's message
 * says each clash lists the free times nearest it, which only its details do; a page says them.
 */
function seriesClashWords(error: AppError, place?: TimesPlace): string | undefined {
  const clashes = error.reason === 'series_clash' ? error.details?.clashes : undefined;
  if (!Array.isArray(clashes) || clashes.length === 0) return undefined;
  type Clash = {
    date: string;
    starts_at: string | null;
    reason: string;
    alternatives: { starts_at: string }[];
  };
  const visits = (clashes as Clash[]).map((clash) => {
    // A start as the API gives it is the location's wall time: its hours and minutes are the clock's.
    const times = clash.alternatives.map((a) => {
      const wall = a.starts_at.slice(11, 16);
      const at = Date.parse(a.starts_at);
      return place && !Number.isNaN(at) ? withRepeatedLabel(wall, at, place.timezone, place.locale) : wall;
    });
    // A wall time the clocks skip that night (no start): the free times offered are those nearest it.
    const skipped = clash.starts_at === null && clash.reason === 'not_on_grid';
    const listed = times.length === 1 ? times[0] : `${times.slice(0, -1).join(', ')} or ${times.at(-1)}`;
    const free =
      times.length === 0
        ? 'no other free time that day'
        : `free ${skipped ? 'nearest it' : 'that day'}: ${listed}`;
    const why = skipped ? 'that time does not exist that night: the clocks go forward over it; ' : '';
    const day = Date.parse(`${clash.date}T00:00:00Z`);
    return `${Number.isNaN(day) ? clash.date : DAY_WORDS.format(day)} (${why}${free})`;
  });
  const which = visits.length === 1 ? 'this visit of the series is' : 'these visits of the series are';
  return `Nothing was booked: ${which} not free at that time: ${visits.join('; ')}.`;
}

/** "Wednesday 9 December": a local date as the pages say it (a date read at UTC midnight). */
const DAY_WORDS = new Intl.DateTimeFormat('en-GB', {
  weekday: 'long',
  day: 'numeric',
  month: 'long',
  timeZone: 'UTC',
});

/** plainWords for a booking form sent back with what was typed kept: what to do next, too. */
export function forPeople(error: AppError, place?: TimesPlace): string {
  const words = plainWords(error, place);
  if (error.reason === 'series_clash' || error.reason === 'slot_unavailable') {
    return `${words} Your details are kept below: choose another time and confirm again.`;
  }
  // Words of their own are complete; the API's message (its dates in words) is followed by what to do.
  if (words !== withDaysInWords(error.message)) return words;
  if (error.param === 'form_key') return `${words} Your details are kept below: confirm to book.`;
  if (error.status === 409) {
    return `${words} Your details are kept below: choose another time and confirm again.`;
  }
  return `${words} Your details are kept below.`;
}
