import { type CountryCode, getCountries, getCountryCallingCode } from 'libphonenumber-js';
import {
  isDramaNumber,
  normaliseEmail,
  normalisePhone,
  phoneAsDialledAt,
  phoneRefusal,
} from '../app/contact.ts';
import { countryName, nonPersonalNumber } from '../app/phone-destinations.ts';
import type { BookingApi, Location, Service, Staff } from './booking-api.ts';
import type { PhoneTrouble } from './hints.ts';
import { type MatchOptions, type MatchResult, matchByName } from './name-matching.ts';
import { type SpeechLocale, speakPhone, speechLocaleFor } from './speech.ts';
import { readSpokenStart } from './spoken-starts.ts';
import { BadArgument, fail, failure } from './tool-kit.ts';

/**
 * Turning what an agent passes (names as the caller said them, relative times, national phone
 * numbers) into the exact values the engine takes. Every failure here is either a conversational
 * outcome (unknown or ambiguous names: ask the caller) or a BadArgument (the agent should fix it).
 */

/** A location with what speaking about it needs. */
export interface Place {
  location: Location;
  zone: string;
  locale: SpeechLocale;
  /** The location's number read digit by digit, or null. */
  phoneSpoken: string | null;
}

export function placeOf(location: Location): Place {
  return {
    location,
    zone: location.timezone,
    locale: speechLocaleFor(location.country),
    phoneSpoken: location.phone ? spokenNumber(location.phone, location.country) : null,
  };
}

/** Phone numbers as spoken, remembered: parsing with libphonenumber on every tool call showed in profiles. */
const spokenNumbers = new Map<string, string>();

function spokenNumber(phone: string, country: string | undefined): string {
  const key = `${phone}|${country ?? ''}`;
  let spoken = spokenNumbers.get(key);
  if (spoken === undefined) {
    spoken = speakPhone(phone, country);
    if (spokenNumbers.size >= 1000) spokenNumbers.clear();
    spokenNumbers.set(key, spoken);
  }
  return spoken;
}

/** The location named (slug, name, city or id, forgivingly); optional when the organisation has only one. */
export async function resolveLocation(api: BookingApi, said: string | undefined): Promise<Place> {
  const locations = await api.listLocations();
  const names = locations.map((l) => l.name);
  if (said === undefined || said.trim() === '') {
    if (locations.length === 1) return placeOf(locations[0]!);
    fail('location_needed', { names }, { choices: names.slice(0, MAX_CHOICES) });
  }
  const match = remembered(locations, `location|${said}`, () =>
    matchByName(said, locations, (l) => ({ id: l.id, names: [l.name, l.slug, l.city ?? ''] }), {
      partial: 'match',
    }),
  );
  if (match.kind === 'match') return placeOf(match.item);
  if (match.kind === 'ambiguous') {
    askWhich(
      'locations',
      said,
      match.choices.map((l) => l.name),
    );
  }
  return fail('unknown_location', { said, names }, { choices: match.closest.map((l) => l.name) });
}

/**
 * A match of what was said against a listing, remembered with the listing: the in-process API shares
 * one listing per catalogue version between tool calls (a new catalogue version is a new listing),
 * and an agent names the same location and services on nearly every call, so the forgiving match,
 * which showed in profiles of find_slots, runs once per listing and wording. Listings are never
 * modified; a listing read afresh (over --base-url) is simply matched afresh.
 */
function remembered<T>(listing: readonly T[], key: string, match: () => MatchResult<T>): MatchResult<T> {
  let matches = rememberedMatches.get(listing);
  if (!matches) {
    matches = new Map();
    rememberedMatches.set(listing, matches);
  }
  let result = matches.get(key) as MatchResult<T> | undefined;
  if (!result) {
    result = match();
    if (matches.size >= MAX_REMEMBERED_MATCHES) matches.clear();
    matches.set(key, result);
  }
  return result;
}

const rememberedMatches = new WeakMap<object, Map<string, MatchResult<unknown>>>();
/** Per listing: the wordings of a day's calls, not every string a client could send. */
const MAX_REMEMBERED_MATCHES = 500;

/** The most `choices` an outcome carries, closest first (design.md 8.2). */
const MAX_CHOICES = 3;

/**
 * Fails with the choices the caller is to be asked about: which of several, or, with one choice,
 * whether that is the one meant.
 */
