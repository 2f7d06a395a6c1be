import type { DayHours } from './availability/opening-hours.ts';
import type { LocationPolicy } from './catalogue.ts';

/**
 * What a caller may ask a receptionist about a location, as data (the faces put it into words or
 * JSON): where it is, when it is open, when it is closed, what booking there asks of the customer,
 * and the policy.
 */
export interface LocationInfo {
  id: string;
  slug: string;
  name: string;
  timezone: string;
  streetAddress: string | null;
  city: string | null;
  postalCode: string | null;
  country: string | null;
  phone: string | null;
  /** The location's local date now. */
  today: string;
  /** The union of its active staff's working hours there, per weekday from Monday. */
  openingHours: DayHours[];
  /** Closures from today to the horizon (local dates, inclusive), by date. */
  closures: { date: string; reason: string | null }[];
  /** The services bookable online there that ask for a deposit. */
  deposits: { serviceId: string; serviceName: string; depositMinor: number; currency: string }[];
  protection: {
    applies: boolean;
    lateCancellationFeePercentage: number | null;
    noShowFeePercentage: number | null;
  };
  /** Windows, late changes, notice, advance and holds. */
  policy: LocationPolicy;
}
