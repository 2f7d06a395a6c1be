import { availabilityEndpoint } from './availability-endpoint.ts';
import { availabilityEngine } from './availability-engine.ts';
import { bookingSeries } from './booking-series.ts';
import { bookingsEndpoint } from './bookings-endpoint.ts';
import { busyCalendars } from './busy-calendars.ts';
import { consoleDiary } from './console-diary.ts';
import { instances } from './instances.ts';
import type { Benchmark } from './lib/benchmark.ts';
import { mcpRoundTrips } from './mcp-round-trips.ts';
import { mixedLoad } from './mixed-load.ts';
import { organisationBudgets } from './organisation-budgets.ts';
import { outbox } from './outbox.ts';
import { postgresBookingCpu } from './postgres-booking-cpu.ts';
import { publicBooking } from './public-booking.ts';
import { resilience } from './resilience.ts';
import { servicesEndpoint } from './services-endpoint.ts';
import { slowClients } from './slow-clients.ts';
import { stdioFirstAnswer } from './stdio-first-answer.ts';
import { waitlist } from './waitlist.ts';
import { webhooksBookingCost, webhooksDelay, webhooksDeliveryRate } from './webhooks.ts';

/** Every benchmark `npm run bench` knows, in the order they run and appear in docs/benchmarks.md. */
export const BENCHMARKS: readonly Benchmark[] = [
  servicesEndpoint,
  availabilityEngine,
  availabilityEndpoint,
  bookingsEndpoint,
  mcpRoundTrips,
  mixedLoad,
  resilience,
  slowClients,
  organisationBudgets,
  instances,
  postgresBookingCpu,
  consoleDiary,
  outbox,
  publicBooking,
  webhooksBookingCost,
  webhooksDeliveryRate,
  webhooksDelay,
  waitlist,
  bookingSeries,
  busyCalendars,
  stdioFirstAnswer,
];
