import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli.ts';
import { TOOL_NAMES } from '../helpers/mcp-harness.ts';
import { type ChildDatabase, createChildDatabase } from '../helpers/mcp-servers.ts';

/**
 * mcp.json, as an MCP host reads it: its command and arguments started in the project folder, with its
 * environment and the host expanding ${BOOKING_API_KEY}. Only the database is pointed at a temporary
 * one (a file, or a PostgreSQL database in the suite's PostgreSQL run), so the test leaves
 * db/booking.sqlite alone.
 */
let database: ChildDatabase;
beforeAll(async () => {
  database = await createChildDatabase();
});
afterAll(() => database.dispose());

/** What hosts such as Claude Code expand from the environment (a literal here, not a template). */
const KEY_PLACEHOLDER = ['$', '{BOOKING_API_KEY}'].join('');

interface ServerEntry {
  command: string;
  args: string[];
  env: Record<string, string>;
}

describe('mcp.json', () => {
  it('starts the booking tools as written', async () => {
    const config = JSON.parse(readFileSync(new URL('../../mcp.json', import.meta.url), 'utf8')) as {
      mcpServers: Record<string, ServerEntry>;
    };
    const entry = config.mcpServers.booking!;
    expect(entry.env.BOOKING_API_KEY).toBe(KEY_PLACEHOLDER);
    // The shipped file works out of the box, on the embedded database: whatever the suite runs on.
    expect(entry.env.DATABASE_URL).toMatch(/^sqlite:/);
    const env = Object.fromEntries(
      Object.entries(entry.env).map(([name, value]) => [
        name,
        value.replace(KEY_PLACEHOLDER, database.keys.read),
      ]),
    );
    const transport = new StdioClientTransport({
      command: entry.command,
      args: entry.args,
      env: { PATH: process.env.PATH ?? '', ...env, DATABASE_URL: database.url },
      cwd: REPO_ROOT,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'mcp-json-host', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(TOOL_NAMES);
      const result = await client.callTool({ name: 'list_locations', arguments: {} });
      expect(result.structuredContent).toMatchObject({
        ok: true,
        locations: [{ slug: 'camden' }, { slug: 'islington' }],
      });
    } finally {
      await client.close();
    }
  });
});
