/**
 * One business in two countries (issue 44): a salon in London (GB, Europe/London) and one in Kathmandu
 * (NP, Asia/Kathmandu, UTC+05:45), the same services at both but a head massage only in Kathmandu, and
 * a beard trim only in London. Sita works in Kathmandu Sunday to Friday, Ram in Kathmandu on Monday to
 * Wednesday and in London on Thursday and Friday; Lucy only in London, Monday to Saturday.
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

const DAY = [
  ['09:00', '12:30'],
  ['13:30', '18:00'],
];
const hours = (days: string[]) => Object.fromEntries(days.map((day) => [day, DAY]));

const location = (
  slug: string,
  name: string,
  timezone: string,
  country: string,
  city: string,
  phone: string,
) => ({
  ref: slug,
  slug,
  name,
  timezone,
  street_address: '1 Main Street',
  city,
  postal_code: '00000',
  country,
  phone,
  active: true,
  closures: [],
  policy: POLICY,
  booking_protection: NO_PROTECTION,
});

export const TWO_COUNTRIES = {
  organisation: {
    slug: 'everest-thames',
    name: 'Everest & Thames Hair',
    currency: 'GBP',
    booking_reference_prefix: 'ETH',
    locale: 'en-GB',
  },
  locations: [
    location('london', 'Everest & Thames London', 'Europe/London', 'GB', 'London', '+442071234000'),
    location('kathmandu', 'Everest & Thames Kathmandu', 'Asia/Kathmandu', 'NP', 'Kathmandu', '+97714412345'),
  ],
  services: [
    { ref: 'cut', name: 'Haircut', minutes: 30, price: 3000, locations: ['london', 'kathmandu'] },
    { ref: 'massage', name: 'Head massage', minutes: 30, price: 2000, locations: ['kathmandu'] },
    { ref: 'beard', name: 'Beard trim', minutes: 15, price: 1500, locations: ['london'] },
  ].map((s) => ({
    ref: s.ref,
    name: s.name,
    category: 'Hair',
    duration_minutes: s.minutes,
    buffer_after_minutes: 0,
    price: { amount: s.price, currency: 'GBP' },
    deposit: null,
    online_bookable: true,
    locations: s.locations,
  })),
  staff: [
    {
      ref: 'sita',
      name: 'Sita Sharma',
      services: ['cut', 'massage'],
      working_hours: { kathmandu: hours(['sun', 'mon', 'tue', 'wed', 'thu', 'fri']) },
    },
    {
      ref: 'ram',
      name: 'Ram Thapa',
      services: ['cut', 'massage', 'beard'],
      working_hours: { kathmandu: hours(['mon', 'tue', 'wed']), london: hours(['thu', 'fri']) },
    },
    {
      ref: 'lucy',
      name: 'Lucy Hale',
      services: ['cut', 'beard'],
      working_hours: { london: hours(['mon', 'tue', 'wed', 'thu', 'fri', 'sat']) },
    },
  ].map((s) => ({ ...s, active: true, time_off: [] })),
  clients: [
    {
      ref: 'marcus',
      first_name: 'Marcus',
      last_name: 'Bell',
      phone: '+447911123999',
      email: null,
      marketing_consent: false,
    },
  ],
  bookings: [],
};
