import http from 'node:http';
import { DateTime } from 'luxon';
import type { Timing } from './benchmark.ts';
import { type HttpAnswer, sendJson } from './http-request.ts';
import { MIXED_LOAD, regularPhone } from './mixed-load-catalogue.ts';
import { mulberry32 } from './seeded-random.ts';
import { summariseTimes } from './timing.ts';

/**
 * The mixed load's traffic: many connections, each sending one request after another, each request
 * chosen at random by weight among three kinds, as a busy front desk and its voice agents would:
 * - availability (70 %): a day's free slots of one service, for any staff or one named;
 * - bookings (20 %): a slot most often taken from an availability answer seen earlier (so several
 *   callers race for the same slots, as in life), otherwise a random time on the grid;
 * - clients (10 %): looking a regular up by phone, or registering a walk-in.
 * Every answer is timed and counted by status, per kind.
 */
export type EndpointKind = 'availability' | 'bookings' | 'clients';

export const TRAFFIC_MIX: readonly { kind: EndpointKind; weight: number; request: string }[] = [
  { kind: 'availability', weight: 0.7, request: 'GET /v1/locations/central/availability' },
  { kind: 'bookings', weight: 0.2, request: 'POST /v1/bookings' },
  { kind: 'clients', weight: 0.1, request: 'GET /v1/clients?phone=, POST /v1/clients' },
];

/** What a kind of request may answer without it counting as a failure. */
export const EXPECTED_STATUSES: Readonly<Record<EndpointKind, readonly number[]>> = {
  availability: [200],
  // 409: the slot was taken by a concurrent booker between the search and the booking.
  bookings: [201, 409],
  // 200: a regular found, or a walk-in already registered; 201: a walk-in registered.
  clients: [200, 201],
};

export interface EndpointFigures {
  kind: EndpointKind;
  statuses: Record<number, number>;
  socketErrors: number;
  latency: Timing;
}

export interface TrafficReport {
  durationS: number;
  connections: number;
  endpoints: EndpointFigures[];
  /** References of every booking answered 201, to be found in the database afterwards. */
  createdReferences: string[];
  /** Booking attempts that used a slot from an earlier availability answer. */
  bookingsFromSearch: number;
}

export interface TrafficOptions {
  origin: string;
  key: string;
  /** Ids of the regular clients (bookings are made for them). */
  clientIds: string[];
  serviceIds: string[];
  staffIds: string[];
  connections: number;
  durationMs: number;
  seed: number;
  /** Called about once a second with the seconds elapsed and the requests answered so far. */
  onTick?: (elapsedS: number, answered: number) => void;
  /** Called once, when half the duration has passed (the mixed load takes its backup then). */
  atHalfTime?: () => void;
}

interface Slot {
  starts_at: string;
  staff_id: string;
}

const POOL_SIZE = 500;

/** The mixed load's requests, drawn from one seeded sequence; what runMixedTraffic and a flood send. */
export interface MixedRequests {
  /** A kind of request, drawn by weight (TRAFFIC_MIX). */
  chooseKind(): EndpointKind;
  /** Sends one request of `kind` with `key` and answers when its whole answer is in. */
  send(kind: EndpointKind, key: string): Promise<HttpAnswer>;
  /** References of every booking answered 201. */
  readonly createdReferences: string[];
  /** Booking attempts that used a slot from an earlier availability answer. */
  readonly bookingsFromSearch: number;
}

