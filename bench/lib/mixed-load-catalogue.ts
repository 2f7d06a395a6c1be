/**
 * The salon the mixed load runs against, in the catalogue import format: one London location open
 * every day 08:00 to 20:00, 30 staff who each deliver all four services (15 to 60 minutes, two with a
 * buffer), and regular clients with phones. Large enough that the diaries do not fill up in a minute
 * of bookings, so booking attempts keep a realistic mix of successes and taken slots.
 */
export const MIXED_LOAD = {
  organisation: 'mixed-load-salon',
  location: 'central',
  timezone: 'Europe/London',
  staff: 30,
  clients: 200,
  /** Bookings and searches fall on the days from 2 to 2 + searchDays days ahead (real clock). */
  searchDays: 40,
} as const;

const WEEK = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;

export const MIXED_LOAD_SERVICES = [
  { ref: 'trim', name: 'Trim', duration_minutes: 15, buffer_after_minutes: 0, price: 1500 },
  { ref: 'cut', name: 'Cut', duration_minutes: 30, buffer_after_minutes: 5, price: 3000 },
  {
    ref: 'cut-and-dry',
    name: 'Cut and blow-dry',
    duration_minutes: 45,
    buffer_after_minutes: 0,
    price: 4500,
  },
  { ref: 'colour', name: 'Colour', duration_minutes: 60, buffer_after_minutes: 10, price: 7000 },
] as const;

/** The phone of regular client i (0-based), as stored (E.164). */
export function regularPhone(i: number): string {
  return `+4479110${String(i).padStart(5, '0')}`;
}

export function mixedLoadCatalogue() {
  const { organisation, location, timezone } = MIXED_LOAD;
  return {
    organisation: {
      slug: organisation,
      name: 'Mixed Load Salon',
      currency: 'GBP',
      booking_reference_prefix: 'ML',
      locale: 'en-GB',
    },
    locations: [
      {
        ref: location,
        slug: location,
        name: 'Central',
        timezone,
        street_address: '1 High Street',
        city: 'London',
        postal_code: 'W1A 1AA',
        country: 'GB',
        phone: '+442071230002',
        active: true,
        policy: { slot_interval_minutes: 15, min_notice_minutes: 60, max_advance_days: 60 },
      },
    ],
    services: MIXED_LOAD_SERVICES.map((service) => ({
      ref: service.ref,
      name: service.name,
      category: 'Hair',
      duration_minutes: service.duration_minutes,
      buffer_after_minutes: service.buffer_after_minutes,
      price: { amount: service.price, currency: 'GBP' },
      locations: [location],
    })),
    staff: Array.from({ length: MIXED_LOAD.staff }, (_, i) => ({
      ref: `stylist-${String(i).padStart(2, '0')}`,
      name: `Stylist ${String(i + 1).padStart(2, '0')}`,
      services: MIXED_LOAD_SERVICES.map((service) => service.ref),
      working_hours: { [location]: Object.fromEntries(WEEK.map((day) => [day, [['08:00', '20:00']]])) },
    })),
    clients: Array.from({ length: MIXED_LOAD.clients }, (_, i) => ({
      ref: `regular-${i}`,
      first_name: 'Regular',
      last_name: `Client ${i}`,
      phone: regularPhone(i),
      email: null,
    })),
  };
}
