/**
 * Three small businesses far from London, for calls played in other zones and locales: a barber in
 * New York (en-US, dollars, DST on the first Sunday of November), a salon in Sydney (en-GB speech,
 * Australian dollars, summer time UTC+11 in November) and one in Kathmandu (UTC+05:45, Nepalese
 * rupees with paisa). Each has one location, two services (one with a price in minor units), two
 * staff and a client on file.
 */

const POLICY = {
  slot_interval_minutes: 15,
  min_notice_minutes: 60,
  max_advance_days: 60,
  cancellation_window_hours: 24,
  late_cancellation: 'allow',
  late_reschedule: 'allow',
};

const NO_PROTECTION = {
  applies: false,
  late_cancellation_fee_percentage: null,
  no_show_fee_percentage: null,
};

interface World {
  slug: string;
  name: string;
  prefix: string;
  currency: string;
  locale: string;
  location: { slug: string; name: string; timezone: string; country: string; city: string; phone: string };
  services: { ref: string; name: string; minutes: number; price: number; aliases?: string[] }[];
  staff: { ref: string; name: string; days: string[] }[];
  client: { first_name: string; last_name: string; phone: string };
}

function catalogue(world: World): unknown {
  const hours = (days: string[]) =>
    Object.fromEntries(
      days.map((day) => [
        day,
        [
          ['09:00', '12:30'],
          ['13:30', '18:00'],
        ],
      ]),
    );
  return {
    organisation: {
      slug: world.slug,
      name: world.name,
      currency: world.currency,
      booking_reference_prefix: world.prefix,
      locale: world.locale,
    },
    locations: [
      {
        ref: world.location.slug,
        slug: world.location.slug,
        name: world.location.name,
        timezone: world.location.timezone,
        street_address: '1 Main Street',
        city: world.location.city,
        postal_code: '00000',
        country: world.location.country,
        phone: world.location.phone,
        active: true,
        closures: [],
        policy: POLICY,
        booking_protection: NO_PROTECTION,
      },
    ],
    services: world.services.map((s) => ({
      ref: s.ref,
      name: s.name,
      category: 'Hair',
      duration_minutes: s.minutes,
      buffer_after_minutes: 0,
      price: { amount: s.price, currency: world.currency },
      deposit: null,
      online_bookable: true,
      locations: [world.location.slug],
      ...(s.aliases && { aliases: s.aliases }),
    })),
    staff: world.staff.map((s) => ({
      ref: s.ref,
      name: s.name,
      active: true,
      services: world.services.map((service) => service.ref),
      working_hours: { [world.location.slug]: hours(s.days) },
      time_off: [],
    })),
    clients: [{ ref: 'regular', ...world.client, email: null, marketing_consent: false }],
    bookings: [],
  };
}

export const NEW_YORK = catalogue({
  slug: 'brooklyn-barbers',
  name: 'Brooklyn Barbers',
  prefix: 'BKB',
  currency: 'USD',
  locale: 'en-US',
  location: {
    slug: 'park-slope',
    name: 'Park Slope',
    timezone: 'America/New_York',
    country: 'US',
    city: 'Brooklyn',
    phone: '+17185550100',
  },
  services: [
    { ref: 'cut', name: "Men's cut", minutes: 30, price: 4250 },
    { ref: 'shave', name: 'Hot towel shave', minutes: 30, price: 3500, aliases: ['shave', 'wet shave'] },
  ],
  staff: [
    { ref: 'marco', name: 'Marco Rossi', days: ['mon', 'tue', 'wed', 'thu', 'fri'] },
    { ref: 'dana', name: 'Dana Lee', days: ['tue', 'thu', 'sat'] },
  ],
  client: { first_name: 'Chris', last_name: 'Moore', phone: '+17185550199' },
});

export const SYDNEY = catalogue({
  slug: 'bondi-beauty',
  name: 'Bondi Beauty',
  prefix: 'BB',
  currency: 'AUD',
  locale: 'en-AU',
  location: {
    slug: 'bondi',
    name: 'Bondi Beach',
    timezone: 'Australia/Sydney',
    country: 'AU',
    city: 'Sydney',
    phone: '+61293650100',
  },
  services: [
    { ref: 'cut', name: 'Cut and style', minutes: 45, price: 8950 },
    { ref: 'brows', name: 'Brow shape', minutes: 15, price: 3000 },
  ],
  staff: [
    { ref: 'mia', name: 'Mia Nguyen', days: ['mon', 'tue', 'wed', 'thu', 'fri'] },
    { ref: 'jack', name: 'Jack Smith', days: ['wed', 'thu', 'fri', 'sat'] },
  ],
  client: { first_name: 'Olivia', last_name: 'Brown', phone: '+61412345678' },
});

export const KATHMANDU = catalogue({
  slug: 'thamel-salon',
  name: 'Thamel Salon',
  prefix: 'TS',
  currency: 'NPR',
  locale: 'en-GB',
  location: {
    slug: 'thamel',
    name: 'Thamel',
    timezone: 'Asia/Kathmandu',
    country: 'NP',
    city: 'Kathmandu',
    phone: '+97714412345',
  },
  services: [
    { ref: 'cut', name: 'Haircut', minutes: 30, price: 50050 },
    { ref: 'massage', name: 'Head massage', minutes: 30, price: 80000 },
  ],
  staff: [
    { ref: 'sita', name: 'Sita Sharma', days: ['sun', 'mon', 'tue', 'wed', 'thu', 'fri'] },
    { ref: 'ram', name: 'Ram Thapa', days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat'] },
  ],
  client: { first_name: 'Anil', last_name: 'Rai', phone: '+9779841234567' },
});