function askWhich(what: 'locations' | 'services' | 'staff members', said: string, choices: string[]): never {
  if (choices.length === 1) {
    const noun = { locations: 'location', services: 'service', 'staff members': 'staff member' }[what];
    fail('confirm_name', { what: noun, said, name: choices[0]! }, { choices });
  }
  return fail('ambiguous', { what, said, names: choices }, { choices });
}

/** The location a booking is at, by its slug: active or not (its bookings are still read and cancelled). */
export async function placeOfSlug(api: BookingApi, slug: string): Promise<Place> {
  const listed = (await api.listLocations()).find((l) => l.slug === slug);
  return placeOf(listed ?? (await api.bookingLocation(slug)));
}

const describeService = (s: Service) => ({ id: s.id, names: [s.name], aliases: s.aliases });

/**
 * How services are matched: a word of a longer name is offered for confirmation rather than taken
 * ("trim" might be a beard trim or not), and services booked only in person are never offered,
 * though a caller who names one is told so.
 */
const SERVICE_MATCHING: MatchOptions<Service> = { partial: 'confirm', offerable: (s) => s.online_bookable };

/**
 * The services named, in the order given, each offered at the place and bookable online; a service
 * that exists only in person is answered as such (not as unknown). One request may name several
 * ("cut and colour") when no single service is called that.
 */
export async function resolveServices(
  api: BookingApi,
  place: Place,
  said: string | readonly string[],
): Promise<Service[]> {
  const all = await api.listServices(place.location.slug);
  const asked = (typeof said === 'string' ? [said] : said).filter((s) => s.trim() !== '');
  if (asked.length === 0) throw new BadArgument('services', 'name at least one service.');
  const services: Service[] = [];
  for (const request of asked) {
    for (const [name, match] of servicesIn(request, all)) {
      // Only a name read exactly here settles it without a look at the other locations.
      if (match.kind !== 'match' || (match.fit !== 'exact' && match.fit !== 'id')) {
        await failIfServiceElsewhere(api, place, name, match);
      }
      const service = settleService(name, match, place, all);
      if (!services.some((s) => s.id === service.id)) services.push(service);
    }
  }
  return services;
}

/** Words that join two services in one request. */
const JOINS = /\s*(?:,|&|\+|\band\b|\bplus\b|\bthen\b)\s*/i;

/**
 * What one request names: one service when something is called (nearly) that, else the parts of
 * "A and B" when each fits a service (and one surely, or the whole fits none), else the request as
 * a whole (to be asked about or reported).
 */
function servicesIn(request: string, all: readonly Service[]): [string, MatchResult<Service>][] {
  const match = (said: string) =>
    remembered(all, `service|${said}`, () => matchByName(said, all, describeService, SERVICE_MATCHING));
  const whole = match(request);
  if (whole.kind === 'match' && whole.fit !== 'partial') return [[request, whole]];
  const parts = request.split(JOINS).filter((part) => part.trim() !== '');
  if (parts.length > 1) {
    const each = parts.map((part): [string, MatchResult<Service>] => [part, match(part)]);
    const sure = ([, match]: [string, MatchResult<Service>]) =>
      match.kind === 'match' && match.fit !== 'partial';
    if (each.every(([, match]) => match.kind !== 'none') && (each.some(sure) || whole.kind === 'none')) {
      return each;
    }
  }
  return [[request, whole]];
}

/**
 * Fails with service_elsewhere when the name fits a service offered only at the organisation's other
 * locations more strictly than anything here ("head massage" in London, offered in Kathmandu): the
 * caller is told where it is, not offered the nearest name here as if it were what they meant.
 */
async function failIfServiceElsewhere(
  api: BookingApi,
  place: Place,
  said: string,
  here: MatchResult<Service>,
): Promise<void> {
  const offeredHere = new Set((await api.listServices(place.location.slug)).map((s) => s.id));
  const offers = new Map<string, { service: Service; locations: string[] }>();
  for (const location of await api.listLocations()) {
    if (location.slug === place.location.slug) continue;
    for (const service of await api.listServices(location.slug)) {
      if (offeredHere.has(service.id)) continue;
      const entry = offers.get(service.id) ?? { service, locations: [] };
      entry.locations.push(location.name);
      offers.set(service.id, entry);
    }
  }
  if (offers.size === 0) return;
  const pool = [...offers.values()];
  const there = matchByName(said, pool, (entry) => describeService(entry.service), {
    partial: 'confirm',
    offerable: (entry) => entry.service.online_bookable,
  });
  // A word of one service's name there ("massage") names it as surely as a match.
  const named =
    there.kind === 'match'
      ? there.item
      : there.kind === 'ambiguous' && there.choices.length === 1
        ? there.choices[0]
        : undefined;
  if (!named || strictness(there) >= strictness(here)) return;
  const { service, locations } = named;
  fail(
    'service_elsewhere',
    { service: service.name, location: place.location.name, elsewhere: locations },
    { choices: locations.slice(0, MAX_CHOICES) },
  );
}

