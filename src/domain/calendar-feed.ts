import type { BookingStatus } from './booking/state-machine.ts';
import { contentLines, escapeText, utcDateTime } from './icalendar-text.ts';

/**
 * A staff member's private iCalendar feed (design.md 9.6): one VEVENT per booking of theirs that is
 * still on (live, or it took place), as a subscribed calendar (Google, Apple, Outlook) expects it:
 * a UID that stays with the booking however it moves, SEQUENCE / LAST-MODIFIED / DTSTAMP that go up
 * with each change, times as UTC instants (every client shows them in its own zone), and no more of
 * the client than the first name (the feed is a link that may end up on a phone or a shared screen).
 */

/** How far back and ahead the feed reaches. */
export const FEED_DAYS_BACK = 60;
export const FEED_DAYS_AHEAD = 365;

/** What the feed shows of a booking. */
export interface FeedBooking {
  id: string;
  reference: string;
  status: BookingStatus;
  startsAt: number;
  endsAt: number;
  serviceNames: readonly string[];
  clientFirstName: string;
  locationName: string;
  createdAt: number;
  updatedAt: number;
  /** How many changes the booking's event log holds after its creation (0 for one never changed). */
  revisions: number;
}

export interface FeedCalendar {
  /** The calendar's name in the subscriber's list: the staff member's and organisation's names. */
  name: string;
  bookings: readonly FeedBooking[];
}

/** Statuses a feed shows: live ones and those that took place; cancelled and expired ones are gone. */
export const FEED_STATUSES: readonly BookingStatus[] = [
  'pending_payment',
  'pending_confirmation',
  'confirmed',
  'needs_checkout',
  'completed',
  'no_show',
];

/** A hold not yet confirmed shows as TENTATIVE; the rest took place or will. */
function eventStatus(status: BookingStatus): 'TENTATIVE' | 'CONFIRMED' {
  return status === 'pending_payment' || status === 'pending_confirmation' ? 'TENTATIVE' : 'CONFIRMED';
}

/**
 * SEQUENCE must go up with every revision (RFC 5545 3.8.7.4), however soon one follows another: a
 * booking moved within the second it was made or last changed is a new revision too. It is the
 * seconds between created_at and updated_at (which only go up, and are what feeds served before
 * counted: no event's SEQUENCE goes down) plus the changes the booking's event log holds after its
 * creation, one more with each change. It fits the 31 bits a SEQUENCE is read into for 68 years.
 */
export function sequenceOf(booking: Pick<FeedBooking, 'createdAt' | 'updatedAt' | 'revisions'>): number {
  return Math.max(0, Math.floor((booking.updatedAt - booking.createdAt) / 1000)) + booking.revisions;
}

const UTC_TIME_ZONE = [
  'BEGIN:VTIMEZONE',
  'TZID:UTC',
  'BEGIN:STANDARD',
  'DTSTART:19700101T000000',
  'TZOFFSETFROM:+0000',
  'TZOFFSETTO:+0000',
  'TZNAME:UTC',
  'END:STANDARD',
  'END:VTIMEZONE',
];

/** The feed as an iCalendar stream (text/calendar), CRLF lines folded at 75 octets. */
export function writeFeed(calendar: FeedCalendar): string {
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//booking-engine//calendar feed//EN',
    'CALSCALE:GREGORIAN',
    'METHOD:PUBLISH',
    `X-WR-CALNAME:${escapeText(calendar.name)}`,
    // How often a subscriber should ask again (RFC 7986; Apple's and Outlook's own name for it).
    'REFRESH-INTERVAL;VALUE=DURATION:PT15M',
    'X-PUBLISHED-TTL:PT15M',
  ];
  for (const b of calendar.bookings) {
    const summary = `${b.serviceNames.join(', ')} – ${b.clientFirstName}`;
    lines.push(
      'BEGIN:VEVENT',
      // The booking's id (a UUID) alone, as RFC 7986 asks: the same whichever name the feed is fetched
      // under (a host part taken from the request made one booking two events for a subscriber
      // reaching the server by two names).
      `UID:${b.id}`,
      `DTSTAMP:${utcDateTime(b.updatedAt)}`,
      `CREATED:${utcDateTime(b.createdAt)}`,
      `LAST-MODIFIED:${utcDateTime(b.updatedAt)}`,
      `SEQUENCE:${sequenceOf(b)}`,
      `DTSTART:${utcDateTime(b.startsAt)}`,
      `DTEND:${utcDateTime(b.endsAt)}`,
      `SUMMARY:${escapeText(summary)}`,
      `LOCATION:${escapeText(b.locationName)}`,
      `DESCRIPTION:${escapeText(`Booking ${b.reference}`)}`,
      `STATUS:${eventStatus(b.status)}`,
      'TRANSP:OPAQUE',
      'END:VEVENT',
    );
  }
  // RFC 5545 3.6: a calendar holds at least one component, and a stricter client refuses one with
  // none, as a new staff member's first feed was. A definition of UTC, the zone every time here is
  // in, is the one component that shows nothing (Outlook's and Google's empty calendars hold a zone).
  if (calendar.bookings.length === 0) lines.push(...UTC_TIME_ZONE);
  lines.push('END:VCALENDAR');
  return contentLines(lines);
}
