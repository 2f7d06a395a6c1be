import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/data/database.ts';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import { errorText, type Json, type McpHarness, TOOL_NAMES } from '../helpers/mcp-harness.ts';
import {
  type ChildDatabase,
  type ConnectedClient,
  connectSse,
  connectStdio,
  connectStreamableHttp,
  createChildDatabase,
  type ListeningApp,
  rawPost,
  startListeningApp,
} from '../helpers/mcp-servers.ts';
import { freshDatabaseUrl, onPostgres } from '../helpers/temp-database.ts';

/**
 * The three MCP transports end to end, each driven by the SDK's own client: Streamable HTTP (POST /mcp)
 * and the legacy SSE transport (/sse, /messages) of a test app listening on a real port, and `booking mcp`
 * over stdio, spawned as a user's MCP host would, on its own database or (--base-url) on the listening
 * app's REST API. The spawned commands use the system clock, so slots are taken from find_slots for
 * "next tuesday" at Camden (Amara and Ben both work there on Tuesdays) and booked as returned.
 */
const SLOT_QUERY = { location: 'camden', services: 'cut', date: 'next tuesday' };
const CALLER = { first_name: 'Sam', last_name: 'Lee', phone: '07911 123457' };
/** Every way the caller's phone number could appear in a log line. */
const CALLER_PHONES = ['07911 123457', '07911123457', '+447911123457', '7911123457'];
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: LATEST_PROTOCOL_VERSION,
    capabilities: {},
    clientInfo: { name: 'raw-http', version: '1.0.0' },
  },
};

let server: ServerUnderTest;
interface ServerUnderTest extends ListeningApp {
  bookingsAt(startsAt: string): Promise<{ reference: string; status: string; source: string }[]>;
}
beforeAll(async () => {
  const listening = await startListeningApp();
  server = {
    ...listening,
    bookingsAt: (startsAt) =>
      listening.t.database.db
        .selectFrom('bookings')
        .select(['reference', 'status', 'source'])
        .where('starts_at', '=', Date.parse(startsAt))
        .execute(),
  };
});
afterAll(async () => {
  await server?.t.close();
});

/** Runs `use` with a connected client and always closes it (open streams would keep the server up). */
async function using<C extends McpHarness>(connecting: Promise<C>, use: (client: C) => Promise<void>) {
  const client = await connecting;
  try {
    await use(client);
  } finally {
    await client.close();
  }
}

async function expectAllTools(mcp: McpHarness): Promise<void> {
  const { tools } = await mcp.client.listTools();
  expect(tools.map((tool) => tool.name)).toEqual(TOOL_NAMES);
  for (const tool of tools) {
    expect(tool.outputSchema?.properties, tool.name).toHaveProperty('ok');
    expect(tool.annotations, tool.name).toBeDefined();
    expect(typeof tool.annotations?.readOnlyHint, tool.name).toBe('boolean');
  }
  const book = tools.find((tool) => tool.name === 'book')!;
  expect(book.annotations).toMatchObject({
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
  });
  expect(tools.find((tool) => tool.name === 'find_slots')!.annotations).toMatchObject({ readOnlyHint: true });
}

/** find_slots for next Tuesday at Camden: ok, with slots that say themselves. */
async function nextTuesdaySlots(mcp: McpHarness): Promise<Json[]> {
  const result = await mcp.call('find_slots', SLOT_QUERY);
  expect(result.ok).toBe(true);
  expect(result.slots.length).toBeGreaterThan(0);
  for (const slot of result.slots) {
    expect(slot).toMatchObject({
      starts_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00[+-]\d{2}:\d{2}$/),
      staff_name: expect.stringMatching(/^(Amara Okafor|Ben Carter)$/),
      spoken: expect.stringMatching(/Tuesday \d{1,2} \w+ at \d/),
    });
  }
  return result.slots;
}

function expectNoErrors(client: ConnectedClient): void {
  expect(client.errors.map(String)).toEqual([]);
}