function settleService(
  said: string,
  match: MatchResult<Service>,
  place: Place,
  offered: readonly Service[],
): Service {
  if (match.kind === 'none') {
    const names = match.closest.map((s) => s.name);
    if (names.length === 0) {
      // Nothing close (a name of filler words alone, "the"): some of what it offers, to choose from.
      const some = offered.filter((s) => s.online_bookable).slice(0, MAX_CHOICES);
      fail('unknown_service', { said, location: place.location.name }, { choices: some.map((s) => s.name) });
    }
    fail('unknown_service_choices', { said, location: place.location.name, names }, { choices: names });
  }
  if (match.kind === 'ambiguous') {
    askWhich(
      'services',
      said,
      match.choices.map((s) => s.name),
    );
  }
  if (!match.item.online_bookable) {
    fail('in_person_only', { service: match.item.name, phone: place.phoneSpoken });
  }
  return match.item;
}

const describeStaff = (s: Staff) => ({ id: s.id, names: [s.name], aliases: s.aliases });

/** A first or last name alone names a person, when only one person here has it. */
const STAFF_MATCHING = { partial: 'match' } as const satisfies MatchOptions<unknown>;

/** How strict a fit is, for comparing one location's answer with another's (lower is stricter). */
function strictness(match: MatchResult<unknown>): number {
  return match.kind === 'none' ? 4 : ['id', 'exact', 'close', 'partial'].indexOf(match.fit);
}

