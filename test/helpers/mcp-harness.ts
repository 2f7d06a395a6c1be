import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { type CallToolResult, Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createMcpHandler, InMemoryTransport } from '@modelcontextprotocol/server';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { buildMcpServer, TOOLS } from '../../src/mcp/build-server.ts';
import { HttpBookingApi } from '../../src/mcp/http-api.ts';
import { InProcessBookingApi, principalOfKey } from '../../src/mcp/in-process-api.ts';
import { ANSWER_ENVELOPE } from '../../src/mcp/tool-kit.ts';
import { toolDefinition } from '../../src/mcp/tool-schemas.ts';
import { startTestApp, TEST_START, type TestApp } from './test-app.ts';

/** The project's own demo catalogue (two London locations, Islington with Booking Protection). */
export function demoCatalogue(): unknown {
  return JSON.parse(readFileSync(new URL('../../db/demo-catalogue.json', import.meta.url), 'utf8'));
}

/** The tools a client must see, in order (the contract of design.md section 7). */
export const TOOL_NAMES = [
  'list_locations',
  'get_location_info',
  'list_services',
  'find_slots',
  'lookup_client',
  'register_client',
  'book',
  'join_waitlist',
  'get_booking',
  'reschedule',
  'cancel',
  'take_message',
  'send_link',
];

/** The tools a read key sees in tools/list: those that only read (design.md 9.3). */
export const READ_TOOL_NAMES = [
  'list_locations',
  'get_location_info',
  'list_services',
  'find_slots',
  'lookup_client',
  'get_booking',
];

// biome-ignore lint/suspicious/noExplicitAny: tool results are JSON; tests read them freely.
export type Json = any;

