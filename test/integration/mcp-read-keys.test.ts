import { type CallToolResult, Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import { buildMcpServer } from '../../src/mcp/build-server.ts';
import { HttpBookingApi } from '../../src/mcp/http-api.ts';
import {
  connectInProcess,
  type Era,
  errorText,
  harness,
  type Json,
  type McpHarness,
} from '../helpers/mcp-harness.ts';
import {
  connectStdio,
  connectStreamableHttp,
  createChildDatabase,
  type ListeningApp,
  startListeningApp,
} from '../helpers/mcp-servers.ts';

/**
 * design.md 9.1: a read-only key never receives a capability link. payment_url and booking_page_url
 * (the booking's own page, /p/manage/{token}) let whoever holds them pay for, cancel or move a booking
 * without any key, so an agent with a read key, which may not change bookings, must not be able to
 * read one and act through it. On the demo catalogue served on a real port, a read_write agent holds a
 * deposit at Camden (pending_payment, with both links) and a Booking Protection hold at Islington
 * (pending_confirmation); a read key then reads them on every MCP face: in process and over Streamable
 * HTTP in both protocol generations, and the tools of `booking mcp --base-url` over the REST API.
 */
let server: ListeningApp;
/** get_booking as the read_write agent saw each hold, by reference. */
const seen = new Map<string, Json>();
const CALLER = { first_name: 'Noor', last_name: 'Haddad', phone: '07911 228810' };
const LINKS = ['/checkout/', '/p/manage/'];

beforeAll(async () => {
  server = await startListeningApp();
  const writer = await connectInProcess(server.t, server.t.keys.readWrite);
  try {
    const hold = async (location: string, services: string, date: string) => {
      const found = await writer.call('find_slots', { location, services, date });
      const booked = await writer.call('book', {
        location,
        services,
        starts_at: found.slots[0].starts_at,
        client: CALLER,
      });
      const read = await writer.call('get_booking', { reference: booked.booking.reference });
      seen.set(booked.booking.reference, read);
      return read.booking;
    };
    // The read_write key gets both links: what a read key must not.
    expect(await hold('camden', 'full colour', 'next tuesday')).toMatchObject({
      status: 'pending_payment',
      payment_url: expect.stringContaining('/checkout/'),
      booking_page_url: expect.stringContaining('/p/manage/'),
    });
    expect(await hold('islington', 'cut', 'next wednesday')).toMatchObject({
      status: 'pending_confirmation',
      booking_page_url: expect.stringContaining('/p/manage/'),
    });
  } finally {
    await writer.close();
  }
});
afterAll(async () => {
  await server?.t.close();
});

/** What a read key's agent is told of the holds: everything the writer was, but no link. */
async function readsWithoutLinks(reader: McpHarness): Promise<void> {
  for (const [reference, written] of seen) {
    const result = await reader.raw('get_booking', { reference: reference.toLowerCase() });
    expect(result.structuredContent).toEqual({
      ...written,
      booking: { ...written.booking, payment_url: null, booking_page_url: null },
    });
    expectNoLink(result);
  }
  const lookup = await reader.raw('lookup_client', { phone: CALLER.phone });
  const { upcoming_bookings: upcoming } = lookup.structuredContent as Json;
  expect(upcoming.map((b: Json) => b.reference).sort()).toEqual([...seen.keys()].sort());
  for (const booking of upcoming)
    expect(booking).toMatchObject({ payment_url: null, booking_page_url: null });
  expectNoLink(lookup);
  // Nor can it have one sent: send_link needs read_write.
  const [reference] = seen.keys();
  expect(errorText(await reader.raw('send_link', { reference }))).toBe(
    ERROR_CATALOGUE.insufficient_scope.hint,
  );
}

/** No link anywhere in the answer, as the host receives it (the JSON text). */
function expectNoLink(result: CallToolResult): void {
  const text = JSON.stringify(result.content);
  for (const link of LINKS) expect(text).not.toContain(link);
}

const ERAS: Era[] = ['legacy', 'modern'];

describe.each(ERAS)('a read key, %s protocol', (era) => {
  it('reads holds in process without payment_url or booking_page_url', async () => {
    const reader = await connectInProcess(server.t, server.t.keys.read, era);
    try {
      await readsWithoutLinks(reader);
    } finally {
      await reader.close();
    }
  });

  it('tells a read key it may not change bookings before anything of the arguments of a write tool', async () => {
    const reader = await connectStreamableHttp(server.origin, server.t.keys.read, era);
    try {
      for (const [tool, args] of [
        ['book', { location: 'camden' }],
        ['cancel', { reference: 'NHC-ABCDEF', dryrun: true }],
        ['take_message', {}],
      ] as const) {
        expect(errorText(await reader.raw(tool, args)), tool).toBe(ERROR_CATALOGUE.insufficient_scope.hint);
      }
      expect(reader.errors).toEqual([]);
    } finally {
      await reader.close();
    }
  });

  it('reads holds over Streamable HTTP (POST /mcp) without them', async () => {
    const reader = await connectStreamableHttp(server.origin, server.t.keys.read, era);
    try {
      await readsWithoutLinks(reader);
      expect(reader.errors).toEqual([]);
    } finally {
      await reader.close();
    }
  });
});

describe('booking mcp with a read key (stdio)', () => {
  it('tells it may not change bookings before anything of the arguments of a write tool', async () => {
    const database = await createChildDatabase();
    const reader = await connectStdio([], {
      DATABASE_URL: database.url,
      BOOKING_API_KEY: database.keys.read,
    });
    try {
      expect(errorText(await reader.raw('book', { location: 'camden' }))).toBe(
        ERROR_CATALOGUE.insufficient_scope.hint,
      );
    } finally {
      await reader.close();
      await database.dispose();
    }
  });
});

describe('booking mcp --base-url with a read key', () => {
  it('reads holds through the REST API without them, as the instance answers a read key', async () => {
    const api = new HttpBookingApi({ baseUrl: `${server.origin}/v1`, apiKey: server.t.keys.read });
    const faults: unknown[] = [];
    const mcpServer = buildMcpServer({ apiFor: async () => api, onFault: (error) => faults.push(error) });
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    await mcpServer.connect(serverSide);
    const client = new Client({ name: 'base-url-agent', version: '1.0.0' });
    await client.connect(clientSide);
    try {
      await readsWithoutLinks(harness(client));
    } finally {
      await client.close();
      await mcpServer.close();
    }
    expect(faults).toEqual([]);
  });
});
