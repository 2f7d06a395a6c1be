/**
 * Small catalogues for tests, in the import format of design.md section 5. Each call returns a fresh
 * object, so a test can edit its copy freely.
 */
export interface FixtureOptions {
  slug?: string;
  /** How many extra generated services to add at the first location (for pagination walks). */
  extraServices?: number;
  prefix?: string;
}

export function smallCatalogue(options: FixtureOptions = {}) {
  const slug = options.slug ?? 'acme-hair';
  const extra = Array.from({ length: options.extraServices ?? 0 }, (_, i) => ({
    ref: `extra-${i}`,
    // Names deliberately collide in groups, so ordering must fall back to ids.
    name: `Treatment ${String(Math.floor(i / 3)).padStart(3, '0')}`,
    duration_minutes: 30,
    price: { amount: 1000 + i, currency: 'GBP' },
    locations: ['soho'],
  }));
  return {
    organisation: {
      slug,
      name: `Org ${slug}`,
      currency: 'GBP',
      booking_reference_prefix: options.prefix ?? 'AC',
      locale: 'en-GB',
    },
    locations: [
      {
        ref: 'soho',
        slug: 'soho',
        name: 'Soho',
        timezone: 'Europe/London',
        street_address: '1 Dean Street',
        city: 'London',
        postal_code: 'W1D 3RB',
        country: 'GB',
        phone: '+442071234567',
        active: true,
        booking_protection: {
          applies: false,
          late_cancellation_fee_percentage: null,
          no_show_fee_percentage: null,
        },
      },
      {
        ref: 'kings-cross',
        slug: 'kings-cross',
        name: 'Kings Cross',
        timezone: 'Europe/London',
        phone: null,
        active: true,
        booking_protection: {
          applies: true,
          late_cancellation_fee_percentage: 50,
          no_show_fee_percentage: 100,
        },
      },
      {
        ref: 'closed',
        slug: 'closed-branch',
        name: 'Closed branch',
        timezone: 'Europe/London',
        active: false,
      },
    ],
    services: [
      {
        ref: 'cut',
        name: 'Cut',
        aliases: ['Haircut', 'trim'],
        category: 'Hair',
        duration_minutes: 45,
        buffer_after_minutes: 15,
        price: { amount: 4000, currency: 'GBP' },
        locations: ['soho', 'kings-cross'],
        overrides: { 'kings-cross': { duration_minutes: 60, price: { amount: 4500, currency: 'GBP' } } },
      },
      {
        ref: 'colour',
        name: 'Colour',
        category: 'Colour',
        duration_minutes: 90,
        price: { amount: 9000, currency: 'GBP' },
        deposit: { amount: 2000, currency: 'GBP' },
        locations: ['soho'],
      },
      {
        ref: 'patch-test',
        name: 'Patch test',
        duration_minutes: 10,
        price: { amount: 0, currency: 'GBP' },
        online_bookable: false,
        locations: ['soho'],
      },
      ...extra,
    ],
    staff: [
      {
        ref: 'ana',
        name: 'Ana',
        aliases: ['Annie'],
        services: ['cut', 'colour', 'patch-test'],
        working_hours: { soho: { mon: [['09:00', '17:00']], tue: [['09:00', '17:00']] } },
      },
      {
        ref: 'bo',
        name: 'Bo',
        services: ['cut'],
        working_hours: { soho: { wed: [['10:00', '18:00']] }, 'kings-cross': { thu: [['10:00', '18:00']] } },
      },
      {
        ref: 'cy',
        name: 'Cy',
        active: false,
        services: ['cut'],
        working_hours: { soho: { fri: [['09:00', '12:00']] } },
      },
    ],
    clients: [
      {
        ref: 'jo',
        first_name: 'Jo',
        last_name: 'Bloggs',
        phone: '+447911123456',
        email: 'jo@example.com',
        marketing_consent: false,
      },
    ],
  };
}

/**
 * Night Cuts: one London barber, Kit, who trims (30 minutes) on Sunday nights from midnight to
 * `sundayUntil`, the hours the clocks change in; optionally with busy calendars and clients.
 */
export function nightBarberCatalogue(options: {
  sundayUntil: string;
  busyCalendars?: string[];
  clients?: { ref: string; first_name: string; last_name: string; phone: string }[];
}) {
  return {
    organisation: {
      slug: 'night-cuts',
      name: 'Night Cuts',
      currency: 'GBP',
      booking_reference_prefix: 'NC',
      locale: 'en-GB',
    },
    locations: [
      {
        ref: 'soho',
        slug: 'soho',
        name: 'Soho',
        timezone: 'Europe/London',
        phone: '+442071234567',
        active: true,
        policy: { slot_interval_minutes: 30, min_notice_minutes: 0, max_advance_days: 60 },
        booking_protection: {
          applies: false,
          late_cancellation_fee_percentage: null,
          no_show_fee_percentage: null,
        },
      },
    ],
    services: [
      {
        ref: 'trim',
        name: 'Trim',
        duration_minutes: 30,
        price: { amount: 2000, currency: 'GBP' },
        locations: ['soho'],
      },
    ],
    staff: [
      {
        ref: 'kit',
        name: 'Kit',
        services: ['trim'],
        working_hours: { soho: { sun: [['00:00', options.sundayUntil]] } },
        ...(options.busyCalendars && { busy_calendars: options.busyCalendars }),
      },
    ],
    clients: options.clients ?? [],
  };
}
