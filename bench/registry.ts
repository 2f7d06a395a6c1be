import type { Benchmark } from './lib/benchmark.ts';

/**
 * A benchmark by id, its module loaded only by the runner process that runs it: a runner that imported
 * every benchmark carried their modules too, the resilience benchmark's fast-check arbitraries alone
 * some 100 MB of heap, and its collections paused the load generator inside the calls it timed.
 */
export interface RegisteredBenchmark {
  /** Stable id: the --only value and the anchor of its section in docs/benchmarks.md. */
  id: string;
  load(): Promise<Benchmark>;
}

const registered = (id: string, load: () => Promise<Benchmark>): RegisteredBenchmark => ({ id, load });

/** Every benchmark `npm run bench` knows, in the order they run and appear in docs/benchmarks.md. */
export const BENCHMARKS: readonly RegisteredBenchmark[] = [
  registered('services-endpoint', async () => (await import('./services-endpoint.ts')).servicesEndpoint),
  registered(
    'availability-engine',
    async () => (await import('./availability-engine.ts')).availabilityEngine,
  ),
  registered(
    'availability-endpoint',
    async () => (await import('./availability-endpoint.ts')).availabilityEndpoint,
  ),
  registered('bookings-endpoint', async () => (await import('./bookings-endpoint.ts')).bookingsEndpoint),
  registered('mcp-round-trips', async () => (await import('./mcp-round-trips.ts')).mcpRoundTrips),
  registered('mixed-load', async () => (await import('./mixed-load.ts')).mixedLoad),
  registered('resilience', async () => (await import('./resilience.ts')).resilience),
  registered('slow-clients', async () => (await import('./slow-clients.ts')).slowClients),
  registered(
    'organisation-budgets',
    async () => (await import('./organisation-budgets.ts')).organisationBudgets,
  ),
  registered('instances', async () => (await import('./instances.ts')).instances),
  registered(
    'postgres-booking-cpu',
    async () => (await import('./postgres-booking-cpu.ts')).postgresBookingCpu,
  ),
  registered('console-diary', async () => (await import('./console-diary.ts')).consoleDiary),
  registered('outbox', async () => (await import('./outbox.ts')).outbox),
  registered('public-booking', async () => (await import('./public-booking.ts')).publicBooking),
  registered('webhooks-booking-cost', async () => (await import('./webhooks.ts')).webhooksBookingCost),
  registered('webhooks-delivery-rate', async () => (await import('./webhooks.ts')).webhooksDeliveryRate),
  registered('webhooks-delay', async () => (await import('./webhooks.ts')).webhooksDelay),
  registered('waitlist', async () => (await import('./waitlist.ts')).waitlist),
  registered('booking-series', async () => (await import('./booking-series.ts')).bookingSeries),
  registered('busy-calendars', async () => (await import('./busy-calendars.ts')).busyCalendars),
  registered('stdio-first-answer', async () => (await import('./stdio-first-answer.ts')).stdioFirstAnswer),
];
