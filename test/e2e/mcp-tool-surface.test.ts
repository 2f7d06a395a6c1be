import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import { type Era, errorText, type McpHarness, READ_TOOL_NAMES, TOOL_NAMES } from '../helpers/mcp-harness.ts';
import {
  type ChildDatabase,
  connectSse,
  connectStdio,
  connectStreamableHttp,
  createChildDatabase,
  type ListeningApp,
  startListeningApp,
} from '../helpers/mcp-servers.ts';

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
        expect(await listedNames(reader)).toEqual(READ_TOOL_NAMES);
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
