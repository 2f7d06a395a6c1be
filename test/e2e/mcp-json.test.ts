import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import { REPO_ROOT, type RunningServer, startServer } from '../helpers/cli.ts';
import { type Era, errorText, READ_TOOL_NAMES } from '../helpers/mcp-harness.ts';
import { type ChildDatabase, connectStdio, createChildDatabase } from '../helpers/mcp-servers.ts';

/**
 * mcp.json (written by `npm install`), as an MCP host reads it: its command and arguments started from
 * a directory of the host's (not the project's), with its environment and the host expanding
 * ${BOOKING_API_KEY}. The database is pointed at a temporary one (a file, or a PostgreSQL database in
 * the suite's PostgreSQL run), so the test leaves db/booking.sqlite alone.
 *
 * The entry is written for this checkout as `npm install` writes it (writtenEntry), not read from the
 * checkout's mcp.json: that file is generated and not in git, and a git worktree sharing another
 * checkout's install (node_modules a link to it, .gitignore) has none of its own, or a copy of the
 * other checkout's, naming that checkout's bin/booking.js and database.
 */
let database: ChildDatabase;
let elsewhere: string;
let project: ServerEntry;
beforeAll(async () => {
  database = await createChildDatabase();
  elsewhere = mkdtempSync(path.join(tmpdir(), 'mcp-host-'));
  project = writtenEntry();
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

function entry(file: string): ServerEntry {
  const config = JSON.parse(readFileSync(file, 'utf8')) as { mcpServers: Record<string, ServerEntry> };
  return config.mcpServers.booking!;
}

/** What package.json's postinstall runs to write the project's mcp.json (no file named: the project's). */
const WRITE_MCP_JSON = 'node bin/write-mcp-json.js';

/**
 * The mcp.json entry `npm install` writes for this checkout: its postinstall's script, run from the
 * checkout with `env` set as npm install would have it (by default none of PAYMENT_PROVIDER,
 * PUBLIC_BASE_URL and PORT), writing to a file of the test's instead of the project's mcp.json.
 */
function writtenEntry(env: Record<string, string> = {}): ServerEntry {
  const file = path.join(tmpdir(), `mcp-${randomUUID()}.json`);
  const writing = spawnSync(process.execPath, [path.join(REPO_ROOT, 'bin', 'write-mcp-json.js'), file], {
    cwd: REPO_ROOT,
    env: { ...process.env, PAYMENT_PROVIDER: '', PUBLIC_BASE_URL: '', PORT: '', ...env },
    encoding: 'utf8',
  });
  expect(writing.status, writing.stderr).toBe(0);
  try {
    return entry(file);
  } finally {
    rmSync(file);
  }
}

/** The entry's environment as a host expands it, plus what the test adds. */
function hostEnv(key: string, extra: Record<string, string>, of = project): Record<string, string> {
  const expanded = Object.fromEntries(
    Object.entries(of.env).map(([name, value]) => [name, value.replace(KEY_PLACEHOLDER, key)]),
  );
  return { ...expanded, ...extra };
}

describe('mcp.json', () => {
  it('is written by npm install, for the checkout it is installed in', () => {
    const { scripts } = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    // The project's own file (no other named), by the script writtenEntry runs.
    expect(scripts.postinstall?.split('&&').map((step) => step.trim())).toContain(WRITE_MCP_JSON);
  });

  it('names this checkout by absolute paths and keeps the key as a placeholder', () => {
    const { command, args, env } = project;
    expect(path.isAbsolute(command)).toBe(true);
    expect(args).toEqual([path.join(REPO_ROOT, 'bin', 'booking.js'), 'mcp']);
    // What makes its answers the server's: the demo's payment provider and the address `npm start`
    // prints (no PORT or PUBLIC_BASE_URL was set when the suite's npm install ran).
    expect(env).toEqual({
      BOOKING_API_KEY: KEY_PLACEHOLDER,
      PAYMENT_PROVIDER: 'local',
      PUBLIC_BASE_URL: 'http://127.0.0.1:8080',
    });
  });

  it.each<Era>(['modern', 'legacy'])(
    'starts the booking tools from another directory (%s protocol)',
    async (era) => {
      const { command, args } = project;
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
    const { command, args } = project;
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

describe('booking mcp without PUBLIC_BASE_URL', () => {
  it('gives no link, and refuses what the customer would have to finish through one, saying so', async () => {
    const { command, args } = project;
    const { PUBLIC_BASE_URL: _unset, ...env } = hostEnv(database.keys.readWrite, {
      DATABASE_URL: database.url,
    });
    const mcp = await connectStdio([], env, 'modern', { command, args, cwd: elsewhere });
    try {
      const colour = { location: 'camden', services: 'full colour' };
      const found = await mcp.call('find_slots', { ...colour, date: 'next friday' });
      const client = { first_name: 'Cy', last_name: 'Moss', phone: '07911 123457' };
      const refused = errorText(
        await mcp.raw('book', { ...colour, starts_at: found.slots[0].starts_at, client }),
      );
      // The caller hears it cannot be paid online now (no link is given to read out); the operator
      // reads why on stderr (below).
      expect(refused).toBe(ERROR_CATALOGUE.payments_unavailable.hint);

      // A booking that needs no link is made, and carries none rather than one to an unserved port.
      const cut = { location: 'camden', services: 'cut' };
      const slots = await mcp.call('find_slots', { ...cut, date: 'next friday' });
      const booked = await mcp.call('book', { ...cut, starts_at: slots.slots[0].starts_at, client });
      expect(booked).toMatchObject({ ok: true, status: 'confirmed' });
      expect(booked.booking).toMatchObject({ payment_url: null, booking_page_url: null });
    } finally {
      await mcp.close();
    }
    expect(mcp.stderr()).toContain('PUBLIC_BASE_URL is not set: links are unavailable');
  });
});

describe('mcp.json written for a server on another port', () => {
  let server: RunningServer;
  let written: ServerEntry;
  beforeAll(async () => {
    // The server as `npm start` runs it on this database (the demo's provider), on a port of its own.
    server = await startServer(['--port', '0'], { DATABASE_URL: database.url, PAYMENT_PROVIDER: 'local' });
    written = writtenEntry({ PORT: new URL(server.url).port });
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** GET of a link the agent would read out or send: the page the customer lands on. */
  async function open(link: string): Promise<{ status: number; text: string }> {
    const response = await fetch(link);
    return { status: response.status, text: await response.text() };
  }

  it('books a deposit service and a protected location over stdio with links the server answers', async () => {
    expect(written.env.PUBLIC_BASE_URL).toBe(server.url);
    const { command, args } = written;
    const mcp = await connectStdio(
      [],
      hostEnv(database.keys.readWrite, { DATABASE_URL: database.url }, written),
      'modern',
      { command, args, cwd: elsewhere },
    );
    try {
      // Camden's full colour takes a deposit: held until it is paid, at the server's checkout.
      const colour = { location: 'camden', services: 'full colour' };
      const found = await mcp.call('find_slots', { ...colour, date: 'next wednesday' });
      const held = await mcp.call('book', {
        ...colour,
        starts_at: found.slots[0].starts_at,
        client: { first_name: 'Ada', last_name: 'Reid', phone: '07911 123459' },
      });
      expect(held).toMatchObject({ ok: true, status: 'pending_payment' });
      expect(held.booking.payment_url).toMatch(new RegExp(`^${server.url}/`));
      const checkout = await open(held.booking.payment_url);
      expect(checkout.status).toBe(200);
      expect(checkout.text).toContain(held.booking.reference);
      expect((await open(held.booking.booking_page_url)).status).toBe(200);

      // Islington has Booking Protection: a hold the customer finishes on the booking's page.
      const cut = { location: 'islington', services: 'cut' };
      const slots = await mcp.call('find_slots', { ...cut, date: 'next thursday' });
      const protectedHold = await mcp.call('book', {
        ...cut,
        starts_at: slots.slots[0].starts_at,
        client: { first_name: 'Bea', last_name: 'Lund', phone: '07911 123458' },
      });
      expect(protectedHold).toMatchObject({ ok: true, status: 'pending_confirmation' });
      expect(protectedHold.booking.booking_page_url).toMatch(new RegExp(`^${server.url}/p/manage/`));
      const page = await open(protectedHold.booking.booking_page_url);
      expect(page.status).toBe(200);
      expect(page.text).toContain(protectedHold.booking.reference);
    } finally {
      await mcp.close();
    }
  });
});
