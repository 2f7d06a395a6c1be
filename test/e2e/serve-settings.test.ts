import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import {
  canReexecute,
  SERVER_ENV,
  SERVER_SEMI_SPACE_BYTES,
  SERVER_V8_FLAGS,
} from '../../bin/server-settings.js';
import { REPO_ROOT, type RunningServer, startServer } from '../helpers/cli.ts';
import { onPostgres } from '../helpers/temp-database.ts';

/**
 * `booking serve` re-executes itself in place with the settings of bin/server-settings.js where Node
 * can (process.execve, Node 22.15+): the process the caller started, same id, runs with them, and
 * still prints its listening line and stops on SIGTERM. On an older Node it is not re-executed (it
 * sets the flags V8 reads at run time itself, which the process's command line does not show).
 */
const canExec = canReexecute();
let dir: string | undefined;
let server: RunningServer | undefined;

afterEach(async () => {
  await server?.stop('SIGTERM');
  server = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const SEMI_SPACE = SERVER_SEMI_SPACE_BYTES;

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

  it('holds its young generation to the semi-space size on every Node, and keeps a size the user gives', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'booking-settings-'));
    dir = folder;
    const reportFile = path.join(folder, 'young-generation');
    /** What the young generation of a server started with these NODE_OPTIONS can hold, in bytes. */
    const youngGenerationOfServer = async (nodeOptions: string) => {
      const started = await startServer(['--port', '0'], {
        DATABASE_URL: `sqlite:${path.join(folder, 'b.sqlite')}`,
        NODE_OPTIONS: `${nodeOptions} --require ${path.join(REPO_ROOT, 'test/helpers/young-generation-probe.cjs')}`,
        YOUNG_GENERATION_FILE: reportFile,
      });
      server = started;
      started.process.kill('SIGUSR2');
      let report = '';
      for (let waited = 0; report === '' && waited < 5_000; waited += 50) {
        await sleep(50);
        report = existsSync(reportFile) ? readFileSync(reportFile, 'utf8') : '';
      }
      if (report === '') throw new Error('the probe in the server wrote nothing within 5 s');
      rmSync(reportFile);
      expect(await started.stop('SIGTERM')).toBe(0);
      server = undefined;
      return Number(report);
    };
    // Loading the server's modules alone grows a young generation Node leaves alone past the size.
    expect(await youngGenerationOfServer('--max-semi-space-size=16')).toBeGreaterThan(SEMI_SPACE);
    const held = await youngGenerationOfServer('');
    expect(held).toBeGreaterThan(SEMI_SPACE / 2);
    expect(held).toBeLessThanOrEqual(SEMI_SPACE);
  });
});

/**
 * Where Node cannot re-execute (Node 20), capYoungGeneration holds the process's young generation to the
 * size by steering V8's growth factor; it works on every Node, so it is checked on each in a process of
 * its own: two bursts of allocation, with a full collection between them that lets V8 shrink the young
 * generation (Node 24 does), must end at the size, where the same process without the cap grows past it.
 * No database: run once, with the SQLite project.
 */
describe.skipIf(onPostgres)('capYoungGeneration', () => {
  const script = `
    import { capYoungGeneration, semiSpaceBytes } from ${JSON.stringify(new URL('../../bin/server-settings.js', import.meta.url).href)};
    if (process.argv[1] === 'cap') capYoungGeneration(${SEMI_SPACE});
    const kept = [];
    const burst = (objects, then) => {
      const step = () => {
        for (let i = 0; i < 10_000; i += 1) kept.push({ i });
        if (kept.length > 1_000_000) kept.splice(0, 500_000);
        objects -= 10_000;
        if (objects > 0) setImmediate(step); else then();
      };
      step();
    };
    const sizes = [];
    // A pause before and after the forced collection: the steering hears of collections after the
    // fact, and what it promises is for reports that arrive before the next growth (a report late
    // behind a growth is the risk bin/server-settings.js documents, which a loaded machine can show:
    // 50 ms was once too short in a fresh-clone CI run, the second burst growing by the first's factor).
    const pause = (then) => setTimeout(then, 250);
    burst(2_000_000, () => pause(() => {
      sizes.push(semiSpaceBytes());
      kept.length = 0;
      globalThis.gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
      sizes.push(semiSpaceBytes());
      pause(() => burst(2_000_000, () => {
        sizes.push(semiSpaceBytes());
        console.log(JSON.stringify(sizes));
      }));
    }));`;
  const semiSpaces = (mode: 'cap' | 'none') => {
    const result = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script, mode], {
      encoding: 'utf8',
    });
    expect(result.stderr).toBe('');
    return JSON.parse(result.stdout) as [number, number, number];
  };

  it('holds the semi-spaces to the size, growing back to it after V8 shrinks them', () => {
    const [afterBurst, afterCollection, afterSecondBurst] = semiSpaces('cap');
    // From V8's initial 1 MiB, one step straight to the size.
    expect(afterBurst).toBe(SEMI_SPACE);
    expect(afterSecondBurst).toBeLessThanOrEqual(SEMI_SPACE);
    // Where the collection shrank them (Node 24's does; Node 20's leaves them), they grew back.
    if (afterCollection < afterBurst) expect(afterSecondBurst).toBeGreaterThan(afterCollection);
    else expect(afterCollection).toBe(afterBurst);
  });

  it('is what holds them: without it the same allocation grows them past the size', () => {
    const [afterBurst, , afterSecondBurst] = semiSpaces('none');
    expect(afterBurst).toBeGreaterThan(SEMI_SPACE);
    expect(afterSecondBurst).toBeGreaterThan(SEMI_SPACE);
  });
});
