import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import {
  type Era,
  errorText,
  type Json,
  type McpHarness,
  READ_TOOL_NAMES,
  TOOL_NAMES,
} from '../helpers/mcp-harness.ts';
import {
  type ChildDatabase,
  connectSse,
  connectStdio,
  connectStreamableHttp,
  createChildDatabase,
  type ListeningApp,
  startListeningApp,
} from '../helpers/mcp-servers.ts';
import { spawnRawStdioHost } from '../helpers/raw-stdio-host.ts';

/**
 * The tool surface a credential sees (design.md 9.3), on every transport, each driven by the SDK's own
 * client: Streamable HTTP (POST /mcp) in both protocol generations and the legacy SSE transport of a
 * test app on a real port, and `booking mcp` over stdio, spawned as a host would.
 */
let server: ListeningApp;
let database: ChildDatabase;
beforeAll(async () => {
  [server, database] = await Promise.all([startListeningApp(), createChildDatabase()]);
});
afterAll(async () => {
  await server?.t.close();
  await database?.dispose();
});

async function using<C extends McpHarness>(connecting: Promise<C>, use: (client: C) => Promise<void>) {
  const client = await connecting;
  try {
    await use(client);
  } finally {
    await client.close();
  }
}

async function listedNames(mcp: McpHarness): Promise<string[]> {
  return (await mcp.client.listTools()).tools.map((tool) => tool.name);
}

const ERAS: Era[] = ['modern', 'legacy'];

describe('tools/list by credential', () => {
  it.each(ERAS)(
    'Streamable HTTP, %s protocol: a read key sees the read tools, read_write all',
    async (era) => {
      await using(connectStreamableHttp(server.origin, server.t.keys.read, era), async (reader) => {
        const listing = (await reader.client.listTools()) as Json;
        expect(listing.tools.map((tool: Json) => tool.name)).toEqual(READ_TOOL_NAMES);
        // On 2026-07-28 the answer says it is this caller's own: no cache shares it with another key.
        if (era === 'modern') expect(listing.cacheScope).toBe('private');
        // A hidden tool is still answered, with the refusal a read key always had.
        const refused = await reader.raw('take_message', { caller_name: 'Sam', message: 'Call me' });
        expect(errorText(refused)).toBe(ERROR_CATALOGUE.insufficient_scope.hint);
        // The listing each key sees is its own, request after request (it is cached per access level).
        await using(connectStreamableHttp(server.origin, server.t.keys.readWrite, era), async (writer) => {
          expect(await listedNames(writer)).toEqual(TOOL_NAMES);
          expect(await listedNames(reader)).toEqual(READ_TOOL_NAMES);
          expect(await listedNames(writer)).toEqual(TOOL_NAMES);
        });
      });
    },
  );

  it('legacy SSE: a read key sees the read tools, read_write all', async () => {
    await using(connectSse(server.origin, server.t.keys.read), async (reader) => {
      expect(await listedNames(reader)).toEqual(READ_TOOL_NAMES);
      expect(errorText(await reader.raw('take_message', { caller_name: 'A', message: 'B' }))).toBe(
        ERROR_CATALOGUE.insufficient_scope.hint,
      );
    });
    await using(connectSse(server.origin, server.t.keys.readWrite), async (writer) => {
      expect(await listedNames(writer)).toEqual(TOOL_NAMES);
    });
  });

  it.each(ERAS)('stdio, %s protocol: a read key sees the read tools, read_write all', async (era) => {
    const env = (key: string) => ({ DATABASE_URL: database.url, BOOKING_API_KEY: key });
    await using(connectStdio([], env(database.keys.read), era), async (reader) => {
      expect(await listedNames(reader)).toEqual(READ_TOOL_NAMES);
      expect(errorText(await reader.raw('send_link', { reference: 'NHC-AAAAAA' }))).toBe(
        ERROR_CATALOGUE.insufficient_scope.hint,
      );
    });
    await using(connectStdio([], env(database.keys.readWrite), era), async (writer) => {
      expect(await listedNames(writer)).toEqual(TOOL_NAMES);
    });
  });

  it('stdio with --base-url: a read key sees the read tools, read_write all (the instance says which)', async () => {
    const remote = ['--base-url', `${server.origin}/v1`];
    await using(connectStdio(remote, { BOOKING_API_KEY: server.t.keys.read }), async (reader) => {
      expect(await listedNames(reader)).toEqual(READ_TOOL_NAMES);
      expect(errorText(await reader.raw('send_link', { reference: 'NHC-AAAAAA' }))).toBe(
        ERROR_CATALOGUE.insufficient_scope.hint,
      );
    });
    await using(connectStdio(remote, { BOOKING_API_KEY: server.t.keys.readWrite }), async (writer) => {
      expect(await listedNames(writer)).toEqual(TOOL_NAMES);
    });
    // A key the instance refuses is shown every tool: each call then says what is wrong with it.
    await using(connectStdio(remote, { BOOKING_API_KEY: `bk_${'A'.repeat(40)}` }), async (stranger) => {
      expect(await listedNames(stranger)).toEqual(TOOL_NAMES);
    });
  });
});

