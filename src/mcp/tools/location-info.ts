import { z } from 'zod';
import { counted } from '../../domain/counted.ts';
import type { LocationInfo } from '../booking-api.ts';
import { holdNoticeAt } from '../hold-notice.ts';
import { type Place, resolveLocation } from '../resolution.ts';
import { speakDate, speakNotice, speakPrice } from '../speech.ts';
import { speakWeeklyHours, speakWindow } from '../spoken-hours.ts';
import { defineTool, READ_ONLY } from '../tool-spec.ts';
import { listed } from '../word-lists.ts';
import { protectionTerms } from './booking-terms.ts';

export const getLocationInfoTool = defineTool({
  name: 'get_location_info',
  title: 'About a location',
  description:
    'Address, phone, opening hours, closures (next 60 days), deposit or card terms and cancellation policy, ' +
    'in words to read out.',
  input: { location: z.string().optional() },
  output: {
    location: z.object({ slug: z.string(), name: z.string(), timezone: z.string() }),
    address: z.string().nullable(),
    phone: z.string().nullable(),
    phone_spoken: z.string().nullable(),
    opening_hours: z
      .array(
        z.object({
          weekday: z.string(),
          intervals: z.array(z.object({ start: z.string(), end: z.string() })),
        }),
      )
      .describe('Per weekday from Monday, local HH:MM.'),
    opening_hours_spoken: z.string(),
    closures: z.array(z.object({ date: z.string(), reason: z.string().nullable(), spoken: z.string() })),
    deposits_spoken: z.string().nullable(),
    card_required: z.boolean(),
    policy_spoken: z.string().describe('Cancellations and changes, notice and how far ahead, in words.'),
  },
  annotations: READ_ONLY,
  failureMembers: ['choices'],
  async run(args, { api }) {
    const place = await resolveLocation(api, args.location);
    const info = await api.locationInfo(place.location.slug);
    const address = [info.street_address, info.city, info.postal_code].filter(Boolean);
    return {
      location: { slug: info.slug, name: info.name, timezone: info.timezone },
      address: address.length > 0 ? address.join(', ') : null,
      phone: info.phone,
      phone_spoken: place.phoneSpoken,
      opening_hours: info.opening_hours,
      opening_hours_spoken: speakWeeklyHours(info.opening_hours, place.locale),
      closures: info.closures.map((c) => ({
        ...c,
        spoken: `${speakDate(c.date, place.locale, info.today)}${c.reason ? ` (${c.reason})` : ''}`,
      })),
      deposits_spoken: depositsSpoken(info, place),
      card_required: info.booking_protection_policy.applies,
      policy_spoken: policySpoken(info),
    };
  },
});

function depositsSpoken(info: LocationInfo, place: Place): string | null {
  if (info.deposits.length === 0) return null;
  const each = info.deposits.map(
    (d) => `${d.service_name} (${speakPrice(d.deposit.amount, d.deposit.currency, place.locale)})`,
  );
  return `A deposit is taken when booking ${listed(each)}.`;
}

/**
 * The policy as a receptionist explains it: "Cancellations or changes less than 24 hours before the
 * appointment are late: a paid deposit is then kept, and late changes are not possible. Bookings
 * need an hour's notice and are taken up to 90 days ahead." A booking that waits for its deposit or card
 * may need more ("...; bookings that need a deposit paid first need 15 minutes' notice"), as a too_soon
 * refusal of one says.
 */
function policySpoken(info: LocationInfo): string {
  const { policy } = info;
  const window = speakWindow(policy.cancellation_window_hours);
  const late: string[] = [];
  late.push(
    policy.late_cancellation === 'forbid'
      ? 'a late cancellation is not possible'
      : 'a late cancellation is possible, but a paid deposit is kept',
  );
  late.push(
    policy.late_reschedule === 'forbid'
      ? 'a late change of time is not possible'
      : 'the time can still be changed',
  );
  const said = [
    `Cancelling or changing less than ${window} before the appointment is late: ${listed(late)}.`,
    `Earlier, a paid deposit is refunded.`,
  ];
  if (info.booking_protection_policy.applies) said.push(protectionTerms(info.booking_protection_policy));
  const held = holdNoticeAt(info);
  said.push(
    `Bookings need ${speakNotice(policy.min_notice_minutes)} and are taken up to ${counted(policy.max_advance_days, 'day')} ahead` +
      `${held ? `; bookings that need ${held.needing} need ${speakNotice(held.minutes)}` : ''}.`,
  );
  return said.join(' ');
}
