import { type BookingStatus, whatBecameOf } from '../domain/booking/state-machine.ts';
import { ERROR_CATALOGUE, type ErrorCode } from '../domain/errors.ts';
import { listed } from './word-lists.ts';

/**
 * What a voice agent should say or ask next, one short sentence per outcome.
 *
 * Every error code of the contract has its hint in the error catalogue (src/domain/errors.ts, next to
 * its HTTP status); the outcomes below are the tools' own, more specific situations. Each carries the
 * `code` a tool result reports: the REST error code where one exists, else one of the MCP-only codes
 * `ambiguous` and `no_slots`. A test fails if an error code or an outcome has no hint.
 */
export type ToolCode = ErrorCode | 'ambiguous' | 'no_slots';

interface Outcome<P> {
  code: ToolCode;
  hint: (params: P) => string;
}

const outcome = <P = Record<string, never>>(code: ToolCode, hint: (params: P) => string): Outcome<P> => ({
  code,
  hint,
});

function closedHint(params: { location: string; day: string; why: string | null; alternatives: number }) {
  const { location, day, why, alternatives } = params;
  const next = alternatives > 0 ? 'offer the nearest free times in alternatives' : 'offer another day';
  return `${location} is closed on ${day}${why ? ` (${why})` : ''}; ${next}.`;
}

/**
 * Nobody who does the services works on the day(s) asked, though the location opens then (`open`:
 * on every one of them) for other services: not "closed", or the caller hears the salon is shut.
 */
function nobodyDoesItHint(params: { location: string; day: string; open: boolean; alternatives: number }) {
  const { location, day, open, alternatives } = params;
  const next = alternatives > 0 ? 'offer the nearest free times in alternatives' : 'offer another day';
  return `Nobody who does that works at ${location} on ${day}${open ? ', though it is open that day for others' : ''}; ${next}.`;
}

/** What is wrong with a phone number a caller gave, as bad_contact says it. */
export type PhoneTrouble = 'incomplete' | 'too_long' | 'unassigned' | 'not_in_use' | 'drama';

const PHONE_TROUBLE: Record<PhoneTrouble, string> = {
  incomplete: 'That phone number does not look complete; ask the caller to say it again, digit by digit.',
  too_long: 'That phone number has too many digits; ask the caller to say it again, digit by digit.',
  unassigned:
    'That phone number has the right number of digits but is not one in use; ask the caller to say it again, digit by digit, or for an e-mail address instead.',
  not_in_use:
    'That is not a phone number anyone has there; ask the caller to say it again, digit by digit, with its country code.',
  drama:
    "That is one of the numbers kept for TV and film dramas, so it is nobody's phone; ask the caller for the number they really use.",
};

