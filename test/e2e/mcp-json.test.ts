import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import { REPO_ROOT } from '../helpers/cli.ts';
import { type Era, errorText, READ_TOOL_NAMES } from '../helpers/mcp-harness.ts';
import { type ChildDatabase, connectStdio, createChildDatabase } from '../helpers/mcp-servers.ts';

/**
 * mcp.json (written by `npm install`), as an MCP host reads it: its command and arguments started from
 * a directory of the host's (not the project's), with its environment and the host expanding
 * ${BOOKING_API_KEY}. The database is pointed at a temporary one (a file, or a PostgreSQL database in
 * the suite's PostgreSQL run), so the test leaves db/booking.sqlite alone.
 */
let database: ChildDatabase;
let elsewhere: string;
beforeAll(async () => {
  database = await createChildDatabase();
  elsewhere = mkdtempSync(path.join(tmpdir(), 'mcp-host-'));
});
afterAll(async () => {
  await database.dispose();
  rmSync(elsewhere, { recursive: true, force: true });
});

/** What hosts such as Claude Code expand from the environment (a literal here, not a template). */
const KEY_PLACEHOLDER = ['$', '{BOOKING_API_KEY}'].join('');

interface ServerEntry {
  command: string;
  args: string[];
  env: Record<string, string>;
}

function entry(): ServerEntry {
  const config = JSON.parse(readFileSync(path.join(REPO_ROOT, 'mcp.json'), 'utf8')) as {
    mcpServers: Record<string, ServerEntry>;
  };
  return config.mcpServers.booking!;
}

/** The entry's environment as a host expands it, plus what the test adds. */
function hostEnv(key: string, extra: Record<string, string>): Record<string, string> {
  const expanded = Object.fromEntries(
    Object.entries(entry().env).map(([name, value]) => [name, value.replace(KEY_PLACEHOLDER, key)]),
  );
  return { ...expanded, ...extra };
}

describe('mcp.json', () => {
  it('names this checkout by absolute paths and keeps the key as a placeholder', () => {
    const { command, args, env } = entry();
    expect(path.isAbsolute(command)).toBe(true);
    expect(args).toEqual([path.join(REPO_ROOT, 'bin', 'booking.js'), 'mcp']);
    expect(env).toEqual({ BOOKING_API_KEY: KEY_PLACEHOLDER });
  });

  it.each<Era>(['modern', 'legacy'])(
    'starts the booking tools from another directory (%s protocol)',
    async (era) => {
      const { command, args } = entry();
      const mcp = await connectStdio([], hostEnv(database.keys.read, { DATABASE_URL: database.url }), era, {
        command,
        args,
        cwd: elsewhere,
      });
      try {
        const { tools } = await mcp.client.listTools();
        // The entry's key here is a read key: it sees the tools it can use (design.md 9.3).
        expect(tools.map((tool) => tool.name)).toEqual(READ_TOOL_NAMES);
        expect(await mcp.call('list_locations', {})).toMatchObject({
          ok: true,
          locations: [{ slug: 'camden' }, { slug: 'islington' }],
        });
      } finally {
        await mcp.close();
      }
      expect(readdirSync(elsewhere)).toEqual([]);
    },
  );

  it('says that there is no database rather than that the key was rejected, and creates none', async () => {
    const { command, args } = entry();
    const missing = `.tmp/no-such-${randomUUID()}.sqlite`;
    const mcp = await connectStdio(
      [],
      hostEnv(database.keys.read, { DATABASE_URL: `sqlite:${missing}` }),
      'modern',
      { command, args, cwd: elsewhere },
    );
    try {
      const text = errorText(await mcp.raw('list_locations'));
      expect(text).toContain(ERROR_CATALOGUE.database_unavailable.hint);
      expect(text).toContain(path.join(REPO_ROOT, missing));
      expect(text).not.toContain(ERROR_CATALOGUE.invalid_api_key.hint);
    } finally {
      await mcp.close();
    }
    expect(existsSync(path.join(REPO_ROOT, missing))).toBe(false);
    expect(readdirSync(elsewhere)).toEqual([]);
  });
});
