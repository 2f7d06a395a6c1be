import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { canReexecute, SERVER_ENV, SERVER_V8_FLAGS } from '../../bin/server-settings.js';
import { type RunningServer, startServer } from '../helpers/cli.ts';
import { onPostgres } from '../helpers/temp-database.ts';

/**
 * `booking serve` re-executes itself in place with the settings of bin/server-settings.js where Node
 * can (process.execve, Node 22.15+): the process the caller started, same id, runs with them, and
 * still prints its listening line and stops on SIGTERM. On an older Node it is not re-executed (it
 * sets the flags V8 reads at run time itself, which the process's command line does not show).
 */
const canExec = canReexecute();
let dir: string;
let server: RunningServer | undefined;

afterEach(async () => {
  await server?.stop('SIGTERM');
  server = undefined;
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(onPostgres)('booking serve', () => {
  it(`runs with its V8 and allocator settings${canExec ? '' : ' where Node can (not this one)'}`, async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'booking-settings-'));
    server = await startServer(['--port', '0'], { DATABASE_URL: `sqlite:${path.join(dir, 'b.sqlite')}` });
    const pid = server.process.pid!;
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    const healthy = await fetch(`${server.url}/healthz`);
    expect(healthy.status).toBe(200);
    if (!canExec) {
      expect(argv.some((arg) => SERVER_V8_FLAGS.includes(arg))).toBe(false);
      return;
    }
    expect(argv.slice(1, 1 + SERVER_V8_FLAGS.length)).toEqual(SERVER_V8_FLAGS);
    for (const [name, value] of Object.entries(SERVER_ENV)) expect(environ).toContain(`${name}=${value}`);
    expect(await server.stop('SIGTERM')).toBe(0);
    server = undefined;
  });
});