describe('Streamable HTTP (POST /mcp)', () => {
  it('lists the tools, finds slots, answers a failure conversationally, and books once however often retried', async () => {
    await using(connectStreamableHttp(server.origin, server.t.keys.readWrite), async (mcp) => {
      await expectAllTools(mcp);
      const slots = await nextTuesdaySlots(mcp);
      expect(await mcp.call('find_slots', { ...SLOT_QUERY, services: 'perm' })).toMatchObject({
        ok: false,
        code: 'not_found',
      });

      const args = { location: 'camden', services: 'cut', starts_at: slots[0].starts_at, client: CALLER };
      const first = await mcp.call('book', args);
      expect(first).toMatchObject({
        ok: true,
        status: 'confirmed',
        booking: { starts_at: slots[0].starts_at, service_names: ['Cut & blow-dry'] },
      });
      const again = await mcp.call('book', args);
      expect(again.booking.reference).toBe(first.booking.reference);
      expect(await server.bookingsAt(slots[0].starts_at)).toEqual([
        { reference: first.booking.reference, status: 'confirmed', source: 'mcp' },
      ]);
      expectNoErrors(mcp);
    });
  });

  it('refuses a request without a key with 401 missing_api_key', async () => {
    const client = new Client({ name: 'keyless', version: '1.0.0' });
    await expect(
      client.connect(new StreamableHTTPClientTransport(new URL('/mcp', server.origin))),
    ).rejects.toThrow(/missing_api_key/);
    await client.close();

    const response = await fetch(`${server.origin}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(INITIALIZE),
    });
    expect(response.status).toBe(401);
    expect(((await response.json()) as Json).error.code).toBe('missing_api_key');
  });

  it('lets a read key find slots but not book', async () => {
    await using(connectStreamableHttp(server.origin, server.t.keys.read), async (mcp) => {
      const slots = await nextTuesdaySlots(mcp);
      const refused = await mcp.raw('book', {
        location: 'camden',
        services: 'cut',
        starts_at: slots.at(-1).starts_at,
        client: CALLER,
      });
      expect(errorText(refused)).toBe(ERROR_CATALOGUE.insufficient_scope.hint);
      expect(await server.bookingsAt(slots.at(-1).starts_at)).toEqual([]);
    });
  });

  it('refuses a foreign Host or Origin with 403 invalid_host (DNS rebinding)', async () => {
    const auth = { authorization: `Bearer ${server.t.keys.readWrite}` };
    // The same request with this server's own Host is answered: the refusals below are the headers'.
    const own = await rawPost(
      server.origin,
      '/mcp',
      { ...auth, host: `127.0.0.1:${server.port}` },
      INITIALIZE,
    );
    expect(own.status).toBe(200);
    expect((own.json as Json).result.serverInfo.name).toBe('booking-engine');

    const foreignHost = await rawPost(server.origin, '/mcp', { ...auth, host: 'evil.example' }, INITIALIZE);
    expect(foreignHost.status).toBe(403);
    expect((foreignHost.json as Json).error.code).toBe('invalid_host');
    const foreignOrigin = await rawPost(
      server.origin,
      '/mcp',
      { ...auth, origin: 'https://evil.example' },
      INITIALIZE,
    );
    expect(foreignOrigin.status).toBe(403);
    expect((foreignOrigin.json as Json).error.code).toBe('invalid_host');
    // Also when the foreign name merely starts with an allowed one.
    const lookalike = await rawPost(
      server.origin,
      '/mcp',
      { ...auth, host: 'localhost.evil.example' },
      INITIALIZE,
    );
    expect(lookalike.status).toBe(403);
  });

  it('answers GET /mcp with 405: there is no session stream', async () => {
    const response = await fetch(`${server.origin}/mcp`, {
      headers: { authorization: `Bearer ${server.t.keys.readWrite}`, accept: 'text/event-stream' },
    });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    await response.body?.cancel();
  });
});

describe('legacy SSE (GET /sse, POST /messages)', () => {
  it('lists the tools and finds slots over the stream, and keeps the session to its own key', async () => {
    await using(connectSse(server.origin, server.t.keys.readWrite), async (mcp) => {
      await expectAllTools(mcp);
      await nextTuesdaySlots(mcp);
      const messages = mcp.messagesUrl();
      expect(messages.searchParams.get('sessionId')).toMatch(/\S/);

      const otherKey = await fetch(messages, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.t.keys.read}`, 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'tools/list' }),
      });
      expect(otherKey.status).toBe(404);
      expect(((await otherKey.json()) as Json).error).toMatchObject({
        code: 'not_found',
        param: 'sessionId',
      });
      // The refused message never reached the session: the stream still serves its own key.
      expect((await mcp.client.listTools()).tools).toHaveLength(TOOL_NAMES.length);

      // What is not one JSON-RPC message is refused in the envelope, before the SDK sees it.
      for (const body of ['null', '{"hello":"world"}', '[1,2]']) {
        const malformed = await fetch(messages, {
          method: 'POST',
          headers: { authorization: `Bearer ${server.t.keys.readWrite}`, 'content-type': 'application/json' },
          body,
        });
        expect(malformed.status, body).toBe(400);
        expect(((await malformed.json()) as Json).error).toMatchObject({
          code: 'invalid_request',
          param: 'body',
        });
      }
      expect((await mcp.client.listTools()).tools).toHaveLength(TOOL_NAMES.length);
      expectNoErrors(mcp);

      // A HEAD cannot carry a stream, so it opens no session.
      const head = await fetch(`${server.origin}/sse`, {
        method: 'HEAD',
        headers: { authorization: `Bearer ${server.t.keys.readWrite}` },
      });
      expect(head.status).toBe(405);
      expect(head.headers.get('allow')).toBe('GET');
    });
  });

  it('forgets a session once its stream is closed', async () => {
    const mcp = await connectSse(server.origin, server.t.keys.readWrite);
    await mcp.client.listTools();
    const messages = mcp.messagesUrl();
    await mcp.close();
    // A notification: while the session lingers it is accepted (202) and needs no answer on the stream.
    const post = () =>
      fetch(messages, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.t.keys.readWrite}`, 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      });
    let status = 0;
    for (let attempt = 0; attempt < 40 && status !== 404; attempt += 1) {
      const response = await post();
      status = response.status;
      await response.body?.cancel();
      if (status !== 404) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe(404);
  });
});

describe('booking mcp over stdio', () => {
  let database: ChildDatabase;
  beforeAll(async () => {
    database = await createChildDatabase();
  });
  afterAll(() => database?.dispose());

  it('serves the tools on its own database, books once per request, and keeps stdout and stderr clean', async () => {
    const key = database.keys.readWrite;
    // The most verbose logging, so that anything logged with personal data would show on stderr.
    const mcp = await connectStdio([], {
      DATABASE_URL: database.url,
      BOOKING_API_KEY: key,
      LOG_LEVEL: 'debug',
    });
    let reference: string;
    let startsAt: string;
    try {
      await expectAllTools(mcp);
      const slots = await nextTuesdaySlots(mcp);
      startsAt = slots[0].starts_at;
      const args = { location: 'camden', services: 'cut', starts_at: startsAt, client: CALLER };
      const first = await mcp.call('book', args);
      expect(first).toMatchObject({ ok: true, status: 'confirmed', booking: { starts_at: startsAt } });
      reference = first.booking.reference;
      expect((await mcp.call('book', args)).booking.reference).toBe(reference);
      // Anything on stdout that is not a JSON-RPC message would have been reported here.
      expectNoErrors(mcp);
    } finally {
      // The host ends the session by closing stdin; the SDK would SIGTERM a command still running after 2 s.
      const closing = Date.now();
      await mcp.close();
      expect(Date.now() - closing).toBeLessThan(2000);
    }
    expect(await database.bookings()).toEqual([
      { reference, status: 'confirmed', starts_at: Date.parse(startsAt) },
    ]);
    const stderr = mcp.stderr();
    expect(stderr).not.toContain(key);
    for (const phone of CALLER_PHONES) expect(stderr).not.toContain(phone);
  });

  it('starts without BOOKING_API_KEY and answers every tool call with the missing-key hint', async () => {
    const mcp = await connectStdio([], { DATABASE_URL: database.url });
    try {
      expect((await mcp.client.listTools()).tools).toHaveLength(TOOL_NAMES.length);
      const text = errorText(await mcp.raw('find_slots', SLOT_QUERY));
      expect(text).toContain(ERROR_CATALOGUE.missing_api_key.hint);
      expectNoErrors(mcp);
    } finally {
      await mcp.close();
    }
    expect(mcp.stderr()).toContain('BOOKING_API_KEY is not set');
  });
});

describe('booking mcp --base-url (stdio, driving a remote instance)', () => {
  it('finds and books through the remote REST API, into the remote database', async () => {
    // Remote mode must not open a local database: point DATABASE_URL at a file not yet created in an
    // empty directory (or, on PostgreSQL, at an empty database, which must stay without tables).
    const localDir = mkdtempSync(path.join(tmpdir(), 'booking-remote-'));
    const local = await freshDatabaseUrl(localDir);
    const key = server.t.keys.readWrite;
    const caller = { first_name: 'Ria', last_name: 'Shah', phone: '07911 765432' };
    try {
      const mcp = await connectStdio(['--base-url', `${server.origin}/v1`], {
        DATABASE_URL: local.url,
        BOOKING_API_KEY: key,
      });
      let booked: Json;
      try {
        const slots = await nextTuesdaySlots(mcp);
        booked = await mcp.call('book', {
          location: 'camden',
          services: 'cut',
          starts_at: slots[0].starts_at,
          client: caller,
        });
        expect(booked).toMatchObject({
          ok: true,
          status: 'confirmed',
          booking: { starts_at: slots[0].starts_at },
        });
        // The booking reads back through the remote API too.
        expect(await mcp.call('get_booking', { reference: booked.booking.reference })).toMatchObject({
          ok: true,
          booking: { reference: booked.booking.reference, status: 'confirmed' },
        });
        expectNoErrors(mcp);
      } finally {
        await mcp.close();
      }
      expect(await server.bookingsAt(booked.booking.starts_at)).toContainEqual({
        reference: booked.booking.reference,
        status: 'confirmed',
        source: 'api',
      });
      const client = await server.t.database.db
        .selectFrom('clients')
        .select(['first_name', 'phone'])
        .where('phone', '=', '+447911765432')
        .executeTakeFirst();
      expect(client).toEqual({ first_name: 'Ria', phone: '+447911765432' });
      const stderr = mcp.stderr();
      expect(stderr).not.toContain(key);
      expect(stderr).not.toContain('765432');
      expect(readdirSync(localDir)).toEqual([]);
      if (onPostgres) {
        const { db, close } = openDatabase(local.url, { readonly: true });
        try {
          expect(await db.introspection.getTables(), 'the local database was not migrated').toEqual([]);
        } finally {
          await close();
        }
      }
    } finally {
      await local.drop();
      rmSync(localDir, { recursive: true, force: true });
    }
  });
});
