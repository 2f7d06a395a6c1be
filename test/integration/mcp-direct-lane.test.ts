import type { IncomingHttpHeaders } from 'node:http';
import { type AuthInfo, createMcpHandler, Server } from '@modelcontextprotocol/server';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDirectLane, type ToolResult } from '../../src/http/mcp-direct-lane.ts';
import { createMcpProtocol, type McpProtocol } from '../../src/http/mcp-protocol.ts';
import { principalOfKey } from '../../src/mcp/in-process-api.ts';
import { type ListeningApp, startListeningApp } from '../helpers/mcp-servers.ts';

/**
 * The direct lane of POST /mcp (src/http/mcp-direct-lane.ts) answers a well-formed tools/call without
 * the SDK's per-request server. Every request it takes must get the very bytes the SDK answers it
 * with; every request next to those that the SDK answers differently (or refuses) must be left to it.
 */
let server: ListeningApp;
let protocol: McpProtocol;
let authInfo: AuthInfo;
let readAuthInfo: AuthInfo;

beforeAll(async () => {
  server = await startListeningApp();
  const { t } = server;
  protocol = createMcpProtocol(t.deps, 1_000_000);
  const authOf = async (key: string): Promise<AuthInfo> => {
    const principal = await principalOfKey(t.deps, key);
    const caller = { principal, publicBaseUrl: server.origin, log: t.app.log };
    return { token: '', clientId: principal.apiKeyId, scopes: [principal.scope], extra: { caller } };
  };
  authInfo = await authOf(t.keys.readWrite);
  readAuthInfo = await authOf(t.keys.read);
});
afterAll(async () => {
  await server.t.close();
});

const MODERN = '2026-07-28';
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'lane-test', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const JSON_TYPE = { 'content-type': 'application/json' };

type Era = 'modern' | 'legacy';

/** A tools/call as the SDK's 2.x client sends it in each era: body and headers. */
function toolCall(era: Era, name: string, args?: Record<string, unknown>, id: string | number = 1) {
  const params = { name, ...(args !== undefined && { arguments: args }) };
  if (era === 'legacy') {
    return {
      body: { jsonrpc: '2.0', id, method: 'tools/call', params },
      headers: { ...JSON_TYPE, 'mcp-protocol-version': '2025-11-25' } as IncomingHttpHeaders,
    };
  }
  return {
    body: { jsonrpc: '2.0', id, method: 'tools/call', params: { ...params, _meta: ENVELOPE } },
    headers: {
      ...JSON_TYPE,
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call',
      'mcp-name': name,
    } as IncomingHttpHeaders,
  };
}

/** The SDK's answer, as POST /mcp hands it a request (mcp-routes.ts: JSON body already parsed). */
async function sdkAnswer(body: unknown, headers: IncomingHttpHeaders, auth = authInfo) {
  const webHeaders = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) webHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  webHeaders.set('accept', 'application/json, text/event-stream');
  const response = await protocol.answer(
    new Request(`${server.origin}/mcp`, { method: 'POST', headers: webHeaders }),
    auth,
    body,
  );
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

/** Asserts the lane takes the request and answers it byte for byte as the SDK does. */
async function expectSameAsSdk(body: unknown, headers: IncomingHttpHeaders, auth = authInfo) {
  const direct = protocol.answerDirectly(body, headers, auth);
  expect(direct, JSON.stringify({ body, headers })).toBeDefined();
  const sdk = await sdkAnswer(body, headers, auth);
  expect({ status: sdk.status, type: sdk.type }).toEqual({ status: 200, type: 'application/json' });
  expect(await direct).toBe(sdk.text);
}

const today = '2026-11-24';
const READ_CALLS: [string, Record<string, unknown> | undefined][] = [
  ['list_locations', undefined],
  ['list_locations', {}],
  ['get_location_info', { location: 'camden' }],
  ['list_services', { location: 'camden' }],
  ['find_slots', { location: 'camden', services: 'cut', date: today, time_of_day: 'afternoon' }],
  ['find_slots', { location: 'camden', services: 'cut', date: 'next friday' }],
  ['find_slots', { location: 'nowhere', services: 'cut', date: today }],
  ['find_slots', { location: 'camden', services: 'cut', date: 'the 31st of February' }],
  ['find_slots', { location: 'camden', services: 'cut', date: today, days: 99 }],
  ['find_slots', { location: 'camden', services: 'cut', date: today, surprise: true }],
  ['find_slots', {}],
  ['lookup_client', { phone: '+447911123456' }],
  ['lookup_client', { phone: 'not a phone' }],
  ['get_booking', { reference: 'NHC-NOPE00' }],
  // Write tools with arguments they refuse: answered without touching the diary.
  ['book', {}],
  ['book', { location: 'camden', services: 'cut', starts_at: 'soon' }],
  ['cancel', { reference: 42 }],
  ['take_message', {}],
];

