import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { REPO_ROOT, runCli } from '../helpers/cli.ts';
import { freshDatabasePerTest } from '../helpers/temp-database.ts';

/**
 * `booking serve`'s log when whatever reads its stderr (a log shipper, a supervisor) falls behind:
 * the pipe fills, writes are refused for a while (EAGAIN), and the lines wait in memory. A graceful
 * stop must still write every one of them before the process ends, once the reader catches up.
 */
const fresh = freshDatabasePerTest('booking-log-stall-');
const REQUESTS = 1_500;

describe('the server log with a reader that falls behind', () => {
  it('loses no line when the server stops while its stderr is full', async () => {
    const catalogue = path.join(fresh.dir, 'catalogue.json');
    writeFileSync(catalogue, JSON.stringify(smallCatalogue()));
    expect(runCli(['import', catalogue], fresh.env).status).toBe(0);
    const created = runCli(
      [
        'keys',
        'create',
        '--org',
        'acme-hair',
        '--label',
        'e2e',
        '--scope',
        'read',
        '--rate-limit',
        '100000',
        '--json',
      ],
      fresh.env,
    );
    expect(created.status, created.stderr).toBe(0);
    const key: string = JSON.parse(created.stdout).key;

    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/booking.js'), 'serve', '--port', '0'], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...fresh.env, LOG_LEVEL: 'info', ORGANISATION_REQUESTS_PER_MINUTE: '100000' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Nobody reads stderr until the server has stopped: its pipe fills and stays full.
    child.stderr.pause();
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      const url = await listeningUrl(child);
      for (let sent = 0; sent < REQUESTS; sent += 50) {
        await Promise.all(
          Array.from({ length: 50 }, async () => {
            const response = await fetch(`${url}/v1/locations`, {
              headers: { authorization: `Bearer ${key}` },
            });
            expect(response.status).toBe(200);
            await response.arrayBuffer();
          }),
        );
      }
      // Let the gathered lines be tried against the full pipe, then stop the server.
      await new Promise((resolve) => setTimeout(resolve, 300));
      child.kill('SIGTERM');
      // The reader catches up only once the server is well into its exit.
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3_000))]);
      let stderr = '';
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
      });
      const closed = new Promise((resolve) => child.once('close', resolve));
      child.stderr.resume();
      await closed;
      expect(await exited).toBe(0);
      const lines = stderr.trimEnd().split('\n');
      const parsed = lines.map((line) => {
        try {
          return JSON.parse(line) as { msg?: string };
        } catch {
          return { msg: `not JSON: ${line.slice(0, 80)}` };
        }
      });
      expect(parsed.filter((line) => line.msg?.startsWith('not JSON'))).toEqual([]);
      expect(parsed.filter((line) => line.msg === 'request completed')).toHaveLength(REQUESTS);
      expect(parsed.at(-1)?.msg).toBe('stopped');
    } finally {
      child.kill('SIGKILL');
    }
  }, 90_000);

  it('stops on SIGTERM when nobody reads its stderr any more (a log shipper that died)', async () => {
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/booking.js'), 'serve', '--port', '0'], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...fresh.env, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      const url = await listeningUrl(child);
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 300));
      // The reader goes away while the server is idle: its next write to stderr, the lines of its
      // stop written at exit, is refused with EPIPE (sonic-boom retried it forever).
      child.stderr.destroy();
      child.kill('SIGTERM');
      const code = await Promise.race([
        exited,
        new Promise((resolve) => setTimeout(() => resolve('hung'), 15_000)),
      ]);
      expect(code).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);
});

/** The URL the server prints once it listens. */
function listeningUrl(child: ReturnType<typeof spawn>): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
      const match = /listening on (\S+)/.exec(stdout);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${stdout}`)));
  });
}
