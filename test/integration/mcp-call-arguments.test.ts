import type { CallToolResult } from '@modelcontextprotocol/client';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorText, type McpHarness } from '../helpers/mcp-harness.ts';
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
 * A tools/call whose `arguments` is null, as strict function-calling hosts send it for a tool that
 * takes none (list_locations), is a call without arguments (design.md 9.3: null means absent); one whose
 * `arguments` is no object is told so in the tools' own words, not the SDK's zod text. On every
 * transport, both protocol generations where the transport speaks both.
 */

let server: ListeningApp;
let database: ChildDatabase;
beforeAll(async () => {
  server = await startListeningApp();
  database = await createChildDatabase();
});
afterAll(async () => {
  await server?.t.close();
  await database?.dispose();
});

/** A tools/call sent as the host wrote it, `arguments` of any JSON value. */
async function callWith(mcp: McpHarness, name: string, args: unknown): Promise<CallToolResult> {
  const client = mcp.client as unknown as {
    request(request: unknown, schema: unknown): Promise<CallToolResult>;
  };
  return client.request({ method: 'tools/call', params: { name, arguments: args } }, CallToolResultSchema);
}

const transports: [string, () => Promise<McpHarness>][] = [
  [
    'Streamable HTTP, 2026-07-28',
    () => connectStreamableHttp(server.origin, server.t.keys.readWrite, 'modern'),
  ],
  ['Streamable HTTP, 2025', () => connectStreamableHttp(server.origin, server.t.keys.readWrite, 'legacy')],
  ['SSE', () => connectSse(server.origin, server.t.keys.readWrite)],
  [
    'stdio, 2026-07-28',
    () =>
      connectStdio([], { DATABASE_URL: database.url, BOOKING_API_KEY: database.keys.readWrite }, 'modern'),
  ],
  [
    'stdio, 2025',
    () =>
      connectStdio([], { DATABASE_URL: database.url, BOOKING_API_KEY: database.keys.readWrite }, 'legacy'),
  ],
];

describe.each(transports)('tools/call arguments over %s', (_label, connect) => {
  it('takes arguments null as no arguments', async () => {
    const mcp = await connect();
    try {
      const result = await callWith(mcp, 'list_locations', null);
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ ok: true });
    } finally {
      await mcp.close();
    }
  });

  it('answers arguments that are no object with the tools own hint', async () => {
    const mcp = await connect();
    try {
      for (const args of [['camden'], 'camden']) {
        const result = await callWith(mcp, 'list_services', args);
        expect(result.isError).toBe(true);
        expect(errorText(result)).toMatch(/list_services: arguments must be an object of named arguments/);
        expect(errorText(result)).not.toMatch(/invalid_type|expected record/);
      }
    } finally {
      await mcp.close();
    }
  });
});
