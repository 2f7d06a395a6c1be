import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DateTime } from 'luxon';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import { REPO_ROOT } from '../helpers/cli.ts';
import { prepareDatabase } from '../helpers/served-database.ts';
import { onPostgres } from '../helpers/temp-database.ts';

/**
 * `booking serve` on a disk that fills up: its SQLite file lives on a small tmpfs of its own, mounted
 * in a mount namespace made for the server (unshare, as an unprivileged user may), which the test fills
 * through /proc/<pid>/root. A full disk must show as itself in the log (not as the failed rollback that
 * follows it), reads must go on, /healthz must say the database cannot write, and all of it must clear
 * once there is room again.
 */
const TMPFS_BYTES = 16 * 1024 * 1024;
const canMountPrivately =
  process.platform === 'linux' &&
  spawnSync('unshare', ['--user', '--map-root-user', '--mount', 'true']).status === 0;

let dir: string;
let child: ChildProcess | undefined;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'booking-full-'));
});
afterEach(() => {
  child?.kill('SIGKILL');
  child = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** `booking serve` with its database on a private tmpfs at `mount`; its URL and its stderr so far. */
async function serveOnTmpfs(mount: string, prepared: string, key: string) {
  const script = `mount -t tmpfs -o size=${TMPFS_BYTES} tmpfs "$1" && cp "$2" "$1/booking.sqlite" && exec "$3" "$4" serve --port 0`;
  child = spawn(
    'unshare',
    [
      '--user',
      '--map-root-user',
      '--mount',
      'sh',
      '-c',
      script,
      'sh',
      mount,
      prepared,
      process.execPath,
      'bin/booking.js',
    ],
    {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        LOG_LEVEL: 'warn',
        DATABASE_URL: `sqlite:${path.join(mount, 'booking.sqlite')}`,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
  });
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${stderr}`)), 30_000);
    child!.stdout!.on('data', (chunk) => {
      stdout += chunk;
      const match = /listening on (\S+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child!.once('exit', (code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
  });
  const call = (method: string, url_: string, body?: unknown) =>
    fetch(`${url}${url_}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  // The server's own view of the mount, where the test writes.
  const inside = `/proc/${child.pid}/root${mount}`;
  return { call, inside, stderr: () => stderr };
}

/**
 * Fills the file system at `folder` with a file, after making sure it is the small tmpfs (a mistake
 * here must never fill a real disk): at most its size, written until it has no room left.
 */
function fill(folder: string): string {
  const { blocks, bsize } = statfsSync(folder);
  if (blocks * bsize > TMPFS_BYTES)
    throw new Error(`${folder} is not the ${TMPFS_BYTES}-byte tmpfs; not filling it`);
  const filler = path.join(folder, 'filler');
  const fd = openSync(filler, 'wx');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (let written = 0; written <= TMPFS_BYTES; written += chunk.length) writeSync(fd, chunk);
    throw new Error('the tmpfs took more than its size');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  return filler;
}

type Call = (method: string, url: string, body?: unknown) => Promise<Response>;

/** A booking of a free Cut at Soho a week ahead for `clientId`, as POST /v1/bookings takes it. */
async function freeCut(call: Call, clientId: string) {
  const services = (await (await call('GET', '/v1/locations/soho/services')).json()) as {
    data: { id: string; name: string }[];
  };
  const cut = services.data.find((service) => service.name === 'Cut')!;
  const from = DateTime.now().setZone('Europe/London').plus({ days: 7 }).toISODate();
  const availability = (await (
    await call('GET', `/v1/locations/soho/availability?service_ids=${cut.id}&date=${from}&days=7`)
  ).json()) as { data: { slots: { starts_at: string; staff_id: string }[] } };
  const slot = availability.data.slots[0]!;
  return {
    location_slug: 'soho',
    service_ids: [cut.id],
    staff_id: slot.staff_id,
    client_id: clientId,
    starts_at: slot.starts_at,
  };
}

describe.runIf(!onPostgres && canMountPrivately)('a full disk under booking serve', () => {
  it('logs the storage error, keeps reads going, fails /healthz, and recovers when there is room', async () => {
    const prepared = path.join(dir, 'prepared.sqlite');
    const [key] = await prepareDatabase(`sqlite:${prepared}`, {
      keys: [{ organisation: 'acme-hair', rateLimitPerMinute: 100_000 }],
    });
    const mount = path.join(dir, 'mount');
    mkdirSync(mount);
    const server = await serveOnTmpfs(mount, prepared, key!);
    const client = (n: number) => ({
      first_name: 'Disk',
      last_name: `Full${n}`,
      email: `full${n}@example.com`,
    });

    const created = await server.call('POST', '/v1/clients', client(1));
    expect(created.status).toBe(201);
    const clientId = ((await created.json()) as { data: { id: string } }).data.id;
    expect((await server.call('GET', '/healthz')).status).toBe(200);
    // The first listing stores the organisation's cursor secret: done while there is room.
    expect((await server.call('GET', '/v1/locations')).status).toBe(200);
    const booking = await freeCut(server.call, clientId);

    const filler = fill(server.inside);
    // A write the full disk refuses is 503 database_unavailable, as /healthz says it, not a fault;
    // REST and MCP alike, and nothing of it is kept.
    const unavailable = {
      code: 'database_unavailable',
      message:
        'The database cannot store changes just now (its disk is full or failing); nothing was changed. Try again later.',
    };
    const refused = await server.call('POST', '/v1/clients', client(2));
    expect(refused.status).toBe(503);
    expect(await refused.json()).toEqual({ error: unavailable });
    const refusedBooking = await server.call('POST', '/v1/bookings', booking);
    expect(refusedBooking.status).toBe(503);
    expect(await refusedBooking.json()).toEqual({ error: unavailable });
    const tool = await server.call('POST', '/mcp', {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'take_message', arguments: { caller_name: 'Disk', message: 'Call me back' } },
    });
    expect(tool.status).toBe(200);
    const toolAnswer = (await tool.json()) as { result: { isError?: boolean; content: { text: string }[] } };
    expect(toolAnswer.result.isError).toBe(true);
    expect(toolAnswer.result.content[0]!.text).toBe(
      `${ERROR_CATALOGUE.database_unavailable.hint} ${unavailable.message}`,
    );
    // Reads go on: the caller can still find slots and clients.
    expect((await server.call('GET', '/v1/locations')).status).toBe(200);
    expect((await server.call('GET', '/v1/clients?email=full1%40example.com')).status).toBe(200);
    const health = await server.call('GET', '/healthz');
    expect(health.status).toBe(503);
    expect(((await health.json()) as { error: { code: string } }).error.code).toBe('database_unavailable');
    expect(server.stderr()).toContain('database or disk is full');
    expect(server.stderr()).toContain('SQLITE_FULL');
    expect(server.stderr()).not.toContain('cannot rollback');

    rmSync(filler);
    expect((await server.call('POST', '/v1/clients', client(3))).status).toBe(201);
    expect((await server.call('POST', '/v1/bookings', booking)).status).toBe(201);
    expect((await server.call('GET', '/healthz')).status).toBe(200);
    const kept = await server.call('GET', '/v1/clients?email=full2%40example.com');
    expect(kept.status).toBe(404);
  }, 60_000);
});
