import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli.ts';

/**
 * The project installed into another one's node_modules as a copy (`npm install <git URL>` or a
 * tarball copies the files): Node refuses to strip types under node_modules, so `booking` must go
 * through tsx there, on every Node. The copy borrows this checkout's dependencies through a link.
 */
const host = mkdtempSync(path.join(tmpdir(), 'booking-host-'));
afterAll(() => rmSync(host, { recursive: true, force: true }));

describe('booking installed as a copy under node_modules', () => {
  it('runs its commands', () => {
    const copy = path.join(host, 'node_modules', 'booking-engine');
    mkdirSync(copy, { recursive: true });
    for (const part of ['bin', 'src', 'db', 'package.json', 'tsconfig.json'])
      cpSync(path.join(REPO_ROOT, part), path.join(copy, part), { recursive: true });
    symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(copy, 'node_modules'), 'dir');
    writeFileSync(path.join(host, 'package.json'), '{"private":true}');

    const run = spawnSync(process.execPath, [path.join(copy, 'bin', 'booking.js'), '--help'], {
      cwd: host,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('Usage: booking [options] [command]');
  });
});