export function mixedRequests(
  options: Pick<TrafficOptions, 'origin' | 'clientIds' | 'serviceIds' | 'staffIds' | 'seed'> & {
    agent: http.Agent;
  },
): MixedRequests {
  const random = mulberry32(options.seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const { agent } = options;
  const pools = new Map<string, Slot[]>(options.serviceIds.map((id) => [id, []]));
  const createdReferences: string[] = [];
  const today = DateTime.now().setZone(MIXED_LOAD.timezone).startOf('day');
  const randomDate = () => today.plus({ days: 2 + Math.floor(random() * MIXED_LOAD.searchDays) });
  let walkIns = 0;
  let bookingsFromSearch = 0;

  const request = (key: string, method: string, path: string, body?: unknown, idempotencyKey?: string) =>
    sendJson({
      url: `${options.origin}${path}`,
      method,
      agent,
      headers: {
        authorization: `Bearer ${key}`,
        ...(idempotencyKey && { 'idempotency-key': idempotencyKey }),
      },
      body,
    });

  const searchAvailability = async (key: string) => {
    const serviceId = pick(options.serviceIds);
    const staff = random() < 0.25 ? `&staff_id=${pick(options.staffIds)}` : '';
    const date = randomDate().toISODate();
    const answer = await request(
      key,
      'GET',
      `/v1/locations/central/availability?service_ids=${serviceId}&date=${date}${staff}`,
    );
    if (answer.status === 200) {
      const slots = (JSON.parse(answer.text) as { data: { slots: Slot[] } }).data.slots;
      const pool = pools.get(serviceId)!;
      for (let i = 0; i < 5 && slots.length > 0; i += 1) {
        const slot = pick(slots);
        if (pool.length >= POOL_SIZE) pool[Math.floor(random() * POOL_SIZE)] = slot;
        else pool.push(slot);
      }
    }
    return answer;
  };

  const book = async (key: string) => {
    const serviceId = pick(options.serviceIds);
    const pool = pools.get(serviceId)!;
    let slot: Slot;
    if (pool.length > 0 && random() < 0.9) {
      const index = Math.floor(random() * pool.length);
      slot = pool[index]!;
      pool[index] = pool[pool.length - 1]!;
      pool.pop();
      bookingsFromSearch += 1;
    } else {
      const minute = 8 * 60 + 15 * Math.floor(random() * 44);
      const start = randomDate().plus({ minutes: minute });
      slot = { starts_at: start.toISO({ suppressMilliseconds: true })!, staff_id: pick(options.staffIds) };
    }
    const body = {
      location_slug: 'central',
      service_ids: [serviceId],
      staff_id: slot.staff_id,
      client_id: pick(options.clientIds),
      starts_at: slot.starts_at,
      notes: 'Mixed load',
    };
    const answer = await request(
      key,
      'POST',
      '/v1/bookings',
      body,
      `mixed-${options.seed}-${random().toString(36).slice(2)}`,
    );
    if (answer.status === 201)
      createdReferences.push((JSON.parse(answer.text) as { data: { reference: string } }).data.reference);
    return answer;
  };

  const lookUpOrRegister = (key: string) => {
    if (random() < 0.6) {
      const phone = encodeURIComponent(regularPhone(Math.floor(random() * MIXED_LOAD.clients)));
      return request(key, 'GET', `/v1/clients?phone=${phone}`);
    }
    walkIns += 1;
    return request(key, 'POST', '/v1/clients', {
      first_name: 'Walk',
      last_name: `In ${walkIns}`,
      phone: `+4479112${String(walkIns).padStart(5, '0')}`,
    });
  };

  const makers: Record<EndpointKind, (key: string) => Promise<HttpAnswer>> = {
    availability: searchAvailability,
    bookings: book,
    clients: lookUpOrRegister,
  };
  return {
    chooseKind() {
      let roll = random();
      for (const { kind, weight } of TRAFFIC_MIX) {
        roll -= weight;
        if (roll < 0) return kind;
      }
      return TRAFFIC_MIX[0]!.kind;
    },
    send: (kind, key) => makers[kind](key),
    createdReferences,
    get bookingsFromSearch() {
      return bookingsFromSearch;
    },
  };
}

export async function runMixedTraffic(options: TrafficOptions): Promise<TrafficReport> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });
  const requests = mixedRequests({ ...options, agent });
  const times = new Map<EndpointKind, number[]>(TRAFFIC_MIX.map(({ kind }) => [kind, []]));
  const statuses = new Map<EndpointKind, Record<number, number>>(TRAFFIC_MIX.map(({ kind }) => [kind, {}]));
  const socketErrors = new Map<EndpointKind, number>(TRAFFIC_MIX.map(({ kind }) => [kind, 0]));
  let answered = 0;

  const started = performance.now();
  const deadline = started + options.durationMs;
  let halfTimeCalled = false;
  const ticker = setInterval(() => {
    const elapsed = performance.now() - started;
    options.onTick?.(elapsed / 1000, answered);
    if (!halfTimeCalled && elapsed >= options.durationMs / 2) {
      halfTimeCalled = true;
      options.atHalfTime?.();
    }
  }, 1000);

  const worker = async () => {
    while (performance.now() < deadline) {
      const kind = requests.chooseKind();
      const sent = performance.now();
      try {
        const { status } = await requests.send(kind, options.key);
        times.get(kind)!.push(performance.now() - sent);
        const counts = statuses.get(kind)!;
        counts[status] = (counts[status] ?? 0) + 1;
      } catch {
        socketErrors.set(kind, socketErrors.get(kind)! + 1);
      }
      answered += 1;
    }
  };
  try {
    await Promise.all(Array.from({ length: options.connections }, worker));
  } finally {
    clearInterval(ticker);
    agent.destroy();
  }
  return {
    durationS: (performance.now() - started) / 1000,
    connections: options.connections,
    endpoints: TRAFFIC_MIX.map(({ kind }) => ({
      kind,
      statuses: statuses.get(kind)!,
      socketErrors: socketErrors.get(kind)!,
      latency: summariseTimes(kind, times.get(kind)!),
    })),
    createdReferences: requests.createdReferences,
    bookingsFromSearch: requests.bookingsFromSearch,
  };
}
