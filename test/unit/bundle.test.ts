import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { type CliResult, linkDependencies, outcomeOf, REPO_ROOT } from '../helpers/cli.ts';

/**
 * bin/bundle.js and bin/bundle-stack-traces.js, which run the sources on every Node (and in a copy
 * installed under node_modules): a small project of TypeScript files is bundled and run in a child
 * process, as bin/booking.js runs the real one.
 */
const root = mkdtempSync(path.join(tmpdir(), 'booking-bundle-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const BUNDLE = pathToFileURL(path.join(REPO_ROOT, 'bin', 'bundle.js')).href;
const STACK_TRACES = pathToFileURL(path.join(REPO_ROOT, 'bin', 'bundle-stack-traces.js')).href;

let project: string;
let cacheDir: string;
let entry: string;
beforeEach(() => {
  project = mkdtempSync(path.join(root, 'project-'));
  // The bundle is kept in the project's node_modules and imports packages from there, as the real one
  // does; the packages are this checkout's.
  linkDependencies(project);
  cacheDir = path.join(project, 'node_modules', '.cache', 'booking-bundle');
  entry = path.join(project, 'src', 'main.ts');
  write('src/main.ts', [
    "import { DateTime } from 'luxon';",
    "import { where } from './lib/where.ts';",
    'interface Report { where: ReturnType<typeof where>; later: string; offset: number }',
    "const later = process.argv.includes('--later') ? (await import('./later.ts')).later() : 'not loaded';",
    "const report: Report = { where: where(), later, offset: DateTime.fromISO('2026-03-29T01:30:00Z', { zone: 'Europe/London' }).offset };",
    'console.log(JSON.stringify(report));',
  ]);
  write('src/lib/where.ts', [
    'export function where(): { url: string; dirname: string; filename: string } {',
    '  return { url: import.meta.url, dirname: import.meta.dirname, filename: import.meta.filename };',
    '}',
  ]);
  write('src/later.ts', [
    '(globalThis as { laterLoaded?: boolean }).laterLoaded = true;',
    "export const later = (): string => 'loaded on demand';",
  ]);
});

function write(file: string, lines: string[]): void {
  mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
  writeFileSync(path.join(project, file), `${lines.join('\n')}\n`);
}

/** The child process of the last runBundled, for a test that must talk to it while it runs. */
let running: ReturnType<typeof spawn> | undefined;

type Run = CliResult;

/** Bundles the project (bin/bundle.js) in a child process and runs the bundle there with `args`. */
function runBundled(args: string[] = [], { mapStacks = false, packagesInside = false } = {}): Promise<Run> {
  const script = [
    `const { bundledEntry } = await import(${JSON.stringify(BUNDLE)});`,
    `const { entryUrl: url, dirUrl } = await bundledEntry(${JSON.stringify(entry)}, ${JSON.stringify(cacheDir)}, { packagesInside: ${packagesInside} });`,
    mapStacks ? `(await import(${JSON.stringify(STACK_TRACES)})).mapBundleStackTraces(dirUrl);` : '',
    // --wait: the process stays up, having loaded its bundle, until a line comes on stdin.
    "if (process.argv.includes('--wait')) { process.stderr.write('waiting\\n'); await new Promise((resolve) => process.stdin.once('data', resolve)); process.stdin.destroy(); }",
    "process.stderr.write('entry ' + url + '\\n');",
    'await import(url);',
  ].join('\n');
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, '--', ...args], {
    cwd: project,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  running = child;
  return outcomeOf(child);
}

function entryOf(run: Run): string {
  const match = /^entry (\S+)$/m.exec(run.stderr);
  if (!match) throw new Error(`no bundle entry reported: ${run.stderr}`);
  return match[1]!;
}

function reportOf(run: Run): { where: { url: string; dirname: string; filename: string }; later: string } {
  expect(run.stderr).not.toMatch(/Error/);
  expect(run.status).toBe(0);
  return JSON.parse(run.stdout);
}

describe('the bundle booking mcp runs (packagesInside)', () => {
  it('holds the listed packages, imports the others from node_modules, and is rebuilt when a source changes', async () => {
    write('src/lib/where.ts', [
      "import { z } from 'zod';",
      'export function where(): { url: string; dirname: string; filename: string } {',
      '  return z.object({ url: z.string(), dirname: z.string(), filename: z.string() }).parse({',
      '    url: import.meta.url, dirname: import.meta.dirname, filename: import.meta.filename,',
      '  });',
      '}',
    ]);
    const first = await runBundled([], { packagesInside: true });
    expect(reportOf(first)).toMatchObject({ later: 'not loaded', offset: 60 });
    const code = readdirSync(cacheDir)
      .filter((name) => name.endsWith('.mjs'))
      .map((name) => readFileSync(path.join(cacheDir, name), 'utf8'))
      .join('\n');
    // zod (in PACKAGES_INSIDE) is in the bundle; luxon is not, and is imported from node_modules.
    expect(code).not.toMatch(/from\s*["']zod["']/);
    expect(code).toMatch(/from\s*["']luxon["']/);
    expect(await runBundled([], { packagesInside: true }).then(entryOf)).toBe(entryOf(first));

    write('src/later.ts', ["export const later = (): string => 'changed';"]);
    const changed = await runBundled(['--later'], { packagesInside: true });
    expect(reportOf(changed).later).toBe('changed');
    expect(entryOf(changed)).not.toBe(entryOf(first));
  });
});

describe('the sources bundled as booking runs them', () => {
  it('run as written: import.meta names each source file, packages come from node_modules', async () => {
    const run = await runBundled();
    const where = path.join(project, 'src', 'lib', 'where.ts');
    expect(reportOf(run)).toEqual({
      where: { url: pathToFileURL(where).href, dirname: path.dirname(where), filename: where },
      later: 'not loaded',
      offset: 60,
    });
    expect(entryOf(run)).toMatch(/\/node_modules\/\.cache\/booking-bundle\/cli-[A-Z0-9]+\.mjs$/);
  });

  it('keep what is imported on demand in a chunk of its own, loaded only when asked for', async () => {
    const withoutIt = await runBundled();
    expect(reportOf(withoutIt).later).toBe('not loaded');
    const bundle = readFileSync(new URL(entryOf(withoutIt)), 'utf8');
    expect(bundle).not.toContain('loaded on demand');
    expect(reportOf(await runBundled(['--later'])).later).toBe('loaded on demand');
  });

  it('are built once and reused while no source changes, and rebuilt when one does', async () => {
    const first = entryOf(await runBundled());
    const manifest = readFileSync(path.join(cacheDir, 'manifest.json'), 'utf8');
    const second = await runBundled();
    expect(entryOf(second)).toBe(first);
    // Reused, not rebuilt: the manifest is the one written by the first build.
    expect(readFileSync(path.join(cacheDir, 'manifest.json'), 'utf8')).toBe(manifest);

    write('src/later.ts', ["export const later = (): string => 'edited';"]);
    const edited = await runBundled(['--later']);
    expect(reportOf(edited).later).toBe('edited');
    // Only the chunk changed; the entry imports it by its new name, so the entry is new too.
    expect(entryOf(edited)).not.toBe(first);
  });

  it('are rebuilt when the tsconfig.json esbuild reads changes', async () => {
    // Class fields defined as JavaScript defines them, or assigned in the constructor (TypeScript's
    // legacy behaviour): a setter on the prototype tells them apart.
    write('src/later.ts', [
      'class Base { set field(value: string) { (globalThis as { viaSetter?: string }).viaSetter = value; } }',
      "class Derived extends Base { field = 'x'; }",
      'new Derived();',
      "export const later = (): string => ((globalThis as { viaSetter?: string }).viaSetter ? 'assigned' : 'defined');",
    ]);
    write('tsconfig.json', ['{ "compilerOptions": { "target": "ES2022" } }']);
    expect(reportOf(await runBundled(['--later'])).later).toBe('defined');
    write('tsconfig.json', [
      '{ "compilerOptions": { "target": "ES2022", "useDefineForClassFields": false } }',
    ]);
    expect(reportOf(await runBundled(['--later'])).later).toBe('assigned');
  });

  it('are rebuilt when a source they were made from is gone', async () => {
    await runBundled();
    write('src/lib/where.ts', ["export { where } from './where-now.ts';"]);
    write('src/lib/where-now.ts', [
      "export const where = () => ({ url: 'moved', dirname: '', filename: '' });",
    ]);
    expect(reportOf(await runBundled()).where.url).toBe('moved');
    rmSync(path.join(project, 'src', 'lib', 'where-now.ts'));
    write('src/lib/where.ts', ["export const where = () => ({ url: 'back', dirname: '', filename: '' });"]);
    expect(reportOf(await runBundled()).where.url).toBe('back');
  });

  it('are built by several processes at once without one reading another’s half-written file', async () => {
    const runs = await Promise.all(Array.from({ length: 6 }, () => runBundled()));
    for (const run of runs) expect(reportOf(run).later).toBe('not loaded');
    expect(new Set(runs.map(entryOf)).size).toBe(1);
    expect(readdirSync(cacheDir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('keep the files of a build a process alive still runs, and remove them once none does', async () => {
    // A process started from the first build, which has not yet loaded what it loads on demand.
    const server = runBundled(['--wait', '--later']);
    const first = running!;
    await new Promise<void>((resolve) =>
      first.stderr!.on('data', (chunk) => String(chunk).includes('waiting') && resolve()),
    );
    const ageEverything = () => {
      const hourAgo = new Date(Date.now() - 60 * 60 * 1000);
      for (const name of readdirSync(cacheDir)) utimesSync(path.join(cacheDir, name), hourAgo, hourAgo);
    };
    const stray = path.join(cacheDir, 'chunk-STRAY.mjs');
    writeFileSync(stray, '');
    ageEverything();
    // A new build, made while it runs: it keeps the files of the first, old as they are.
    write('src/later.ts', ["export const later = (): string => 'second build';"]);
    expect(reportOf(await runBundled(['--later'])).later).toBe('second build');
    expect(existsSync(stray)).toBe(false);
    first.stdin!.write('go\n');
    expect(reportOf(await server).later).toBe('loaded on demand');

    // Once no process runs it, the next build removes it.
    const firstFiles = readdirSync(cacheDir);
    ageEverything();
    write('src/later.ts', ["export const later = (): string => 'third build';"]);
    expect(reportOf(await runBundled(['--later'])).later).toBe('third build');
    const left = readdirSync(cacheDir);
    expect(
      firstFiles.filter((name) => name.startsWith('cli-') && !left.includes(name)).length,
    ).toBeGreaterThan(0);
    expect(left.filter((name) => name.endsWith('.in-use'))).toEqual([]);
  });
});

describe('stack traces of the bundled sources', () => {
  beforeEach(() => {
    write('src/main.ts', ["import { fail } from './lib/fail.ts';", 'fail();']);
    write('src/lib/fail.ts', [
      '// A comment and a type, so the line in the bundle differs from the one in the source.',
      'type Reason = string;',
      'export function fail(): never {',
      "  const reason: Reason = 'on purpose';",
      "  const here = import.meta.url; throw new Error(reason + ' in ' + here.slice(-7));",
      '}',
    ]);
  });

  it('name the source file, line and column, not the bundle', async () => {
    const run = await runBundled([], { mapStacks: true });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain('Error: on purpose in fail.ts');
    const failFile = pathToFileURL(path.join(project, 'src', 'lib', 'fail.ts')).href;
    // The column of `new`, on a line whose import.meta the bundle replaced.
    const column = '  const here = import.meta.url; throw new Error('.indexOf('new') + 1;
    expect(run.stderr).toContain(`at fail (${failFile}:5:${column})`);
    expect(run.stderr).toContain(`${pathToFileURL(entry).href}:2:1`);
  });

  it('keep the bundle’s place where its map is gone', async () => {
    const url = entryOf(await runBundled([], { mapStacks: true }));
    rmSync(`${new URL(url).pathname}.map`);
    const run = await runBundled([], { mapStacks: true });
    expect(run.stderr).toMatch(new RegExp(`at fail \\(${url.replaceAll('.', '\\.')}:\\d+:\\d+\\)`));
  });
});
