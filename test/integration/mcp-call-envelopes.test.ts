import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Era, Json } from '../helpers/mcp-harness.ts';
import {
  type ChildDatabase,
  connectSse,
  createChildDatabase,
  type ListeningApp,
  rawPost,
  startListeningApp,
} from '../helpers/mcp-servers.ts';
import { spawnRawStdioHost } from '../helpers/raw-stdio-host.ts';

/**
 * A tools/call whose envelope is malformed (no params, params.name missing or no text) is answered with
 * JSON-RPC's Invalid params (-32602) and a message saying what to send, not the SDK's zod issue list:
 * raw JSON-RPC over Streamable HTTP and stdio in both protocol generations, and over SSE.
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

const MODERN = '2026-07-28';
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw-host', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

const NEEDS_NAME =
  'tools/call needs params.name, the name of a tool as text, such as find_slots (tools/list names them all)';
const NEEDS_PARAMS =
  'tools/call needs params: an object with name, the name of a tool as text, such as find_slots, and arguments, an object of its named arguments.';

/**
 * A malformed params (undefined: none sent), and the message it is answered with; `modern` where a
 * 2026-07-28 request's is another.
 */
const MALFORMED: { label: string; params: unknown; message: string; modern?: string }[] = [
  {
    label: 'a number as name',
    params: { name: 4242, arguments: {} },
    message: `${NEEDS_NAME}; it was a number.`,
  },
  { label: 'null as name', params: { name: null, arguments: {} }, message: `${NEEDS_NAME}; it was null.` },
  {
    label: 'an object as name',
    params: { name: { caller: 'Jane Doe' } },
    message: `${NEEDS_NAME}; it was an object.`,
  },
  { label: 'a list as name', params: { name: ['find_slots'] }, message: `${NEEDS_NAME}; it was a list.` },
  { label: 'no name', params: { arguments: { location: 'camden' } }, message: `${NEEDS_NAME}.` },
  // A 2026-07-28 request carries its envelope in params._meta: without params it has params all the same.
  { label: 'no params', params: undefined, message: NEEDS_PARAMS, modern: `${NEEDS_NAME}.` },
];

/** What `shape` is answered with in `era`. */
function messageFor(shape: (typeof MALFORMED)[number], era: Era): string {
  return era === 'modern' ? (shape.modern ?? shape.message) : shape.message;
}

/** A tools/call as a host of `era` writes it: the 2026-07-28 envelope in params._meta. */
function toolCall(era: Era, id: number, params: unknown): Json {
  const withEnvelope = era === 'modern' ? { ...(params as object | undefined), _meta: ENVELOPE } : params;
  return {
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    ...(withEnvelope !== undefined && { params: withEnvelope }),
  };
}

/** Asserts the answer is the plain -32602 refusal, quoting nothing that was sent. */
function expectRefusal(answer: Json, id: number, message: string) {
  expect(answer).toEqual({ jsonrpc: '2.0', id, error: { code: -32602, message } });
  expect(answer.error.message).not.toMatch(/invalid_type|expected|received|4242|Jane/);
}

describe.each<Era>(['legacy', 'modern'])('a malformed tools/call over Streamable HTTP (%s)', (era) => {
  function post(body: Json, name?: unknown) {
    const headers: Record<string, string> = { authorization: `Bearer ${server.t.keys.readWrite}` };
    if (era === 'modern') {
      headers['mcp-protocol-version'] = MODERN;
      headers['mcp-method'] = 'tools/call';
      // The SDK's client mirrors params.name in Mcp-Name; a name that is no text has none to mirror.
      if (typeof name === 'string') headers['mcp-name'] = name;
    } else {
      headers['mcp-protocol-version'] = '2025-11-25';
    }
    return rawPost(server.origin, '/mcp', headers, body);
  }

  it.each(MALFORMED)('answers $label with what to send', async (shape) => {
    const { status, json } = await post(toolCall(era, 7, shape.params));
    expect(status).toBe(200);
    expectRefusal(json, 7, messageFor(shape, era));
  });

  it('answers any other params the SDK refuses in words too, not with its schema errors', async () => {
    // A 2025-11-25 task of the wrong form (2026-07-28 has no tasks in tools/call, and ignores it).
    const { status, json } = await post(
      toolCall(era, 6, { name: 'list_locations', task: 5 }),
      'list_locations',
    );
    expect(status).toBe(200);
    if (era === 'modern') return expect((json as Json).result.structuredContent).toMatchObject({ ok: true });
    expectRefusal(
      json,
      6,
      'tools/call params are not as MCP defines them: send name, the name of a tool as text, and arguments, an object of its named arguments; leave out anything else (such as task or _meta) unless it has the form MCP gives it.',
    );
  });

  it('answers well-formed calls and unknown names as before', async () => {
    const listed = await post(toolCall(era, 8, { name: 'list_locations', arguments: {} }), 'list_locations');
    expect(listed.status).toBe(200);
    expect((listed.json as Json).result.structuredContent).toMatchObject({ ok: true });
    const unknown = await post(toolCall(era, 9, { name: 'book_now', arguments: {} }), 'book_now');
    expect((unknown.json as Json).error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/^No tool is called "book_now"/),
    });
  });
});

function rawStdio() {
  return spawnRawStdioHost(database.url, database.keys.readWrite);
}

describe.each<Era>(['legacy', 'modern'])('a malformed tools/call over stdio (%s)', (era) => {
  it('answers each malformed shape with what to send, and well-formed calls as before', async () => {
    const host = rawStdio();
    if (era === 'legacy') await host.initialize();
    for (const [i, shape] of MALFORMED.entries()) host.send(toolCall(era, 10 + i, shape.params));
    host.send(toolCall(era, 2, { name: 'list_locations', arguments: {} }));
    for (const [i, shape] of MALFORMED.entries())
      expectRefusal(await host.answer(10 + i), 10 + i, messageFor(shape, era));
    expect((await host.answer(2)).result.structuredContent).toMatchObject({ ok: true });
    expect(await host.end()).toBe(0);
  });
});

describe('a malformed tools/call over SSE', () => {
  it('answers a name that is no text, and no params, with what to send', async () => {
    const mcp = await connectSse(server.origin, server.t.keys.readWrite);
    try {
      const client = mcp.client as unknown as {
        request(request: unknown, schema: unknown): Promise<unknown>;
      };
      for (const shape of MALFORMED) {
        const refusal = await client
          .request(
            { method: 'tools/call', ...(shape.params !== undefined && { params: shape.params }) },
            CallToolResultSchema,
          )
          .then(
            () => expect.unreachable(`${shape.label} was answered with a result`),
            (error: { code: number; message: string }) => error,
          );
        expect(refusal.code).toBe(-32602);
        expect(refusal.message).toBe(`MCP error -32602: ${shape.message}`);
      }
    } finally {
      await mcp.close();
    }
  });
});