export interface McpHarness {
  client: Client;
  /** Calls a tool and returns its structuredContent (failing the test on an MCP error result). */
  call(name: string, args?: Record<string, unknown>): Promise<Json>;
  /** Calls a tool and returns the whole result (MCP errors included). */
  raw(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  /** How many tools/call requests were made so far. */
  readonly calls: number;
  close(): Promise<void>;
}

/**
 * Which protocol generation an in-process client speaks: `legacy` (2025, the initialize handshake,
 * over the SDK's in-memory transport) or `modern` (2026-07-28, stateless, through the SDK's
 * createMcpHandler driven by fetch in process, as the SDK's docs test it).
 */
export type Era = 'legacy' | 'modern';

/** The SDK's client talking to the tools in this process, as the key's organisation. */
export async function connectInProcess(
  t: TestApp,
  key: string,
  era: Era = 'legacy',
  /** Modern era only: hears the text of every HTTP answer, as a host receives it. */
  onAnswer?: (text: string) => void,
): Promise<McpHarness> {
  const faults: unknown[] = [];
  const newServer = () =>
    buildMcpServer({
      apiFor: async () =>
        InProcessBookingApi.forToolCall(t.deps, await principalOfKey(t.deps, key), {
          publicBaseUrl: 'http://localhost:8080',
        }),
      onFault: (error) => faults.push(error),
    });
  const checkFaults = () => expect(faults).toEqual([]);
  if (era === 'modern') {
    const handler = createMcpHandler(newServer, { legacy: 'reject' });
    const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(
      new StreamableHTTPClientTransport(new URL('http://in-process.test/mcp'), {
        fetch: async (url, init) => {
          const response = await handler.fetch(new Request(url, init));
          onAnswer?.(await response.clone().text());
          return response;
        },
      }),
    );
    expect(client.getProtocolEra()).toBe('modern');
    return harness(client, async () => {
      await client.close();
      await handler.close();
      checkFaults();
    });
  }
  const server = newServer();
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client(CLIENT_INFO);
  await client.connect(clientSide);
  return harness(client, async () => {
    await client.close();
    await server.close();
    checkFaults();
  });
}

const CLIENT_INFO = { name: 'test-agent', version: '1.0.0' };

/**
 * The members each tool may answer with: what its outputSchema lists in tools/list (ok and its
 * payload), the failure envelope every tool shares, and the failure members it declares.
 */
const DECLARED_MEMBERS = new Map(
  TOOLS.map((tool) => [
    tool.name,
    new Set([
      ...Object.keys(toolDefinition(tool).outputSchema.properties ?? {}),
      ...ANSWER_ENVELOPE,
      ...(tool.failureMembers ?? []),
    ]),
  ]),
);

/**
 * Every member of an answer is one its tool declares (its outputSchema, the failure envelope, the
 * failure members it uses: tool-kit.ts): checked on every call any test makes.
 */
function expectDeclared(name: string, result: CallToolResult): void {
  const declared = DECLARED_MEMBERS.get(name);
  if (!declared || !result.structuredContent) return;
  for (const member of Object.keys(result.structuredContent)) {
    expect(declared.has(member), `${name} answered ${member}, which its outputSchema does not declare`).toBe(
      true,
    );
  }
}

/**
 * The tools as `booking mcp --base-url` runs them: over the test app's REST API, listening on a
 * loopback port, through the SDK's client. The tools read today on the app's clock, as the API does:
 * "tomorrow" is the test's tomorrow on both sides.
 */
export async function connectOverRest(t: TestApp): Promise<McpHarness> {
  if (!t.app.server.listening) await t.app.listen({ port: 0, host: '127.0.0.1' });
  const origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const server = buildMcpServer({
    apiFor: async () =>
      new HttpBookingApi({ baseUrl: `${origin}/v1`, apiKey: t.keys.readWrite, now: () => t.clock.nowMs() }),
    onFault: (error) => {
      throw error;
    },
  });
  const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(clientSide);
  return harness(client, async () => {
    await client.close();
    await server.close();
  });
}

/** A harness around any connected SDK client. */
export function harness(client: Client, close: () => Promise<void> = () => client.close()): McpHarness {
  let calls = 0;
  let listed: Promise<unknown> | undefined;
  const raw = async (name: string, args: Record<string, unknown> = {}) => {
    calls += 1;
    // The tools listed first, as a host lists them: the SDK's client then validates every answer's
    // structuredContent against the outputSchema it was given (ok false answers too), so each call
    // any test makes is one a validating host accepts. A listing refused (a key revoked meanwhile)
    // is left to the call to answer for.
    listed ??= client.listTools().catch(() => {
      listed = undefined;
    });
    await listed;
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    expectDeclared(name, result);
    return result;
  };
  return {
    client,
    raw,
    async call(name, args) {
      const result = await raw(name, args);
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      // The same JSON is given as text, for hosts that only read text.
      const text = (result.content[0] as { text: string }).text;
      expect(JSON.parse(text)).toEqual(result.structuredContent);
      return result.structuredContent as Json;
    },
    get calls() {
      return calls;
    },
    close,
  };
}

/** The text of an MCP error result (isError true). */
export function errorText(result: CallToolResult): string {
  expect(result.isError).toBe(true);
  return (result.content[0] as { text: string }).text;
}

/**
 * For a test file: the app on the demo catalogue (a rate limit no test reaches) and an SDK client
 * connected to it in process, made before its tests, the clock put back at TEST_START after each, both
 * closed after the last. Read `t` and `mcp` inside tests and hooks, once they exist.
 */
export function demoMcp(): { readonly t: TestApp; readonly mcp: McpHarness } {
  const made: { t?: TestApp; mcp?: McpHarness } = {};
  beforeAll(async () => {
    made.t = await startTestApp({ catalogues: [demoCatalogue()], limits: { requestsPerMinute: 100_000 } });
    made.mcp = await connectInProcess(made.t, made.t.keys.readWrite);
  });
  afterEach(() => made.t?.clock.set(TEST_START));
  afterAll(async () => {
    await made.mcp?.close();
    await made.t?.close();
  });
  return {
    get t() {
      if (!made.t) throw new Error('demoMcp: the app exists once beforeAll has run.');
      return made.t;
    },
    get mcp() {
      if (!made.mcp) throw new Error('demoMcp: the client exists once beforeAll has run.');
      return made.mcp;
    },
  };
}