/** What callers say for no stylist in particular: whoever does the services and is free. */
const ANYONE =
  /^(?:any|anyone|anybody|any (?:one|stylist|barber|staff(?: member)?)|no(?: particular)? preference|whoever(?: is free)?|(?:the )?first available|(?:i )?(?:don'?t|do not) mind|(?:it )?doesn'?t matter|no ?one in particular|nobody in particular)$/;

/**
 * The staff member said, if one was: undefined when none was, or when the words name no one in
 * particular ("anyone", "no preference"). Read as a name, they were refused with the team as choices,
 * and an agent picking one of those narrowed the search, booking or waitlist entry to a stylist the
 * caller never asked for.
 */
export async function resolveStaffIfNamed(
  api: BookingApi,
  place: Place,
  said: string | undefined,
  services: readonly Service[],
): Promise<Staff | undefined> {
  if (said === undefined || namesNoOneInParticular(said)) return undefined;
  return resolveStaff(api, place, said, services);
}

/** Whether the staff said names no one in particular: "anyone", "no preference", "I don't mind". */
export function namesNoOneInParticular(said: string): boolean {
  const words = said
    .toLowerCase()
    .replace(/[\u2019]/g, "'")
    .replace(/[.!,]+/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  return ANYONE.test(words);
}

/**
 * The staff member named, who must deliver every one of the services. Someone who works only at
 * another of the organisation's locations is named with it (and the caller offered to book there),
 * not reported as unknown.
 */
export async function resolveStaff(
  api: BookingApi,
  place: Place,
  said: string,
  services: readonly Service[],
): Promise<Staff> {
  const team = await api.listStaff(place.location.slug);
  const here = remembered(team, `staff|${said}`, () =>
    matchByName(said, team, describeStaff, STAFF_MATCHING),
  );
  const delivers = (member: Staff) => services.every((s) => member.service_ids.includes(s.id));
  // Only a name read exactly here settles it without a look at the other locations.
  if (here.kind === 'none' || here.fit === 'close' || here.fit === 'partial') {
    await failIfElsewhere(api, place, said, here, team, team.filter(delivers));
  }
  if (here.kind === 'none') {
    const names = team.map((s) => s.name);
    // Nothing close (a name of filler words alone, "a"): those here who do the services, else the team.
    const offered =
      here.closest.length > 0 ? here.closest : team.some(delivers) ? team.filter(delivers) : team;
    fail('unknown_staff', { said, names }, { choices: offered.slice(0, MAX_CHOICES).map((s) => s.name) });
  }
  if (here.kind === 'ambiguous') {
    askWhich(
      'staff members',
      said,
      here.choices.map((s) => s.name),
    );
  }
  const staff = here.item;
  if (!delivers(staff)) {
    const missing = services.find((s) => !staff.service_ids.includes(s.id))!;
    const others = team.filter(delivers).map((s) => s.name);
    fail(
      'staff_cannot_do',
      { staff: staff.name, service: missing.name, others },
      { choices: others.slice(0, MAX_CHOICES) },
    );
  }
  return staff;
}

/**
 * Fails with staff_elsewhere when the name fits someone at the organisation's other locations
 * more strictly than anyone here ("Chloé Martin" at Camden, who works at Islington).
 */
async function failIfElsewhere(
  api: BookingApi,
  place: Place,
  said: string,
  here: MatchResult<Staff>,
  team: readonly Staff[],
  colleagues: readonly Staff[],
): Promise<void> {
  const workplaces = new Map<string, { member: Staff; locations: string[] }>();
  const teamHere = new Set(team.map((s) => s.id));
  for (const location of await api.listLocations()) {
    if (location.slug === place.location.slug) continue;
    for (const member of await api.listStaff(location.slug)) {
      if (teamHere.has(member.id)) continue;
      const entry = workplaces.get(member.id) ?? { member, locations: [] };
      entry.locations.push(location.name);
      workplaces.set(member.id, entry);
    }
  }
  const pool = [...workplaces.values()];
  const there = matchByName(said, pool, (entry) => describeStaff(entry.member), STAFF_MATCHING);
  if (there.kind !== 'match' || strictness(there) >= strictness(here)) return;
  const { member, locations } = there.item;
  fail(
    'staff_elsewhere',
    {
      staff: member.name,
      location: place.location.name,
      elsewhere: locations,
      others: colleagues.slice(0, MAX_CHOICES).map((s) => s.name),
    },
    { choices: locations.slice(0, MAX_CHOICES) },
  );
}

/**
 * A start as the engine takes it (RFC 3339 with the offset in force): as find_slots gave it, a local
 * time without an offset ("2026-11-24T14:30"), or as the tools say a slot ("Tuesday 24 November at
 * 2:30 pm", "tomorrow at noon", "1:30 am BST"), read in the location's zone and locale on the engine's
 * calendar (spoken-starts.ts). An hour said without am/pm ("tomorrow at 2:30") is placed inside the
 * location's opening hours, which are asked for only then.
 */
export async function resolveStart(api: BookingApi, place: Place, said: string): Promise<string> {
  const context = { zone: place.zone, locale: place.locale, now: api.now() };
  let reading = readSpokenStart(said, context);
  if (!reading.ok && reading.needsOpeningHours) {
    const { opening_hours } = await api.locationInfo(place.location.slug);
    reading = readSpokenStart(said, { ...context, openingHours: opening_hours });
  }
  if (!reading.ok) throw new BadArgument('starts_at', `${reading.reason}.`);
  return reading.startsAt;
}

/**
 * What a phone number as the caller said it reads as: international as given, or national, read in
 * the country of the location the call is about (a Kathmandu caller's "9841 234567" is Nepalese even
 * when the business also has a London salon) or, when no location is named, in each of the
 * organisation's countries.
 */
type PhoneReading =
  | { kind: 'phone'; phone: string }
  /** National, and valid in more than one of the countries it was read in. */
  | { kind: 'several'; countries: string[] }
  /** Not valid where it was read, but a complete national number elsewhere: a foreign caller's. */
  | { kind: 'foreign'; countries: string[] }
  /** Not a number to take: digits missing or misheard, too many, no one's there, or a drama number. */
  | { kind: 'refused'; why: PhoneTrouble };

function readPhone(said: string, countries: readonly (string | null | undefined)[]): PhoneReading {
  const text = phoneInDigits(said);
  if (text.startsWith('+') || text.startsWith('00')) {
    const phone = normalisePhone(text.replace(/^00/, '+'));
    return phone ? { kind: 'phone', phone } : { kind: 'refused', why: internationalTrouble(text) };
  }
  const home = [...new Set(countries.filter((c): c is string => typeof c === 'string' && c !== ''))];
  const readings = new Map<string, string>();
  for (const country of home) {
    const phone = normalisePhone(text, country as CountryCode);
    if (phone) readings.set(phone, country);
  }
  if (readings.size === 1) return { kind: 'phone', phone: [...readings.keys()][0]! };
  if (readings.size > 1) return { kind: 'several', countries: [...readings.values()] };
  // One of the numbers Ofcom keeps for drama (07700 900123 in London) is nobody's: said as such.
  if (home.some((country) => isDramaNumber(phoneAsDialledAt(text, country)))) {
    return { kind: 'refused', why: 'drama' };
  }
  // Asked only when it does not read at home. A home number misheard is asked for again, saying
  // what is wrong with it: digits missing ("07911 12"), one too many ("079115 551234"), or all of
  // them but in no range in use ("07911 554433"); a complete number elsewhere that no home number
  // begins like (a French "06 12 34 56 78" in London) is a foreign caller's.
  for (const country of home) {
    const why = homeTrouble(text, country);
    if (why) return { kind: 'refused', why };
  }
  const elsewhere = getCountries().some((country) => normalisePhone(text, country) !== undefined);
  return elsewhere ? { kind: 'foreign', countries: home } : { kind: 'refused', why: 'incomplete' };
}

/**
 * What is wrong with a national number that is not valid in `country` but reads as one of its numbers
 * misheard, or undefined when it does not (a foreign caller's): digits missing (a few more make it
 * valid), too many (without its last one to three it begins like one of the country's numbers), or
 * none missing and none too many but in no range the country uses.
 */
function homeTrouble(text: string, country: string): PhoneTrouble | undefined {
  if (missesDigits(text, country)) return 'incomplete';
  const kind = phoneRefusal(text, country as CountryCode)?.kind;
  const digits = text.replace(/\D/g, '');
  if (kind === 'too_long') {
    const cut = [1, 2, 3].some(
      (n) => digits.length - n > 5 && beginsLikeAHomeNumber(digits.slice(0, -n), country),
    );
    return cut ? 'too_long' : undefined;
  }
  if (!beginsLikeAHomeNumber(digits, country)) return undefined;
  return kind === 'not_in_use' ? 'unassigned' : 'incomplete';
}

/** What is wrong with an international number (+ or 00) that is not valid, in bad_contact's terms. */
function internationalTrouble(text: string): PhoneTrouble {
  switch (phoneRefusal(text.replace(/^00/, '+'))?.kind) {
    case 'drama':
      return 'drama';
    case 'not_in_use':
      return 'not_in_use';
    case 'too_long':
      return 'too_long';
    default:
      return 'incomplete';
  }
}

/** Whether a few more digits make what was said a valid number of the country: its start was said. */
function missesDigits(text: string, country: string): boolean {
  const valid = (candidate: string) => normalisePhone(candidate, country as CountryCode) !== undefined;
  for (let missing = 1; missing <= 4; missing += 1) {
    if (['0', '1', '5', '9'].some((digit) => valid(text + digit.repeat(missing)))) return true;
  }
  return false;
}

/**
 * Whether the digits begin like a number of the country: the same first five digits, others after
 * (as many as were said), make a valid one.
 */
function beginsLikeAHomeNumber(digits: string, country: string): boolean {
  const valid = (candidate: string) => normalisePhone(candidate, country as CountryCode) !== undefined;
  if (digits.length <= 5) return false;
  const rest = digits.length - 5;
  const fills = ['0', '1', '2', '3', '5', '7', '9'].map((digit) => digit.repeat(rest));
  fills.push('123456789012'.slice(0, rest));
  return fills.some((fill) => valid(digits.slice(0, 5) + fill));
}

/** The phone in E.164, or the outcome that asks the caller what the agent needs to read it. */
function phoneOrAsk(reading: PhoneReading): string {
  switch (reading.kind) {
    case 'phone':
      return reading.phone;
    case 'several':
      return fail('phone_country', {
        countries: reading.countries.map(
          (c) => `${countryName(c)} (+${getCountryCallingCode(c as CountryCode)})`,
        ),
        several: true,
      });
    case 'foreign':
      return fail('phone_country', { countries: reading.countries.map(countryName), several: false });
    case 'refused':
      return fail('bad_contact', { field: 'phone', why: reading.why });
  }
}

/**
 * A contact (phone and/or e-mail) as the engine takes it; ok false when one does not look right.
 * `country`: the country of the location the call is about, where there is one.
 */
export async function callerContact(
  api: BookingApi,
  said: { phone?: string | undefined; email?: string | undefined },
  country?: string | null,
): Promise<{ phone?: string; email?: string }> {
  const contact: { phone?: string; email?: string } = {};
  if (said.phone !== undefined && said.phone.trim() !== '') {
    const countries = country ? [country] : (await api.listLocations()).map((l) => l.country);
    const phone = phoneOrAsk(readPhone(said.phone, countries));
    const notPersonal = nonPersonalNumber(phone);
    if (notPersonal !== null) fail('not_personal_phone', { what: notPersonal });
    contact.phone = phone;
  }
  if (said.email !== undefined && said.email.trim() !== '') {
    contact.email = normaliseEmail(said.email) ?? fail('bad_contact', { field: 'email' });
  }
  return contact;
}

/**
 * The contact's phone and e-mail that no location would read, as BadArguments named `${prefix}phone`
 * and `${prefix}email` in the words callerContact refuses them with: a phone that is a number in no
 * country (international or national), an e-mail that is no address. For naming every bad argument
 * of a call before the location is known (tool-arguments.ts); values that are not text are left out.
 */
export function contactFormProblems(said: unknown, prefix = ''): BadArgument[] {
  if (typeof said !== 'object' || said === null) return [];
  const { phone, email } = said as Record<string, unknown>;
  const problems: BadArgument[] = [];
  if (typeof phone === 'string' && phone.trim() !== '' && !readsAsPhoneAnywhere(phone.trim())) {
    const text = phone.trim();
    const why = text.startsWith('+') || text.startsWith('00') ? internationalTrouble(text) : 'incomplete';
    problems.push(new BadArgument(`${prefix}phone`, failure('bad_contact', { field: 'phone', why }).hint));
  }
  if (typeof email === 'string' && email.trim() !== '' && normaliseEmail(email) === undefined) {
    problems.push(new BadArgument(`${prefix}email`, failure('bad_contact', { field: 'email' }).hint));
  }
  return problems;
}

/** Digits said as words, as a voice agent may pass them on (references are taken so too). */
const DIGIT_WORDS: ReadonlyMap<string, string> = new Map([
  ['zero', '0'],
  ['oh', '0'],
  ['o', '0'],
  ['nought', '0'],
  ...['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'].map(
    (word, i) => [word, String(i + 1)] as const,
  ),
]);

/**
 * A phone number as said, trimmed, with digits said as words written as digits ("oh seven nine
 * double one, ..." is 07911...; "plus four four" and "+44" begin +44); text with any other word is left as it is,
 * for readPhone to refuse as it would.
 */
function phoneInDigits(said: string): string {
  const text = said.trim();
  if (!/[a-z]/i.test(text)) return text;
  let digits = '';
  let times = 1;
  for (const word of text
    .toLowerCase()
    .split(/[\s,.;-]+/)
    .filter((w) => w !== '')) {
    if (word === 'double' || word === 'triple') {
      times = word === 'double' ? 2 : 3;
      continue;
    }
    if (word === 'plus' && digits === '') {
      digits = '+';
      continue;
    }
    // The country code written as digits, the rest said ("+44 seven nine one one ...").
    if (/^\+\d+$/.test(word) && digits === '' && times === 1) {
      digits = word;
      continue;
    }
    const digit = DIGIT_WORDS.get(word) ?? (/^\d+$/.test(word) ? word : undefined);
    if (digit === undefined) return text;
    digits += digit[0]!.repeat(times - 1) + digit;
    times = 1;
  }
  return times === 1 && /\d/.test(digits) ? digits : text;
}

/** Whether the number is a phone number of some country (read as readPhone reads it). */
function readsAsPhoneAnywhere(said: string): boolean {
  const text = phoneInDigits(said);
  if (text.startsWith('+') || text.startsWith('00')) {
    return normalisePhone(text.replace(/^00/, '+')) !== undefined;
  }
  // A national number that reads in no country is refused at home and abroad alike (readPhone).
  return getCountries().some((country) => normalisePhone(text, country) !== undefined);
}

/**
 * Every reading of a caller's phone in the organisation's countries, for finding them on file: a
 * national number valid in two of them (a business in London and Kathmandu) may be on file under
 * either. One that reads nowhere fails with the outcome that asks the caller (phoneOrAsk).
 */
export async function callerPhoneReadings(api: BookingApi, said: string): Promise<string[]> {
  const countries = (await api.listLocations()).map((l) => l.country);
  const reading = readPhone(said, countries);
  if (reading.kind !== 'several') return [phoneOrAsk(reading)];
  return [...new Set(countries)].flatMap((c) => {
    const phone = c ? normalisePhone(phoneInDigits(said), c as CountryCode) : undefined;
    return phone ? [phone] : [];
  });
}
