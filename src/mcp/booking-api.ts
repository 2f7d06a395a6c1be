import type { z } from 'zod';
import type { AvailabilityResource } from '../contract/availability.ts';
import type {
  BookingResource,
  CancellationResource,
  CreatedBookingResource,
  NewBookingBody,
  RescheduledBookingResource,
} from '../contract/booking.ts';
import type { ClientResource, NewClientBody, UsualResource } from '../contract/client.ts';
import type { LocationResource } from '../contract/location.ts';
import type { LocationInfoResource } from '../contract/location-info.ts';
import type { MessageResource, NewMessageBody } from '../contract/message.ts';
import type { LinkSent } from '../contract/outbox.ts';
import type { ServiceResource } from '../contract/service.ts';
import type { StaffResource } from '../contract/staff.ts';
import type { NewWaitlistEntryBody, WaitlistEntryResource } from '../contract/waitlist.ts';
import { AppError } from '../domain/errors.ts';
import type { OutboxChannel } from '../domain/outbox.ts';

/**
 * A refusal `createBooking` did not make now: the answer stored under the Idempotency-Key when the same
 * request was refused before, which REST replays for 24 hours (with Idempotent-Replayed: true). What
 * it said (the slot taken, too soon) may no longer hold.
 */
export class ReplayedRefusal extends AppError {
  override readonly name = 'ReplayedRefusal';
}

export type Location = LocationResource;
export type Service = ServiceResource;
export type Staff = StaffResource;
export type Availability = z.infer<typeof AvailabilityResource>;
export type Client = z.infer<typeof ClientResource>;
export type Usual = z.infer<typeof UsualResource>;
export type Booking = z.infer<typeof BookingResource>;
export type { LinkSent };
export type CreatedBooking = z.infer<typeof CreatedBookingResource>;
export type RescheduledBooking = z.infer<typeof RescheduledBookingResource>;
export type Cancellation = z.infer<typeof CancellationResource>;
export type LocationInfo = LocationInfoResource;
export type Message = z.infer<typeof MessageResource>;
export type NewMessage = z.input<typeof NewMessageBody>;
export type WaitlistEntry = z.infer<typeof WaitlistEntryResource>;
export type NewWaitlistEntry = z.input<typeof NewWaitlistEntryBody>;
export type NewBooking = z.input<typeof NewBookingBody>;
export type NewClient = z.input<typeof NewClientBody>;

export type ChangeScope = 'one' | 'following';
export interface RescheduleChange {
  starts_at: string;
  staff_id?: string;
  dry_run?: boolean;
  scope?: ChangeScope;
}
export interface CancelOptions {
  reason?: string;
  dryRun?: boolean;
  scope?: ChangeScope;
}

export interface AvailabilityRequest {
  serviceIds: string[];
  date: string;
  days: number;
  staffId?: string | undefined;
}

/**
 * What the MCP tools can ask of one organisation's booking engine: the REST API's operations, in the
 * REST API's representations, so the tools read the same whether the engine is in this process
 * (`InProcessBookingApi`, for `booking serve` and `booking mcp`) or a remote instance reached over
 * HTTPS (`HttpBookingApi`, for `booking mcp --base-url`).
 *
 * Failures are AppErrors with the contract's codes (a rate-limited call carries `retryAfterSeconds` in
 * its details), whichever side produced them.
 */
export interface BookingApi {
  /**
   * The current instant: the engine's clock in process (injected in tests), this machine's over HTTP.
   * The tools use it only for wording ("today", "tomorrow") and to tell a past start from a taken one.
   */
  now(): number;
  listLocations(): Promise<Location[]>;
  /**
   * The location a booking is at, active or not: a location made inactive takes no bookings, but its
   * bookings are still read, named and cancelled (404 not_found where this API cannot see it).
   */
  bookingLocation(locationSlug: string): Promise<Location>;
  /** Every service offered at the location, bookable online or not. */
  listServices(locationSlug: string): Promise<Service[]>;
  listStaff(locationSlug: string): Promise<Staff[]>;
  /** Opening hours, closures ahead, deposits, Booking Protection and the policy of a location. */
  locationInfo(locationSlug: string): Promise<LocationInfo>;
  availability(locationSlug: string, request: AvailabilityRequest): Promise<Availability>;
  /** The client with this phone (E.164) or e-mail; null when none. */
  findClient(contact: { phone?: string; email?: string }): Promise<Client | null>;
  registerClient(client: NewClient): Promise<{ client: Client; created: boolean }>;
  /** The client with this id (404 not_found when there is none). */
  getClient(clientId: string): Promise<Client>;
  /**
   * The countries the organisation texts (its locations' and its policies'), for saying where a
   * message goes; null where this API cannot tell (over HTTP: every phone is said, and the server
   * texts only those it may).
   */
  textedCountries(): Promise<ReadonlySet<string> | null>;
  /**
   * The channels this server has a provider for (none: it keeps every message as logged, the demo's
   * way), for saying where a message goes; null where this API cannot tell (over HTTP).
   */
  messageChannels(): Promise<ReadonlySet<OutboxChannel> | null>;
  upcomingBookings(clientId: string): Promise<Booking[]>;
  /** GET /clients/{id}/usual: their last service, stylist, location and interval, or null. */
  clientUsual(clientId: string): Promise<Usual | null>;
  /** The client's live booking at this location starting at this instant (RFC 3339), if any. */
  liveBookingAt(clientId: string, locationSlug: string, startsAt: string): Promise<Booking | undefined>;
  /**
   * Books as MCP `book` does, with this Idempotency-Key: POST /bookings, or at a location with Booking
   * Protection its pending_confirmation hold for the booking page (in process the booking use case's
   * hostedFlow; over HTTP POST /bookings/protected-holds). The same key and body answer with the same
   * booking; `replayed` says the answer was stored earlier (nothing was booked now). A refusal stored
   * under the key is thrown as a ReplayedRefusal, with its reason and details.
   */
  createBooking(
    booking: NewBooking,
    idempotencyKey: string,
  ): Promise<{ booking: CreatedBooking; replayed: boolean }>;
  getBooking(reference: string): Promise<Booking>;
  /**
   * PATCH /bookings/{reference}; with dry_run nothing changes (the booking as it would be); with scope
   * following the later occurrences of its series move too.
   */
  rescheduleBooking(reference: string, change: RescheduleChange): Promise<RescheduledBooking>;
  /** POST /bookings/{reference}/cancel; with dryRun nothing changes (what the cancellation would be). */
  cancelBooking(reference: string, options?: CancelOptions): Promise<Cancellation>;
  /** GET /bookings?series_id=: the occurrences of a series in time order. */
  seriesBookings(seriesId: string): Promise<Booking[]>;
  /** POST /messages: a message for staff. */
  takeMessage(message: NewMessage): Promise<Message>;
  /** POST /waitlist. */
  joinWaitlist(entry: NewWaitlistEntry): Promise<WaitlistEntry>;
  /**
   * The waiting entry a time offered from the waitlist (a hold not claimed yet) was made for, if any:
   * in process by its offer; over HTTP the entry waiting at the booking's location whose offer names
   * the booking (GET /waitlist?location_slug=&status=waiting).
   */
  offeredEntry(booking: Pick<Booking, 'reference' | 'location_slug'>): Promise<WaitlistEntry | undefined>;
  /** GET /waitlist/{id}. */
  getWaitlistEntry(id: string): Promise<WaitlistEntry>;
  /** POST /bookings/{reference}/send-link: the customer's link or confirmation sent again. */
  sendLink(reference: string): Promise<LinkSent>;
}
