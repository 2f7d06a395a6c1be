import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { linkDependencies, REPO_ROOT, startServer } from '../helpers/cli.ts';

/**
 * How `booking` runs its TypeScript sources (bin/booking.js): Node strips their types where it can
 * (22.18 and later, outside node_modules); elsewhere (Node 20 here, and a copy of the project installed
 * into another one's node_modules on every Node) it runs a bundle of them (bin/bundle.js). Either way
 * the commands work and a stack trace names the source file and line.
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
 * Whether `booking` runs the checkout's sources as Node strips them (Node 24), with the compile cache the
 * preparation fills; elsewhere it runs the bundle (bin/sources.js). Once, in the SQLite project: the
 * test has its own SQLite files, and starts two servers.
 */
const { NODE_STRIPS_OUR_TYPES } = (await import(
  pathToFileURL(path.join(REPO_ROOT, 'bin', 'sources.js')).href
)) as { NODE_STRIPS_OUR_TYPES: boolean };
const ONCE = process.env.TEST_DATABASE !== 'postgres';

describe.runIf(NODE_STRIPS_OUR_TYPES && ONCE)(
  'npm install preparing the sources (bin/prepare-sources.js)',
  () => {
    const PROBE = path.join(REPO_ROOT, 'test', 'helpers', 'loaded-builtins-probe.cjs');
    const INITIALIZE = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });

    /** Node's own modules a `booking serve --demo` loaded, up to and through its first MCP request. */
    async function builtinsOfAServer(compileCache: string): Promise<string> {
      const dir = mkdtempSync(path.join(host, 'serve-'));
      const loaded = path.join(dir, 'builtins.txt');
      const server = await startServer(['--demo', '--port', '0'], {
        DATABASE_URL: `sqlite:${path.join(dir, 'booking.sqlite')}`,
        NODE_COMPILE_CACHE: compileCache,
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
      return readFileSync(loaded, 'utf8');
    }

    it('leaves a server, MCP included, nothing to strip: it never loads the type stripper', async () => {
      const prepared = mkdtempSync(path.join(host, 'compile-cache-'));
      // NODE_OPTIONS as the server's but the probe: V8 flags there would key the cache apart.
      const run = spawnSync(process.execPath, [path.join(REPO_ROOT, 'bin', 'prepare-sources.js')], {
        env: { ...process.env, NODE_COMPILE_CACHE: prepared, NODE_OPTIONS: '' },
        encoding: 'utf8',
        timeout: 120_000,
      });
      expect(run.status).toBe(0);
      expect(await builtinsOfAServer(prepared)).not.toContain('amaro');
      // The control: the same server on an empty cache strips its sources itself.
      expect(await builtinsOfAServer(mkdtempSync(path.join(host, 'compile-cache-')))).toContain('amaro');
    }, 120_000);
  },
);