export const TOOL_OUTCOMES = {
  location_needed: outcome<{ names: string[] }>(
    'ambiguous',
    ({ names }) => `This business has ${names.length} locations; ask the caller which one: ${either(names)}.`,
  ),
  unknown_location: outcome<{ said: string; names: string[] }>(
    'not_found',
    ({ said, names }) => `There is no location called ${quoted(said)}; the locations are ${both(names)}.`,
  ),
  ambiguous: outcome<{ what: string; said: string; names: string[] }>(
    'ambiguous',
    ({ what, said, names }) =>
      `${quoted(said)} could be several ${what}; ask the caller which: ${either(names)}.`,
  ),
  unknown_service: outcome<{ said: string; location: string }>(
    'not_found',
    ({ said, location }) =>
      `${location} does not offer ${quoted(said)}; call list_services and offer what it has, or ask again.`,
  ),
  in_person_only: outcome<{ service: string; phone: string | null }>(
    'invalid_request',
    ({ service, phone }) =>
      `${service} is not booked on this line: the salon's team books it themselves; offer to take a message for them${phone ? `, or give the salon's number, ${phone}` : ''}.`,
  ),
  unknown_staff: outcome<{ said: string; names: string[] }>(
    'not_found',
    ({ said, names }) => `Nobody called ${quoted(said)} works here; the team is ${both(names)}.`,
  ),
  staff_cannot_do: outcome<{ staff: string; service: string; others: string[] }>(
    'invalid_request',
    ({ staff, service, others }) =>
      others.length > 0
        ? `${staff} does not do ${service}; offer ${either(others)} instead.`
        : `${staff} does not do ${service}; offer any available stylist instead.`,
  ),
  no_slots: outcome<{ when: string; alternatives: number }>('no_slots', ({ when, alternatives }) =>
    alternatives > 0
      ? `Nothing is free ${when}; offer the nearest free times in alternatives, or join_waitlist.`
      : `Nothing is free ${when} or in the two weeks after; offer join_waitlist, or to take a message.`,
  ),
  /** find_slots: every time asked for today is already over (earlier than now at the location). */
  times_passed: outcome<{ when: string; alternatives: number }>('no_slots', ({ when, alternatives }) =>
    alternatives > 0
      ? `The times asked for, ${when}, have already passed; offer the nearest free times in alternatives.`
      : `The times asked for, ${when}, have already passed, and nothing is free in the next two weeks; ask for another day, or offer to take a message.`,
  ),
  /**
   * find_slots: today asked for once no start that fits is left in the location's hours today, or none
   * it can still book with the notice it needs (`notice`, "1 hour's notice"; null: the day is over).
   */
  day_over: outcome<{ location: string; day: string; notice: string | null; alternatives: number }>(
    'no_slots',
    ({ location, day, notice, alternatives }) => {
      const why = notice ? `it needs ${notice}, and its working day ends sooner` : 'its working day is over';
      return alternatives > 0
        ? `${location} has no more times ${day}: ${why}; offer the nearest free times in alternatives.`
        : `${location} has no more times ${day}: ${why}, and nothing is free in the next two weeks; ask for another day, or offer to take a message.`;
    },
  ),
  /** find_slots: the part of the day or times asked lie outside the location's hours on every day asked. */
  /** `tooLong`: open then, but closing too soon after for what was asked to fit. */
  not_open_then: outcome<{
    location: string;
    when: string;
    hours: string;
    alternatives: number;
    tooLong?: boolean;
  }>(
    'no_slots',
    ({ location, when, hours, alternatives, tooLong }) =>
      `${location} is not open ${when}${tooLong ? ' long enough' : ''} (open ${hours}); ` +
      `${alternatives > 0 ? 'offer the nearest free times in alternatives' : 'offer another time of day'}, not the waitlist: no time frees up then.`,
  ),
  client_not_found: outcome<{ by: 'phone' | 'email' }>(
    'not_found',
    ({ by }) =>
      `No client has that ${by === 'phone' ? 'phone number' : 'e-mail address'} on file; ask whether they booked with another number or e-mail and look that up, and only if not, register them.`,
  ),
  /**
   * A phone or e-mail that cannot be taken; a phone for what is wrong with it: digits missing, too
   * many, all of them but in no range in use (misheard), a number no one has there, or one of the
   * numbers Ofcom keeps for drama.
   */
  bad_contact: outcome<{ field: 'phone' | 'email'; why?: PhoneTrouble }>(
    'invalid_request',
    ({ field, why }) =>
      field === 'email'
        ? 'That e-mail address does not look right; ask the caller to spell it again.'
        : PHONE_TROUBLE[why ?? 'incomplete'],
  ),
  /**
   * A valid number that is no person's own (`what`: "a premium-rate number", phone-destinations.ts):
   * never texted or called back (design.md 9.1), so the caller is asked for their own.
   */
  not_personal_phone: outcome<{ what: string }>(
    'invalid_request',
    ({ what }) =>
      `That is ${what}, which the salon never texts or calls back; ask the caller for their own mobile or landline number, or an e-mail address.`,
  ),
  /** A national number that is not one of the location's country (a foreign caller's), or reads in two. */
  phone_country: outcome<{ countries: string[]; several: boolean }>(
    'invalid_request',
    ({ countries, several }) =>
      several
        ? `That number could be a ${either(countries)} number; ask the caller which country it is from, then pass it with that country's code.`
        : `That is not a ${either(countries)} number as said; ask the caller which country the number is from, then pass it with that country's code and without the leading 0 (like +33 6 12 34 56 78 for France).`,
  ),
  /** A client_id (the agent's, from an earlier answer) that no client of the organisation has. */
  unknown_client: outcome(
    'not_found',
    () =>
      'No client has that client_id; look the caller up with lookup_client, or pass client with their name and phone or e-mail instead.',
  ),
  booking_not_found: outcome<{ reference: string }>(
    'not_found',
    ({ reference }) =>
      `No booking has the reference ${reference}; ask the caller to read it again, or find it with lookup_client.`,
  ),
  /** A series (book with repeat, or a move of its following visits) of which some dates are not free. */
  series_clash: outcome<{ dates: string; done: 'booked' | 'moved' }>(
    'conflict',
    ({ dates, done }) =>
      `Nothing was ${done}: ${dates}. Offer the caller the free times in clashes for those dates, or another time for the whole series.`,
  ),
  slot_taken: outcome<{ alternatives: number }>('conflict', ({ alternatives }) =>
    alternatives > 0
      ? 'That time is already booked; apologise and offer the nearest free times in alternatives.'
      : 'That time is already booked and nothing else is free nearby; offer another day.',
  ),
  /** A move to "anyone" that nobody who does the services can take: busy, or not in then. */
  nobody_free_then: outcome<{ day: string; alternatives: number }>('conflict', ({ day, alternatives }) =>
    alternatives > 0
      ? `Nobody who does that is free at that time ${day}; offer the nearest free times in alternatives.`
      : `Nobody who does that is free at that time ${day}, and nothing else is free nearby; offer another day.`,
  ),
  /** Allowed by every rule but outside everyone's working hours that day (8 pm at a salon open until 6). */
  nobody_works_then: outcome<{ day: string; alternatives: number }>('conflict', ({ day, alternatives }) =>
    alternatives > 0
      ? `Nobody who does that works at that time ${day}; offer the nearest free times in alternatives.`
      : `Nobody who does that works at that time ${day}, and nothing else is free nearby; offer another day.`,
  ),
  time_passed: outcome<{ alternatives: number }>('conflict', ({ alternatives }) =>
    alternatives > 0
      ? 'That time has already passed; offer the nearest free times in alternatives.'
      : 'That time has already passed and nothing is free soon; offer another day.',
  ),
  /**
   * `needing`: what the booking waits for ("a deposit paid first", "a card saved first", "a code
   * entered first", "an offer claimed first") when that, not the location's own notice, is why it
   * needs this much (holdNotice): the location may book other services sooner.
   */
  too_soon: outcome<{ notice: string; needing: string | null; alternatives: number }>(
    'conflict',
    ({ notice, needing, alternatives }) => {
      const needs = needing
        ? `bookings that need ${needing} need ${notice} there`
        : `bookings there need ${notice}`;
      return alternatives > 0
        ? `That is too soon: ${needs}; offer the earliest free times in alternatives.`
        : `That is too soon: ${needs}, and nothing is free soon after; offer another day.`;
    },
  ),
  too_far_ahead: outcome<{ location: string; until: string }>(
    'conflict',
    ({ location, until }) =>
      `${location} takes bookings only up to ${until}; ask for a date before then, or offer to take a message.`,
  ),
  /** A booking or move refused because the location is closed that day. */
  closed: outcome('conflict', closedHint),
  /**
   * A move refused because the location no longer takes bookings at all (made inactive): no other day
   * or time there helps, so none is offered; the booking stays, and can still be cancelled.
   */
  location_closed: outcome<{ location: string }>(
    'conflict',
    ({ location }) =>
      `${location} no longer takes bookings, so this one stays as it is and cannot be moved; offer to cancel it, or to take a message for the salon.`,
  ),
  /** A booking or move refused on a day the location opens, but nobody who does the services works. */
  nobody_does_it: outcome('conflict', nobodyDoesItHint),
  not_on_grid: outcome<{ every: number | null; alternatives: number }>(
    'conflict',
    ({ every, alternatives }) =>
      `Appointments there start ${every ? `every ${every} minutes` : 'at set times'}; ${alternatives > 0 ? 'offer the nearest start times in alternatives' : 'ask find_slots for times'}.`,
  ),
  /**
   * `away`: off on a day they usually work (time off, a busy calendar), said as such: "does not work
   * on Thursday 24 December; works ... Thursday 11 am to 8 pm" reads as a contradiction.
   */
  staff_not_working: outcome<{
    staff: string;
    when?: string;
    works: string | null;
    alternatives: number;
    away?: boolean;
  }>(
    'conflict',
    ({ staff, when, works, alternatives, away }) =>
      `${staff} ${away ? 'is off' : 'does not work'} ${when ?? 'then'}${works ? `; ${staff} ${away ? 'usually works' : 'works'} ${works}` : ''}; ${alternatives > 0 ? `offer ${staff}'s nearest free times in alternatives, or anyone else` : 'offer another day or anyone else'}.`,
  ),
  /** find_slots on a day the location is closed: not "nothing free", which sounds fully booked. */
  closed_day: outcome('no_slots', closedHint),
  /** find_slots on days the location opens, but nobody who does the services works. */
  nobody_does_it_day: outcome('no_slots', nobodyDoesItHint),
  /** find_slots: every day asked for is over (said so: "nothing is free" sounds fully booked). */
  days_passed: outcome<{ days: string; count: number; alternatives: number }>(
    'no_slots',
    ({ days, count, alternatives }) => {
      const passed = `${capitalised(days)} ${count === 1 ? 'has' : 'have'} already passed`;
      return alternatives > 0
        ? `${passed}; offer the nearest free times in alternatives, or ask for another day.`
        : `${passed}, and nothing is free in the next two weeks; ask for another day, or offer to take a message.`;
    },
  ),
  /** find_slots: the days asked for lie beyond what the location books: how far ahead it does, until when. */
  days_too_far_ahead: outcome<{ asked: string; location: string; maxAdvanceDays: number; last: string }>(
    'no_slots',
    ({ asked, location, maxAdvanceDays, last }) =>
      `${capitalised(asked)} is further ahead than ${location} takes bookings (up to ${maxAdvanceDays} ` +
      `${maxAdvanceDays === 1 ? 'day' : 'days'} ahead, so until ${last}); ask for a date by then, or offer to take a message.`,
  ),
  name_mismatch: outcome<{ said: string; onFile: string }>(
    'ambiguous',
    ({ said, onFile }) =>
      `That phone or e-mail belongs to ${onFile} on file, not ${said}; confirm who is calling before booking (book for ${onFile} with client_id, or ask ${said} for their own number or e-mail).`,
  ),
  late_change: outcome<{ detail: string; phone: string | null }>(
    'conflict',
    ({ detail, phone }) =>
      `${detail} The appointment stays as it is; offer to pass a message to the salon${phone ? ` on ${phone}` : ''}.`,
  ),
  not_changeable: outcome<{ status: BookingStatus | null }>(
    'conflict',
    ({ status }) =>
      `That booking ${status ? whatBecameOf(status) : 'is closed'} and can no longer be changed; check the details with the caller.`,
  ),
  // A move without a staff member named, of a booking whose own one can no longer take it (made inactive,
  // or no longer doing its services there since it was booked): no other time helps, someone else may.
  staff_cannot_take: outcome(
    'conflict',
    () =>
      'The staff member it is booked with can no longer take it here, so it stays as it is; offer to move it to someone else (reschedule with staff) or take a message for the salon.',
  ),
  // A service of the booking no longer bookable online since it was booked: no move of it is taken here.
  service_not_online: outcome(
    'conflict',
    () =>
      'A service of this booking can no longer be booked online, so it stays as it is; offer to take a message for the salon to move it.',
  ),
  // A cancel asked again (a host's retry after a dropped answer): done, not refused; the code stays
  // that of any change to a booking no longer live (design.md 6), the words say it is done.
  already_cancelled: outcome<{ when: string }>(
    'conflict',
    ({ when }) =>
      `That booking (${when}) is already cancelled, so nothing more needs doing; tell the caller it is cancelled.`,
  ),
  // Live but refused: the appointment has begun (design.md 6, after starts_at), or a public-page
  // booking waits for its customer's code (9.1). Said so, not as its status "can no longer be changed".
  appointment_started: outcome<{ when: string }>(
    'conflict',
    ({ when }) =>
      `That appointment (${when}) has already started, so it can no longer be moved or cancelled; offer to take a message for the salon.`,
  ),
  awaiting_code: outcome(
    'conflict',
    () =>
      'That booking waits for the customer to confirm it with the code sent to their phone or e-mail (or the link in that message); once confirmed it can be moved, and it can be cancelled now.',
  ),
  protection_required: outcome<{ location: string; phone: string | null }>(
    'booking_protection_required',
    ({ location, phone }) =>
      `${location} takes bookings only on its online booking page, which secures a card; offer to send the link${phone ? ` or give its number, ${phone}` : ''}.`,
  ),
  confirm_name: outcome<{ what: string; said: string; name: string }>(
    'ambiguous',
    ({ what, said, name }) =>
      `${quoted(said)} is not quite a name here; ask the caller whether they mean the ${what} ${name}.`,
  ),
  unknown_service_choices: outcome<{ said: string; location: string; names: string[] }>(
    'not_found',
    ({ said, location, names }) =>
      `${location} does not offer ${quoted(said)}; the closest ${names.length === 1 ? 'is' : 'are'} ${either(names)}: ask whether ${names.length === 1 ? 'that' : 'one of those'} will do.`,
  ),
  staff_elsewhere: outcome<{ staff: string; location: string; elsewhere: string[]; others: string[] }>(
    'not_found',
    ({ staff, location, elsewhere, others }) =>
      `${staff} works at ${either(elsewhere)}, not ${location}; offer to book there${others.length > 0 ? `, or with ${either(others)} here` : ''}.`,
  ),
  service_elsewhere: outcome<{ service: string; location: string; elsewhere: string[] }>(
    'not_found',
    ({ service, location, elsewhere }) =>
      `${service} is offered at ${either(elsewhere)}, not ${location}; offer to book it there, or ask what else the caller would like here.`,
  ),
  /** join_waitlist for services the caller already waits for there (one entry each; no tool leaves one). */
  already_waiting: outcome(
    'conflict',
    () =>
      'The caller is already on the waitlist here for those services and will be sent a link when a time frees up; ' +
      'to change the days or times, offer to take a message for the salon.',
  ),
  /** join_waitlist ending today with every part of the day asked for over: no time could be offered. */
  waitlist_times_over: outcome<{ parts: readonly string[]; day: string }>(
    'invalid_request',
    ({ parts, day }) =>
      `The ${both(parts)} ${parts.length === 1 ? 'is' : 'are'} already over ${day}; ask the caller whether a later part of the day or another day suits, then join_waitlist with that.`,
  ),
  /** join_waitlist for a new caller who gave neither phone nor e-mail: nobody could be sent the offer. */
  waitlist_contact_needed: outcome(
    'invalid_request',
    () =>
      'I need a phone number or e-mail to tell them when a time frees up; ask the caller for one, then join_waitlist again with it in client.',
  ),
  /** join_waitlist for a caller no offer could reach: no e-mail on file, and a phone we may not text. */
  waitlist_contact_unreachable: outcome(
    'invalid_request',
    () =>
      "We can't text that number (it is abroad) and have no e-mail for them; ask the caller for an e-mail address, then join_waitlist again with their name and that e-mail alone in client.",
  ),
  /** send_link with nothing to send (the booking no longer live, begun, or nowhere to send it), and why. */
  nothing_to_send: outcome<{ why: string }>(
    'conflict',
    ({ why }) =>
      `Nothing was sent: ${why}; tell the caller, and offer to take a message for the salon if they need more.`,
  ),
  /** send_link past the hour's resends; `channels`: where the booking's messages go (both when not known). */
  resends_spent: outcome<{ times: number; minutes: number; channels?: readonly ('sms' | 'email')[] }>(
    'rate_limited',
    ({ times, minutes, channels }) =>
      `It was already sent again ${times} times in the last hour; ask the caller to check ${whereSent(channels)}, or offer to take a message; it can be sent again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
  ),
  rate_limited: outcome<{ seconds: number }>(
    'rate_limited',
    ({ seconds }) =>
      `The booking system is busy; ask the caller to hold, wait ${seconds} second${seconds === 1 ? '' : 's'}, then try again.`,
  ),
} as const;

export type ToolOutcome = keyof typeof TOOL_OUTCOMES;
export type OutcomeParams<K extends ToolOutcome> = Parameters<(typeof TOOL_OUTCOMES)[K]['hint']>[0];

/** Where a caller looks for a booking's messages: their texts, their e-mail (spam folder too), or both. */
function whereSent(channels: readonly ('sms' | 'email')[] | undefined): string {
  const texts = channels === undefined || channels.includes('sms');
  const email = channels === undefined || channels.includes('email');
  if (texts && !email) return 'their texts';
  if (email && !texts) return 'their e-mail (spam folder too)';
  return 'their texts and e-mail (spam too)';
}

/** The hint of a contract error code (from the error catalogue). */
export function errorHint(code: ErrorCode): string {
  return ERROR_CATALOGUE[code].hint;
}

/**
 * Whose mistake a bad argument is: the `caller`'s when it carries what they said (a date or a phone
 * that reads as none, a name left empty), asked again; else the `agent`'s own (a limit, days, dry_run,
 * scope, repeat, an id it passes on, a value of the wrong type, an argument the tool does not take),
 * which it corrects without sending a voice caller round again for nothing.
 */
export type ArgumentFault = 'agent' | 'caller';

/**
 * How an argument error's hint begins, by whose mistakes it names: the catalogue's invalid_request
 * hint ("... ask the caller again.") when every one is the caller's, else that the agent fixes them.
 */
export function argumentErrorHint(faults: readonly ArgumentFault[]): string {
  if (!faults.includes('agent')) return errorHint('invalid_request');
  const fix = 'Something in the request was not valid; fix the named arguments and call again';
  return faults.includes('caller')
    ? `${fix}, asking the caller again only about what they said.`
    : `${fix}, no need to ask the caller.`;
}

const QUOTED_LENGTH = 60;

/**
 * What the caller said, quoted back in a hint: enough for the agent to know which words did not match,
 * cut after QUOTED_LENGTH characters (a tool argument has no length limit, and a hint stays short).
 */
function quoted(said: string): string {
  const characters = Array.from(said);
  return characters.length <= QUOTED_LENGTH
    ? `"${said}"`
    : `"${characters.slice(0, QUOTED_LENGTH).join('')}…"`;
}

function capitalised(words: string): string {
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function both(names: readonly string[]): string {
  return names.length === 0 ? 'none' : listed(names, 'and');
}

function either(names: readonly string[]): string {
  return names.length === 0 ? 'none' : listed(names, 'or');
}
