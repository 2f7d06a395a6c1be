import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { linkDependencies, REPO_ROOT, startServer } from '../helpers/cli.ts';

/**
 * How `booking` runs its TypeScript sources (bin/booking.js): a bundle of them (bin/bundle.js), from its
 * checkout and from a copy of the project installed into another one's node_modules, on every Node. The
 * commands work and a stack trace names the source file and line.
 */
const host = mkdtempSync(path.join(tmpdir(), 'booking-host-'));
afterAll(() => rmSync(host, { recursive: true, force: true }));

/** Where the error of an unknown DATABASE_URL scheme is thrown, in `root`'s sources. */
function unsupportedSchemeThrownAt(root: string): string {
  const file = path.join(root, 'src', 'data', 'database.ts');
  const lines = readFileSync(file, 'utf8').split('\n');
  const line = lines.findIndex(
    (text, i) => /throw new Error\($/.test(text) && /Unsupported DATABASE_URL/.test(lines[i + 1] ?? ''),
  );
  expect(line).toBeGreaterThan(0);
  return `at openDatabase (${pathToFileURL(file).href}:${line + 1}:${lines[line]!.indexOf('throw') + 7})`;
}

/** A failing command with LOG_LEVEL=debug, which prints the error's stack trace. */
function failWithStack(bin: string, cwd: string) {
  return spawnSync(process.execPath, [bin, 'migrate'], {
    cwd,
    env: { ...process.env, DATABASE_URL: 'nowhere:at-all', LOG_LEVEL: 'debug' },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('booking run from its checkout', () => {
  it('names the TypeScript source and line in a stack trace', () => {
    const run = failWithStack(path.join(REPO_ROOT, 'bin', 'booking.js'), REPO_ROOT);
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('error: Unsupported DATABASE_URL scheme');
    expect(run.stderr).toContain(unsupportedSchemeThrownAt(REPO_ROOT));
    expect(run.stderr).not.toContain('through tsx');
  });
});

describe('booking installed as a copy under node_modules', () => {
  // Three bundle builds and a run through tsx: past the suite's 30 s on a loaded machine (34 s seen).
  it('runs its commands, and names its own sources in a stack trace', () => {
    const copy = path.join(host, 'node_modules', 'booking-engine');
    mkdirSync(copy, { recursive: true });
    for (const part of ['bin', 'src', 'db', 'package.json', 'tsconfig.json'])
      cpSync(path.join(REPO_ROOT, part), path.join(copy, part), { recursive: true });
    // The copy borrows this checkout's dependencies; its bundle is kept in its own node_modules.
    const modules = linkDependencies(copy);
    writeFileSync(path.join(host, 'package.json'), '{"private":true}');
    const bin = path.join(copy, 'bin', 'booking.js');

    const run = spawnSync(process.execPath, [bin, '--help'], {
      cwd: host,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('Usage: booking [options] [command]');

    // It ran its own bundle, not tsx (which would have said so on stderr).
    const cache = path.join(modules, '.cache', 'booking-bundle');
    const { entry } = JSON.parse(readFileSync(path.join(cache, 'manifest.json'), 'utf8')) as {
      entry: string;
    };

    const failed = failWithStack(bin, host);
    expect(failed.status).toBe(1);
    expect(failed.stderr).toContain(unsupportedSchemeThrownAt(copy));

    // A bundle cut short on disk: this run goes through tsx and says so, the next one builds afresh.
    writeFileSync(path.join(cache, entry), 'export const cut = (');
    const help = () =>
      spawnSync(process.execPath, [bin, '--help'], { cwd: host, encoding: 'utf8', timeout: 60_000 });
    const fellBack = help();
    expect(fellBack.status).toBe(0);
    expect(fellBack.stdout).toContain('Usage: booking [options] [command]');
    expect(fellBack.stderr).toMatch(/^booking: running the sources through tsx \(no bundle: .+\)\n$/);
    const rebuilt = help();
    expect(rebuilt.stderr).toBe('');
    expect(rebuilt.status).toBe(0);
    expect(readFileSync(path.join(cache, entry), 'utf8')).not.toBe('export const cut = (');
  }, 120_000);
});

/**
 * A server run from the checkout runs the bundle on every Node, never the TypeScript sources: Node 24
 * would strip their types itself with its stripper (amaro, 17 to 44 MB), which the bundle never loads.
 * Once, in the SQLite project: the test has its own SQLite file, and starts a server.
 */
describe.runIf(process.env.TEST_DATABASE !== 'postgres')('booking serve run from its checkout', () => {
  const PROBE = path.join(REPO_ROOT, 'test', 'helpers', 'loaded-builtins-probe.cjs');
  const INITIALIZE = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  });

  it('loads no type stripper, MCP included: it runs the bundle', async () => {
    const dir = mkdtempSync(path.join(host, 'serve-'));
    const loaded = path.join(dir, 'builtins.txt');
    const server = await startServer(['--demo', '--port', '0'], {
      DATABASE_URL: `sqlite:${path.join(dir, 'booking.sqlite')}`,
      // An empty compile cache: Node 24 running the sources would strip them all here.
      NODE_COMPILE_CACHE: mkdtempSync(path.join(host, 'compile-cache-')),
      NODE_OPTIONS: `--require ${PROBE}`,
      LOADED_BUILTINS_FILE: loaded,
    });
    const key = /(bk_[0-9A-Za-z]{40})/.exec(server.stdout())?.[1];
    const answer = await fetch(new URL('/mcp', server.url), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: INITIALIZE,
    });
    expect(answer.status).toBe(200);
    expect(await server.stop()).toBe(0);
    const builtins = readFileSync(loaded, 'utf8');
    expect(builtins).toContain('NativeModule');
    expect(builtins).not.toContain('amaro');
    expect(server.stderr()).not.toContain('through tsx');
  }, 120_000);
});