describe('a key sent without "Bearer "', () => {
  const TOLD =
    'The Authorization header holds an API key without "Bearer ": send it as "Authorization: Bearer <API key>".';

  it.each([
    ['POST', '/mcp'],
    ['GET', '/sse'],
  ])(
    "is told so by %s %s, in the JSON-RPC message, with the contract's 401 invalid_api_key",
    async (method, path) => {
      const response = await fetch(`${server.origin}${path}`, {
        method,
        headers: {
          authorization: server.t.keys.readWrite,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        ...(method === 'POST' && {
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        }),
      });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
      expect(await response.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32000,
          message: TOLD,
          data: { code: 'invalid_api_key', detail: TOLD, param: 'Authorization' },
        },
      });
    },
  );

  it('is answered as before when the key is sent as Bearer but revoked or unknown', async () => {
    const response = await fetch(`${server.origin}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer bk_${'A'.repeat(40)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe(
      ERROR_CATALOGUE.invalid_api_key.hint,
    );
  });
});

const LOCATIONS_CALL = (id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'list_locations', arguments: {} },
});
const initialize = (protocolVersion: string) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1.0.0' } },
});
const refusedBatch = (revision: string) =>
  `JSON-RPC batches are not accepted on protocol revision ${revision}: only revision 2025-03-26 had them (2025-06-18 removed them). Send one message at a time.`;

describe('batches: served on 2025-03-26 only, refused with -32600 on every other revision (docs/mcp.md)', () => {
  async function postBatch(headers: Record<string, string>, body: unknown) {
    const response = await fetch(`${server.origin}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${server.t.keys.readWrite}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as Json };
  }

  it.each([
    ['no MCP-Protocol-Version (2025-03-26, as the specification reads it)', {}],
    ['MCP-Protocol-Version 2025-03-26', { 'mcp-protocol-version': '2025-03-26' }],
  ])('POST /mcp serves a batch with %s, answering each message', async (_, headers) => {
    const { status, json } = await postBatch(headers, [LOCATIONS_CALL(7), LOCATIONS_CALL(8)]);
    expect(status).toBe(200);
    expect(json.map((answer: Json) => [answer.id, answer.result.structuredContent.ok])).toEqual([
      [7, true],
      [8, true],
    ]);
  });

  it('POST /mcp refuses a batch two of whose requests share an id, running neither', async () => {
    const find = {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: {
        name: 'find_slots',
        arguments: { location: 'camden', services: 'cut', date: 'next tuesday' },
      },
    };
    // Without the refusal, one answer came back (not even as an array) and the other was lost.
    const { status, json } = await postBatch({}, [find, LOCATIONS_CALL(7)]);
    expect(status).toBe(400);
    expect(json).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: 'Invalid Request: two requests of the batch have the id 7; give each request its own id.',
      },
    });
  });

  it.each(['2025-06-18', '2025-11-25', '2026-07-28'])(
    'POST /mcp refuses a batch on %s with 400 and Invalid Request',
    async (revision) => {
      const headers = {
        'mcp-protocol-version': revision,
        ...(revision === '2026-07-28' && { 'mcp-method': 'tools/call', 'mcp-name': 'list_locations' }),
      };
      const { status, json } = await postBatch(headers, [LOCATIONS_CALL(7)]);
      expect(status).toBe(400);
      expect(json).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message: refusedBatch(revision),
          data: { code: 'invalid_request', detail: refusedBatch(revision), param: 'body' },
        },
      });
    },
  );

  it('POST /mcp refuses a batch whose initialize asks for 2025-06-18 or later', async () => {
    const { status, json } = await postBatch({}, [initialize('2025-11-25')]);
    expect([status, json.error.code, json.error.message]).toEqual([400, -32600, refusedBatch('2025-11-25')]);
  });

  it('the SSE transport (2024-11-05) refuses a batch with Invalid Request', async () => {
    await using(connectSse(server.origin, server.t.keys.readWrite), async (sse) => {
      await sse.client.listTools();
      const response = await fetch(sse.messagesUrl(), {
        method: 'POST',
        headers: { authorization: `Bearer ${server.t.keys.readWrite}`, 'content-type': 'application/json' },
        body: JSON.stringify([LOCATIONS_CALL(7)]),
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as Json).error).toMatchObject({
        code: -32600,
        message: expect.stringMatching(/^JSON-RPC batches are not accepted on the SSE transport/),
      });
      // The stream goes on serving its client.
      expect(await listedNames(sse)).toEqual(TOOL_NAMES);
    });
  });

  /** `booking mcp` written to line by line (writeLine ends each line), as a host writes to it. */
  function rawStdio() {
    const host = spawnRawStdioHost(database.url, database.keys.readWrite);
    return { ...host, writeLine: (text: string) => host.write(`${text}\n`) };
  }

  it('stdio answers a line that is not JSON with a parse error, and one that is no message with Invalid Request', async () => {
    const host = rawStdio();
    host.writeLine('{"jsonrpc":"2.0","id":1,"method":"tools/list"');
    expect(await host.nextLine(1)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'Parse error: the line is not JSON.' },
    });
    host.writeLine('{"jsonrpc":"2.0","id":5,"methd":"tools/list"}');
    expect(await host.nextLine(2)).toEqual({
      jsonrpc: '2.0',
      id: 5,
      error: { code: -32600, message: 'Invalid Request: the line is not a JSON-RPC message.' },
    });
    // It goes on serving.
    host.writeLine(JSON.stringify(initialize('2025-11-25')));
    expect((await host.nextLine(3)).result.protocolVersion).toBe('2025-11-25');
    expect(await host.end()).toBe(0);
  });

  it('stdio refuses a batch before a revision is agreed and on 2025-11-25, and serves one on 2025-03-26', async () => {
    const modern = rawStdio();
    modern.writeLine(JSON.stringify([LOCATIONS_CALL(2)]));
    expect((await modern.nextLine(1)).error).toEqual({
      code: -32600,
      message:
        'JSON-RPC batches are not accepted before a protocol revision is agreed: only revision 2025-03-26 had them (2025-06-18 removed them). Send one message at a time.',
    });
    modern.writeLine(JSON.stringify(initialize('2025-11-25')));
    await modern.nextLine(2);
    modern.writeLine(JSON.stringify([LOCATIONS_CALL(2), LOCATIONS_CALL(3)]));
    expect(await modern.nextLine(3)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: refusedBatch('2025-11-25') },
    });
    expect(await modern.end()).toBe(0);

    const old = rawStdio();
    old.writeLine(JSON.stringify(initialize('2025-03-26')));
    expect((await old.nextLine(1)).result.protocolVersion).toBe('2025-03-26');
    old.writeLine(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    old.writeLine(
      JSON.stringify([LOCATIONS_CALL(2), { jsonrpc: '2.0', id: 3, nonsense: true }, LOCATIONS_CALL(4)]),
    );
    const answers = await old.nextLine(2);
    expect(Array.isArray(answers)).toBe(true);
    expect(
      answers
        .map((answer: Json) => [answer.id, answer.error?.code ?? answer.result.structuredContent.ok])
        .sort(),
    ).toEqual([
      [2, true],
      [3, -32600],
      [4, true],
    ]);
    // Two requests under one id: one of the answers could not be told from the other.
    old.writeLine(JSON.stringify([LOCATIONS_CALL(5), LOCATIONS_CALL(5)]));
    expect(await old.nextLine(3)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: 'Invalid Request: two requests of the batch have the id 5; give each request its own id.',
      },
    });
    expect(await old.end()).toBe(0);
  });
});

