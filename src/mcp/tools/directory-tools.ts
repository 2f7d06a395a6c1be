import { z } from 'zod';
import { formatLocal, localDateAt } from '../../domain/time-format.ts';
import type { Service } from '../booking-api.ts';
import { type Place, placeOf, resolveLocation } from '../resolution.ts';
import { speakDate, speakDuration, speakPrice, speakTime } from '../speech.ts';
import { defineTool, READ_ONLY } from '../tool-spec.ts';
import { listed } from '../word-lists.ts';
import { protectionTerms } from './booking-terms.ts';

const Money = z.object({ amount: z.int(), currency: z.string() });
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

export const listLocationsTool = defineTool({
  name: 'list_locations',
  title: 'List locations',
  description:
    'Locations: address, phone, time zone, local date, weekday and time now. Tools take a location by slug ' +
    'or name, or none if there is one.',
  input: {},
  output: {
    locations: z.array(
      z.object({
        slug: z.string(),
        name: z.string(),
        address: z.string().nullable(),
        phone: z.string().nullable(),
        phone_spoken: z.string().nullable(),
        timezone: z.string(),
        booking_protection: z
          .boolean()
          .describe('true: bookings are taken only on its online booking page (book answers so).'),
        local_now: z.object({
          date: z.string(),
          weekday: z.string(),
          time: z.string(),
          iso: z.string().describe("Now, ISO 8601 with the location's offset."),
          spoken: z.string(),
        }),
      }),
    ),
  },
  annotations: READ_ONLY,
  async run(_args, { api }) {
    const now = api.now();
    const locations = await api.listLocations();
    return {
      locations: locations.map((location) => {
        const place = placeOf(location);
        const date = localDateAt(now, place.zone);
        const address = [location.street_address, location.city, location.postal_code].filter(Boolean);
        return {
          slug: location.slug,
          name: location.name,
          address: address.length > 0 ? address.join(', ') : null,
          phone: location.phone,
          phone_spoken: place.phoneSpoken,
          timezone: location.timezone,
          booking_protection: location.booking_protection_policy.applies,
          local_now: {
            date,
            weekday: WEEKDAYS[new Date(`${date}T00:00:00Z`).getUTCDay()]!,
            time: speakTime(now, place.zone, place.locale),
            iso: formatLocal(now, place.zone),
            spoken: `${speakDate(date, place.locale)}, ${speakTime(now, place.zone, place.locale)}`,
          },
        };
      }),
    };
  },
});

export const listServicesTool = defineTool({
  name: 'list_services',
  title: 'List services',
  description:
    "A location's services: duration, price, deposit, staff. in_person_only: not bookable by phone. " +
    'terms_spoken: deposit or card needed.',
  input: { location: z.string().optional() },
  output: {
    location: z.object({ slug: z.string(), name: z.string() }),
    services: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        category: z.string().nullable(),
        duration_minutes: z.int(),
        duration_spoken: z.string(),
        price: Money,
        price_spoken: z.string(),
        deposit: Money.nullable(),
        deposit_spoken: z.string().nullable(),
        staff: z.array(z.string()).describe('Names of who delivers it here.'),
      }),
    ),
    in_person_only: z.array(z.string()),
    card_required: z
      .boolean()
      .describe('Booking Protection: bookings here are finished online with a card on file.'),
    terms_spoken: z
      .string()
      .nullable()
      .describe('Deposits and card requirements in words, to tell the caller before booking.'),
  },
  annotations: READ_ONLY,
  failureMembers: ['choices'],
  async run(args, { api }) {
    const place = await resolveLocation(api, args.location);
    const services = await api.listServices(place.location.slug);
    const price = (money: { amount: number; currency: string }) =>
      speakPrice(money.amount, money.currency, place.locale);
    return {
      location: { slug: place.location.slug, name: place.location.name },
      services: services
        .filter((s) => s.online_bookable)
        .map((s) => ({
          id: s.id,
          name: s.name,
          category: s.category,
          duration_minutes: s.duration_minutes,
          duration_spoken: speakDuration(s.duration_minutes),
          price: s.price,
          price_spoken: price(s.price),
          deposit: s.deposit,
          deposit_spoken: s.deposit ? price(s.deposit) : null,
          staff: s.staff.map((member) => member.name),
        })),
      in_person_only: services.filter((s) => !s.online_bookable).map((s) => s.name),
      ...termsOf(
        place,
        services,
        place.location.booking_protection_policy.applies
          ? (await api.locationInfo(place.location.slug)).policy.cancellation_window_hours
          : null,
      ),
    };
  },
});

/** The location's booking terms over all its bookable services: which take a deposit, and a card on file. */
function termsOf(place: Place, services: readonly Service[], windowHours: number | null) {
  const protection = place.location.booking_protection_policy;
  const withDeposit = services.filter((s) => s.online_bookable && s.deposit !== null);
  const said: string[] = [];
  if (withDeposit.length > 0) {
    const each = withDeposit.map(
      (s) => `${s.name} (${speakPrice(s.deposit!.amount, s.deposit!.currency, place.locale)})`,
    );
    said.push(`A deposit is taken when booking ${listed(each)}; the booking is held until it is paid.`);
  }
  if (protection.applies) said.push(protectionTerms(protection, windowHours));
  return { card_required: protection.applies, terms_spoken: said.length > 0 ? said.join(' ') : null };
}