describe('the direct lane of POST /mcp', () => {
  for (const era of ['modern', 'legacy'] as const) {
    it(`answers ${era} tools/calls exactly as the SDK does`, async () => {
      for (const [name, args] of READ_CALLS) {
        const { body, headers } = toolCall(era, name, args);
        await expectSameAsSdk(body, headers);
      }
      // String ids, a charset on the content type, a read key refused a write.
      const { body, headers } = toolCall(era, 'list_services', { location: 'camden' }, 'call-7');
      await expectSameAsSdk(body, { ...headers, 'content-type': 'application/json; charset=utf-8' });
      const refused = toolCall(era, 'book', {
        location: 'camden',
        services: 'cut',
        starts_at: '2026-11-25T10:00:00Z',
        client: { name: 'Jo Bloggs', phone: '+447911123456' },
      });
      await expectSameAsSdk(refused.body, refused.headers, readAuthInfo);
    });
  }

  it('answers 2025 calls without a version header, and with every 2025 version the SDK serves', async () => {
    const { body, headers } = toolCall('legacy', 'list_locations');
    const { 'mcp-protocol-version': _, ...none } = headers;
    await expectSameAsSdk(body, none);
    for (const version of ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07']) {
      await expectSameAsSdk(body, { ...headers, 'mcp-protocol-version': version });
    }
  });

  it('leaves to the SDK every request it cannot be sure of', () => {
    const modern = toolCall('modern', 'find_slots', { location: 'camden', services: 'cut', date: today });
    const legacy = toolCall('legacy', 'find_slots', { location: 'camden', services: 'cut', date: today });
    const withParams = (call: typeof modern, params: Record<string, unknown>) => ({
      ...call,
      body: { ...call.body, params: { ...call.body.params, ...params } },
    });
    const withoutHeader = (call: typeof modern, header: string) => {
      const headers = { ...call.headers };
      delete headers[header];
      return { ...call, headers };
    };
    const notTaken: [string, { body: unknown; headers: IncomingHttpHeaders }][] = [
      ['modern without MCP-Protocol-Version', withoutHeader(modern, 'mcp-protocol-version')],
      ['modern without Mcp-Method', withoutHeader(modern, 'mcp-method')],
      ['modern without Mcp-Name', withoutHeader(modern, 'mcp-name')],
      [
        'modern naming another tool in Mcp-Name',
        { ...modern, headers: { ...modern.headers, 'mcp-name': 'book' } },
      ],
      [
        'modern with Mcp-Name sent twice',
        { ...modern, headers: { ...modern.headers, 'mcp-name': 'find_slots, find_slots' } },
      ],
      [
        'modern with a 2025 version header',
        { ...modern, headers: { ...modern.headers, 'mcp-protocol-version': '2025-11-25' } },
      ],
      ['modern with a progress token', withParams(modern, { _meta: { ...ENVELOPE, progressToken: 1 } })],
      [
        'modern claiming a revision the SDK does not serve',
        withParams(modern, {
          _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2027-01-01' },
        }),
      ],
      [
        'modern with a malformed envelope',
        withParams(modern, { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/clientInfo': 'me' } }),
      ],
      ['a task-augmented call', withParams(modern, { task: { ttl: 1000 } })],
      ['legacy with a _meta', withParams(legacy, { _meta: { progressToken: 'p' } })],
      [
        'legacy with an unknown version',
        { ...legacy, headers: { ...legacy.headers, 'mcp-protocol-version': '1999-01-01' } },
      ],
      [
        'legacy with an Mcp-Name header',
        { ...legacy, headers: { ...legacy.headers, 'mcp-name': 'find_slots' } },
      ],
      ['a tool no one has', toolCall('legacy', 'make_coffee', {})],
      ['arguments that are not an object', withParams(legacy, { arguments: ['camden'] })],
      ['arguments null', withParams(legacy, { arguments: null })],
      ['a body with another member', { ...legacy, body: { ...legacy.body, extra: true } }],
      [
        'a notification',
        { ...legacy, body: { jsonrpc: '2.0', method: 'tools/call', params: legacy.body.params } },
      ],
      ['a batch', { ...legacy, body: [legacy.body] }],
      ['tools/list', { ...legacy, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } }],
      ['a text/plain body', { ...legacy, headers: { ...legacy.headers, 'content-type': 'text/plain' } }],
      ['no Content-Type', withoutHeader(legacy, 'content-type')],
      ['a null id', { ...legacy, body: { ...legacy.body, id: null } }],
      ['a wrong jsonrpc version', { ...legacy, body: { ...legacy.body, jsonrpc: '1.0' } }],
    ];
    const taken = notTaken.filter(([, { body, headers }]) =>
      protocol.answerDirectly(body, headers, authInfo),
    );
    expect(taken.map(([what]) => what)).toEqual([]);
  });

  it('takes only requests the SDK answers with the same bytes (property)', async () => {
    const name = fc.constantFrom(
      'list_locations',
      'list_services',
      'find_slots',
      'get_booking',
      'book',
      'nope',
    );
    const args = fc.option(
      fc.oneof(
        fc.constant({}),
        fc.constant({ location: 'camden' }),
        fc.constant({ location: 'camden', services: 'cut', date: today }),
        fc.constant({ reference: 'NHC-AAAAAA' }),
        fc.dictionary(fc.constantFrom('location', 'date', 'x'), fc.oneof(fc.string(), fc.integer())),
        fc.constant([1]),
        fc.constant(null),
      ),
      { nil: undefined },
    );
    // A request as the era's client sends it, with up to two of these changes made to it.
    const changes = [
      'no version header',
      'no method header',
      'no name header',
      'name header of another tool',
      'method header tools/list',
      'version header 2025-03-26',
      'version header 2030-01-01',
      'progress token',
      'other _meta',
      'extra param',
      'content type text/json',
      'content type with charset',
    ] as const;
    const request = fc.record({
      era: fc.constantFrom<Era>('modern', 'legacy'),
      id: fc.oneof(fc.integer(), fc.string({ maxLength: 4 }), fc.constant(1.5)),
      name,
      args,
      changes: fc.subarray([...changes], { maxLength: 2 }),
    });
    // A book with an argument set fc could make valid never happens: book needs a time and a client.
    let taken = 0;
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const call = toolCall(r.era, r.name, undefined, r.id);
        const params: Record<string, unknown> = { ...call.body.params };
        if (r.args !== undefined) params.arguments = r.args;
        const headers: IncomingHttpHeaders = { ...call.headers };
        const meta = params._meta as Record<string, unknown> | undefined;
        for (const change of r.changes) {
          if (change === 'no version header') delete headers['mcp-protocol-version'];
          if (change === 'no method header') delete headers['mcp-method'];
          if (change === 'no name header') delete headers['mcp-name'];
          if (change === 'name header of another tool') headers['mcp-name'] = 'list_locations';
          if (change === 'method header tools/list') headers['mcp-method'] = 'tools/list';
          if (change === 'version header 2025-03-26') headers['mcp-protocol-version'] = '2025-03-26';
          if (change === 'version header 2030-01-01') headers['mcp-protocol-version'] = '2030-01-01';
          if (change === 'progress token') params._meta = { ...meta, progressToken: 3 };
          if (change === 'other _meta') params._meta = { ...meta, x: 1 };
          if (change === 'extra param') params.cursor = 'x';
          if (change === 'content type text/json') headers['content-type'] = 'text/json';
          if (change === 'content type with charset')
            headers['content-type'] = 'application/json;charset=UTF-8';
        }
        const body = { ...call.body, params };
        const direct = protocol.answerDirectly(body, headers, authInfo);
        if (direct === undefined) return;
        taken += 1;
        const sdk = await sdkAnswer(body, headers);
        expect({ status: sdk.status, text: sdk.text }).toEqual({ status: 200, text: await direct });
      }),
      { numRuns: 300 },
    );
    // The generator reaches the lane often enough for the comparison to mean something.
    expect(taken).toBeGreaterThan(10);
  });

  it('is what POST /mcp answers a tools/call with, over a real connection', async () => {
    for (const era of ['modern', 'legacy'] as const) {
      const { body, headers } = toolCall(era, 'find_slots', {
        location: 'camden',
        services: 'cut',
        date: today,
      });
      const response = await fetch(`${server.origin}/mcp`, {
        method: 'POST',
        headers: {
          ...(headers as Record<string, string>),
          authorization: `Bearer ${server.t.keys.readWrite}`,
        },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(await response.text()).toBe((await sdkAnswer(body, headers)).text);
    }
  });

  it('encodes results of other shapes, and a tool that throws, as the SDK does', async () => {
    const serverInfo = { name: 'odd-tools', version: '9.9.9' };
    const odd: [string, () => ToolResult][] = [
      ['meta', () => ({ extra: 1, _meta: { mine: true }, content: [{ type: 'text', text: 'a' }] })],
      ['typed', () => ({ content: [{ type: 'text', text: 'b', more: 1 } as never], resultType: 'complete' })],
      [
        'error',
        () => ({ isError: true, content: [{ type: 'text', text: 'c' }], structuredContent: { x: 1 } }),
      ],
      [
        'throws',
        () => {
          throw Object.assign(new Error('broken'), { data: { why: 'test' } });
        },
      ],
    ];
    const results = new Map(odd);
    const run = async (name: string) => results.get(name)!();
    const sdk = createMcpHandler(
      () => {
        const server = new Server(serverInfo, { capabilities: { tools: {} } });
        server.setRequestHandler('tools/call', (request) => run(request.params.name) as never);
        return server;
      },
      { legacy: 'reject', responseMode: 'auto' },
    );
    const lane = createDirectLane({
      isServedTool: (name) => results.has(name),
      callTool: (params) => run(params.name),
      serverInfo,
    });
    for (const [name] of odd) {
      const { body, headers } = toolCall('modern', name, {});
      const direct = lane(body, headers, authInfo);
      expect(direct).toBeDefined();
      const webHeaders = new Headers(headers as Record<string, string>);
      webHeaders.set('accept', 'application/json, text/event-stream');
      const request = new Request('http://127.0.0.1/mcp', { method: 'POST', headers: webHeaders });
      const answer = await sdk.fetch(request, { authInfo, parsedBody: body });
      expect(await direct, name).toBe(await answer.text());
    }
  });
});