describe('links as resource_link items, from protocol revision 2025-06-18 on', () => {
  /** A deposit hold at Camden (payment_url and booking_page_url), made once by a read_write agent. */
  let hold: Json;
  beforeAll(async () => {
    await using(connectStreamableHttp(server.origin, server.t.keys.readWrite, 'modern'), async (mcp) => {
      const { slots } = await mcp.call('find_slots', {
        location: 'camden',
        services: 'full colour',
        date: 'next wednesday',
      });
      const booked = await mcp.raw('book', {
        location: 'camden',
        services: 'full colour',
        starts_at: slots[0].starts_at,
        client: { first_name: 'Ada', last_name: 'Reid', phone: '07911 123459' },
      });
      hold = booked.structuredContent;
      expect(hold).toMatchObject({ ok: true, status: 'pending_payment' });
      // book itself carries them.
      expect(booked.content.slice(1)).toEqual(linksOf(hold.booking));
    });
  });

  /** The resource_link items an answer about this booking carries, payment first. */
  function linksOf(booking: Json): Json[] {
    return [
      {
        type: 'resource_link',
        uri: booking.payment_url,
        name: 'payment_url',
        title: `Pay the deposit ${booking.reference}`,
        description: "The customer's page to pay the deposit that holds the booking.",
        mimeType: 'text/html',
      },
      {
        type: 'resource_link',
        uri: booking.booking_page_url,
        name: 'booking_page_url',
        title: `Booking page ${booking.reference}`,
        description: "The customer's page for the booking: finish it, pay, change or cancel it.",
        mimeType: 'text/html',
      },
    ];
  }

  it.each(ERAS)('Streamable HTTP, %s protocol: get_booking gives the text, then both links', async (era) => {
    await using(connectStreamableHttp(server.origin, server.t.keys.readWrite, era), async (mcp) => {
      const result = await mcp.raw('get_booking', { reference: hold.booking.reference });
      expect(result.content[0]).toMatchObject({ type: 'text' });
      expect(result.content.slice(1)).toEqual(linksOf(hold.booking));
    });
  });

  it('legacy SSE (the 1.x client) gives them too', async () => {
    await using(connectSse(server.origin, server.t.keys.readWrite), async (mcp) => {
      const result = await mcp.raw('get_booking', { reference: hold.booking.reference });
      expect(result.content.slice(1)).toEqual(linksOf(hold.booking));
    });
  });

  it.each(ERAS)('stdio, %s protocol: book gives them', async (era) => {
    // The checkout's test mode, which takes no money, so that a deposit can be asked for.
    const env = {
      DATABASE_URL: database.url,
      BOOKING_API_KEY: database.keys.readWrite,
      PAYMENT_PROVIDER: 'local',
      // Where the links lead (without it booking mcp gives none: mcp-json.test.ts).
      PUBLIC_BASE_URL: server.origin,
    };
    await using(connectStdio([], env, era), async (mcp) => {
      const { slots } = await mcp.call('find_slots', {
        location: 'camden',
        services: 'full colour',
        date: era === 'modern' ? 'next thursday' : 'next friday',
      });
      const booked = await mcp.raw('book', {
        location: 'camden',
        services: 'full colour',
        starts_at: slots[0].starts_at,
        client: { first_name: 'Ada', last_name: 'Reid', phone: '07911 123459' },
      });
      expect(booked.isError, JSON.stringify(booked.content)).toBeFalsy();
      const { booking } = booked.structuredContent as Json;
      expect(booked.content.slice(1)).toEqual(linksOf(booking));
    });
  });

  /** get_booking POSTed as a 2025 client of `revision` sends it; `viaSdk` adds _meta, which the direct lane leaves to the SDK. */
  async function rawGetBooking(revision: string | undefined, viaSdk: boolean): Promise<Json> {
    const response = await fetch(`${server.origin}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${server.t.keys.readWrite}`,
        'content-type': 'application/json',
        ...(revision !== undefined && { 'mcp-protocol-version': revision }),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 4,
        method: 'tools/call',
        params: {
          name: 'get_booking',
          arguments: { reference: hold.booking.reference },
          ...(viaSdk && { _meta: { progressToken: 'p1' } }),
        },
      }),
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as Json).result;
  }

  it.each([
    [undefined, 0],
    ['2025-03-26', 0],
    ['2025-06-18', 2],
    ['2025-11-25', 2],
  ] as const)(
    'POST /mcp of revision %s: %i links, the same whichever way the server answers',
    async (revision, count) => {
      const direct = await rawGetBooking(revision, false);
      const viaSdk = await rawGetBooking(revision, true);
      expect(direct.content).toHaveLength(1 + count);
      if (count > 0) expect(direct.content.slice(1)).toEqual(linksOf(hold.booking));
      expect(JSON.stringify(viaSdk.content)).toBe(JSON.stringify(direct.content));
    },
  );

  it('book of a series gives a link to each visit’s booking page, not only the first’s', async () => {
    await using(connectStreamableHttp(server.origin, server.t.keys.readWrite, 'modern'), async (mcp) => {
      const { slots } = await mcp.call('find_slots', {
        location: 'camden',
        services: 'cut',
        date: 'next tuesday',
      });
      const booked = await mcp.raw('book', {
        location: 'camden',
        services: 'cut',
        starts_at: slots.at(-1).starts_at,
        client: { first_name: 'Ada', last_name: 'Reid', phone: '07911 123459' },
        repeat: { every_weeks: 2, count: 3 },
      });
      const visits = (booked.structuredContent as Json).booking.series.occurrences as Json[];
      expect(visits).toHaveLength(3);
      const pages = visits.map((visit) => visit.booking_page_url);
      expect(pages.every((page) => typeof page === 'string')).toBe(true);
      const links = (booked.content as Json[]).filter((item) => item.type === 'resource_link');
      expect(links.map((link) => link.uri)).toEqual(pages);
      expect(links.map((link) => link.title)).toEqual(visits.map((v) => `Booking page ${v.reference}`));
    });
  });

  it('a read key, which never receives the links (design.md 9.1), gets no resource_link either', async () => {
    await using(connectStreamableHttp(server.origin, server.t.keys.read, 'modern'), async (mcp) => {
      const result = await mcp.raw('get_booking', { reference: hold.booking.reference });
      expect(result.content).toHaveLength(1);
    });
  });
});
