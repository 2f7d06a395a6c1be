/**
 * One-salon catalogues in other zones, countries and currencies (design.md section 5 format), for
 * tests of what the tools read and say there. Every salon opens 9 to 6 Monday to Wednesday, Friday
 * and Saturday, and 7 am to 9 pm on Thursdays (so "8" is both 8 am and 8 pm inside its hours);
 * closed on Sundays. A cut costs 50 units and 50 minor units (checking how a price is said).
 */
export interface Salon {
  slug: string;
  prefix: string;
  timezone: string;
  country: string;
  currency: string;
  locale: string;
  city: string;
  phone: string;
}

export const NEW_YORK: Salon = {
  slug: 'manhattan-cuts',
  prefix: 'MC',
  timezone: 'America/New_York',
  country: 'US',
  currency: 'USD',
  locale: 'en-US',
  city: 'New York',
  phone: '+12125550100',
};

export const KATHMANDU: Salon = {
  slug: 'thamel-salon',
  prefix: 'TS',
  timezone: 'Asia/Kathmandu',
  country: 'NP',
  currency: 'NPR',
  locale: 'en-GB',
  city: 'Kathmandu',
  phone: '+97714123456',
};

export const SYDNEY: Salon = {
  slug: 'bondi-hair',
  prefix: 'BH',
  timezone: 'Australia/Sydney',
  country: 'AU',
  currency: 'AUD',
  locale: 'en-GB',
  city: 'Sydney',
  phone: '+61291234567',
};

export function salonCatalogue(salon: Salon) {
  const day = [['09:00', '18:00']];
  const hours = { mon: day, tue: day, wed: day, thu: [['07:00', '21:00']], fri: day, sat: day };
  const price = (amount: number) => ({ amount, currency: salon.currency });
  return {
    organisation: {
      slug: salon.slug,
      name: `${salon.city} salon`,
      currency: salon.currency,
      booking_reference_prefix: salon.prefix,
      locale: salon.locale,
    },
    locations: [
      {
        ref: 'main',
        slug: 'main',
        name: `${salon.city} main street`,
        timezone: salon.timezone,
        city: salon.city,
        country: salon.country,
        phone: salon.phone,
        active: true,
      },
    ],
    services: [
      { ref: 'cut', name: 'Cut', duration_minutes: 45, price: price(5050), locations: ['main'] },
      { ref: 'colour', name: 'Colour', duration_minutes: 90, price: price(9000), locations: ['main'] },
    ],
    staff: [
      { ref: 'kim', name: 'Kim Lee', services: ['cut', 'colour'], working_hours: { main: hours } },
      { ref: 'sam', name: 'Sam Rai', services: ['cut'], working_hours: { main: hours } },
    ],
  };
}
