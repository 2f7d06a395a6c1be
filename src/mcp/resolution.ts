import type { CountryCode } from 'libphonenumber-js';
import { normaliseEmail, normalisePhone } from '../app/contact.ts';
import type { BookingApi, Location, Service, Staff } from './booking-api.ts';
import { matchByName } from './name-matching.ts';
import { type SpeechLocale, speakPhone, speechLocaleFor } from './speech.ts';
import { readSpokenStart } from './spoken-starts.ts';
import { BadArgument, fail } from './tool-kit.ts';

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

/** The location named (slug, name or id, forgivingly); optional when the organisation has only one. */
export async function resolveLocation(api: BookingApi, said: string | undefined): Promise<Place> {
  const locations = await api.listLocations();
  const names = locations.map((l) => l.name);
  if (said === undefined || said.trim() === '') {
    if (locations.length === 1) return placeOf(locations[0]!);
    fail('location_needed', { names }, { choices: names });
  }
  const match = matchByName(said, locations, (l) => ({ id: l.id, names: [l.name, l.slug, l.city ?? ''] }));
  if (match.kind === 'match') return placeOf(match.item);
  if (match.kind === 'ambiguous') {
    const choices = match.choices.map((l) => l.name);
    fail('ambiguous', { what: 'locations', said, names: choices }, { choices });
  }
  return fail('unknown_location', { said, names }, { choices: names });
}

/** The location a booking is at, by its slug. */
export async function placeOfSlug(api: BookingApi, slug: string): Promise<Place> {
  const location = (await api.listLocations()).find((l) => l.slug === slug);
  if (!location) throw new Error(`Location ${slug} of a booking is not listed`);
  return placeOf(location);
}

/**
 * The services named, in the order given, each offered at the place and bookable online; a service
 * that exists only in person is answered as such (not as unknown).
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
  for (const name of asked) {
    const match = matchByName(name, all, (s) => ({ id: s.id, names: [s.name] }));
    if (match.kind === 'none') fail('unknown_service', { said: name, location: place.location.name });
    if (match.kind === 'ambiguous') {
      const choices = match.choices.map((s) => s.name);
      fail('ambiguous', { what: 'services', said: name, names: choices }, { choices });
    }
    const service = match.item;
    if (!service.online_bookable) {
      fail('in_person_only', { service: service.name, phone: place.phoneSpoken });
    }
    if (!services.some((s) => s.id === service.id)) services.push(service);
  }
  return services;
}

/** The staff member named, who must deliver every one of the services. */
export async function resolveStaff(
  api: BookingApi,
  place: Place,
  said: string,
  services: readonly Service[],
): Promise<Staff> {
  const team = await api.listStaff(place.location.slug);
  const names = team.map((s) => s.name);
  const match = matchByName(said, team, (s) => ({ id: s.id, names: [s.name] }));
  if (match.kind === 'none') fail('unknown_staff', { said, names }, { choices: names });
  if (match.kind === 'ambiguous') {
    const choices = match.choices.map((s) => s.name);
    fail('ambiguous', { what: 'staff members', said, names: choices }, { choices });
  }
  const staff = match.item;
  const delivers = (member: Staff) => services.every((s) => member.service_ids.includes(s.id));
  if (!delivers(staff)) {
    const missing = services.find((s) => !staff.service_ids.includes(s.id))!;
    const others = team.filter(delivers).map((s) => s.name);
    fail('staff_cannot_do', { staff: staff.name, service: missing.name, others }, { choices: others });
  }
  return staff;
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
 * A phone number as the caller said it, in E.164: international as given, or national, read with the
 * countries of the organisation's locations (the first that makes it valid). Undefined: not a number.
 */
function callerPhone(said: string, countries: readonly (string | undefined)[]): string | undefined {
  const text = said.trim();
  if (text.startsWith('+') || text.startsWith('00')) return normalisePhone(text.replace(/^00/, '+'));
  for (const country of new Set(countries)) {
    if (!country) continue;
    const phone = normalisePhone(text, country as CountryCode);
    if (phone) return phone;
  }
  return undefined;
}

/** A contact (phone and/or e-mail) as the engine takes it; ok false when one does not look right. */
export async function callerContact(
  api: BookingApi,
  said: { phone?: string | undefined; email?: string | undefined },
): Promise<{ phone?: string; email?: string }> {
  const contact: { phone?: string; email?: string } = {};
  if (said.phone !== undefined && said.phone.trim() !== '') {
    const countries = (await api.listLocations()).map((l) => l.country);
    contact.phone = callerPhone(said.phone, countries) ?? fail('bad_contact', { field: 'phone' });
  }
  if (said.email !== undefined && said.email.trim() !== '') {
    contact.email = normaliseEmail(said.email) ?? fail('bad_contact', { field: 'email' });
  }
  return contact;
}
