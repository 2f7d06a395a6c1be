import type { Availability, Booking, BookingApi, Staff } from './booking-api.ts';
import { type Place, placeOfSlug } from './resolution.ts';
import { speakDateTime, spellReference } from './speech.ts';
import type { SpokenSlot } from './tool-kit.ts';

/** A booking as an agent reads it out: names instead of ids, and the words for its time and reference. */
export interface BookingSummary {
  reference: string;
  reference_spoken: string;
  status: string;
  location_slug: string;
  location_name: string;
  service_names: string[];
  staff_name: string;
  starts_at: string;
  ends_at: string;
  /** "Cut & blow-dry with Amara Okafor at Northside Camden, tomorrow, Tuesday 24 November at 2:30 pm". */
  spoken: string;
}

/** Summaries of bookings (at any of the organisation's locations), in the order given. */
export async function summarise(api: BookingApi, bookings: readonly Booking[]): Promise<BookingSummary[]> {
  const now = api.now();
  const names = new Map<
    string,
    Promise<{ place: Place; services: Map<string, string>; staff: Map<string, string> }>
  >();
  const namesAt = (slug: string) => {
    let entry = names.get(slug);
    if (!entry) {
      entry = (async () => {
        const [place, services, staff] = await Promise.all([
          placeOfSlug(api, slug),
          api.listServices(slug),
          api.listStaff(slug),
        ]);
        return {
          place,
          services: new Map(services.map((s) => [s.id, s.name])),
          staff: new Map(staff.map((s) => [s.id, s.name])),
        };
      })();
      names.set(slug, entry);
    }
    return entry;
  };
  return Promise.all(
    bookings.map(async (booking) => {
      const { place, services, staff } = await namesAt(booking.location_slug);
      const serviceNames = booking.service_ids.map((id) => services.get(id) ?? 'a service');
      const staffName = staff.get(booking.staff_id) ?? 'a member of staff';
      const when = speakDateTime(Date.parse(booking.starts_at), place.zone, place.locale, now);
      return {
        reference: booking.reference,
        reference_spoken: spellReference(booking.reference),
        status: booking.status,
        location_slug: booking.location_slug,
        location_name: place.location.name,
        service_names: serviceNames,
        staff_name: staffName,
        starts_at: booking.starts_at,
        ends_at: booking.ends_at,
        spoken: `${listed(serviceNames)} with ${staffName} at ${place.location.name}, ${when}`,
      };
    }),
  );
}

/** Availability's slots with the staff member's name and the words for each start. */
export function spokenSlots(
  slots: Availability['slots'],
  place: Place,
  staff: readonly Staff[],
  now: number,
): SpokenSlot[] {
  const names = new Map(staff.map((s) => [s.id, s.name]));
  return slots.map((slot) => ({
    starts_at: slot.starts_at,
    ends_at: slot.ends_at,
    staff_id: slot.staff_id,
    staff_name: names.get(slot.staff_id) ?? 'a member of staff',
    spoken: speakDateTime(Date.parse(slot.starts_at), place.zone, place.locale, now),
  }));
}

/**
 * Up to `count` slots nearest to `target` (epoch ms), in time order: what to offer instead, or out of
 * many. Slots at least `gapMinutes` apart are preferred, so that the choices read aloud differ
 * ("12, 12:30 or 1" rather than "12, 12:15 or 12:30"); closer ones fill up when there are too few.
 */
export function nearest<S extends { starts_at: string }>(
  slots: readonly S[],
  target: number,
  count: number,
  gapMinutes = 0,
): S[] {
  const gap = gapMinutes * 60_000;
  const byDistance = [...slots].sort(
    (a, b) => Math.abs(Date.parse(a.starts_at) - target) - Math.abs(Date.parse(b.starts_at) - target),
  );
  const picked: S[] = [];
  for (const slot of byDistance) {
    if (picked.length === count) break;
    const start = Date.parse(slot.starts_at);
    if (picked.every((p) => Math.abs(Date.parse(p.starts_at) - start) >= gap)) picked.push(slot);
  }
  for (const slot of byDistance) {
    if (picked.length === count) break;
    if (!picked.includes(slot)) picked.push(slot);
  }
  return picked.sort((a, b) => Date.parse(a.starts_at) - Date.parse(b.starts_at));
}

export function listed(names: readonly string[]): string {
  if (names.length <= 1) return names[0] ?? '';
  return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}
