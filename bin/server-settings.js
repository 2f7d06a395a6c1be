// The V8 and allocator settings `booking serve` runs with (docs/decisions/memory-under-load.md),
// shared by bin/booking.js and the benchmarks' full-stack servers. Plain JavaScript: bin/booking.js
// reads it before TypeScript can be loaded.

import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';
import { isMainThread } from 'node:worker_threads';

/**
 * V8 flags. Node's young generation grows to two 16 MiB (Node 20) or 32 MiB (Node 24) semi-spaces,
 * nearly all of it resident; with 4 MiB ones the mixed load's server scavenges about 12 times as
 * often, each scavenge shorter (1.9 s of its 35 s of CPU in 40 s, against 0.7 s). Its old generation
 * grew to four times what it kept before V8 collected it; growing 60 % past what the last full
 * collection kept holds it close. Not 30 %, which held it closer (the mixed load's peak on Node 20:
 * 211 MB against 225) but left the marker so little room that it caught up in steps of 13 to 20 ms
 * on the request path, every second or so under MCP traffic: MCP `book` p99 14 to 15 ms against 8
 * (docs/decisions/memory-under-load.md). The price of both flags: 8 % more CPU per request under that load
 * (1.34 ms against 1.24), for a peak of 165 MB against 350 to 430 (Node 24, with 30 %).
 */
export const SERVER_V8_FLAGS = ['--max-semi-space-size=4', '--heap-growing-percent=60'];

/** The semi-space size of SERVER_V8_FLAGS (given in MiB there), in bytes. */
export const SERVER_SEMI_SPACE_BYTES =
  Number(SERVER_V8_FLAGS.find((flag) => optionName(flag) === '--max-semi-space-size').split('=')[1]) *
  2 ** 20;

/** Environment for the C library: two malloc arenas instead of one per thread that ever allocated. */
export const SERVER_ENV = { MALLOC_ARENA_MAX: '2' };

/**
 * What the current process lacks of the settings: the flags whose option it was not started with (a
 * flag given by the user, on the command line or in NODE_OPTIONS, is theirs to keep), and the
 * environment variables it does not have.
 */
export function missingServerSettings(execArgv = process.execArgv, env = process.env) {
  const given = givenOptions(execArgv, env);
  const flags = SERVER_V8_FLAGS.filter((flag) => !given.includes(optionName(flag)));
  const environment = Object.fromEntries(
    Object.entries(SERVER_ENV).filter(([name]) => env[name] === undefined),
  );
  return { flags, environment };
}

/** The options this process was started with, on its command line and in NODE_OPTIONS. */
function givenOptions(execArgv = process.execArgv, env = process.env) {
  return [...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)].map((arg) => optionName(arg));
}

/** `--max-semi-space-size=4` and `--max_semi_space_size` name the same option. */
function optionName(arg) {
  return arg.split('=')[0].replaceAll('_', '-');
}

/**
 * V8 reads these at every collection, so they take effect when set at run time too
 * (v8.setFlagsFromString); the semi-space size is fixed when the heap is made.
 */
const READ_AT_RUN_TIME = ['--heap-growing-percent'];

/**
 * Fixed when a heap is made, so set at run time they shape only the heaps made afterwards: on Node 20,
 * that of the thread tsx's loader answers imports from, started just after (its young generation
 * would otherwise grow to two 16 MiB semi-spaces too, for a thread that is idle once the server runs).
 * The process's own heap, made before, is held to the same size by capYoungGeneration.
 */
const FOR_LATER_HEAPS = ['--max-semi-space-size'];

/**
 * Whether this process can run itself again in place: process.execve exists from Node 22.15 (23.11),
 * but throws on Windows and IBM i.
 */
export function canReexecute() {
  return typeof process.execve === 'function' && process.platform !== 'win32' && process.platform !== 'os400';
}

/**
 * The settings `booking serve` has on this Node: all of them with process.execve; else the flags (set
 * at run time, the semi-space size held by capYoungGeneration) but not the allocator's, which the C
 * library reads only when the process starts. For processes started with them (the benchmarks'
 * full-stack servers).
 */
export function serverSettingsOnThisNode() {
  return { flags: [...SERVER_V8_FLAGS], environment: canReexecute() ? { ...SERVER_ENV } : {} };
}

/**
 * Runs this process again, in place, with the settings it lacks: process.execve (Node 22.15+, 23.11+)
 * replaces the program and keeps the process id, its standard streams and whoever waits for its
 * signals (preloads given with --import or --require in NODE_OPTIONS run again in the new program;
 * give the settings yourself and there is no second start). Where Node cannot (Node 20, Windows), the
 * flags V8 reads at run time are set now, the semi-space size for the heaps made from now on (the
 * loader thread's), and the process's own young generation is held to that size by
 * capYoungGeneration; the allocator keeps its defaults.
 */
export function execWithServerSettings() {
  const { flags, environment } = missingServerSettings();
  if (flags.length === 0 && Object.keys(environment).length === 0) return;
  if (!canReexecute()) {
    const atRunTime = [...READ_AT_RUN_TIME, ...FOR_LATER_HEAPS];
    for (const flag of flags) if (atRunTime.includes(optionName(flag))) v8.setFlagsFromString(flag);
    // Steered only where the size is ours to set, and the growth factor too.
    const semiSpaceIsOurs = flags.some((flag) => optionName(flag) === '--max-semi-space-size');
    if (semiSpaceIsOurs && !givenOptions().includes('--semi-space-growth-factor')) {
      capYoungGeneration(SERVER_SEMI_SPACE_BYTES);
    }
    return;
  }
  process.execve(
    process.execPath,
    [process.execPath, ...flags, ...process.execArgv, ...process.argv.slice(1)],
    { ...process.env, ...environment },
  );
}

/**
 * Holds this process's young generation to semi-spaces of at most `maxBytes`, as
 * --max-semi-space-size would have from the start. That size is fixed when the heap is made, before
 * any of our code runs; but V8 grows a semi-space by multiplying it by --semi-space-growth-factor,
 * which it reads each time it grows one (V8's SemiSpaceNewSpace::Grow) and which can be set at run
 * time. So after every collection the factor is set to the largest whole number that keeps the next
 * growth within `maxBytes` (from V8's initial 1 MiB, straight to 4), 1 (no growth) once no step fits.
 * After every collection, not once: V8 shrinks the young generation of an idle process, to twice what
 * it holds rounded up to a 256 KiB page, and it must be able to grow back (to at most `maxBytes`: from
 * 3 MiB it stays at 3). Should a second growth come before the observer is told of the first (it is
 * told asynchronously), the semi-spaces reach V8's own maximum, as without this, until V8 next shrinks
 * them. The factor is one setting for the whole process, so it is steered from the main thread only,
 * and holds the young generations of heaps made later (tsx's loader thread on Node 20, workers) to
 * their initial size once the main one has reached `maxBytes`: `booking serve` starts no worker that
 * allocates much.
 */
export function capYoungGeneration(maxBytes) {
  if (!isMainThread || semiSpaceBytes() === 0) return;
  let factor = 0;
  const steer = () => {
    const next = growthFactorFor(semiSpaceBytes(), maxBytes);
    if (next === factor) return;
    v8.setFlagsFromString(`--semi-space-growth-factor=${next}`);
    factor = next;
  };
  steer();
  new PerformanceObserver(steer).observe({ entryTypes: ['gc'] });
}

/**
 * The largest growth factor that keeps a semi-space of `semiSpace` bytes within `maxBytes`, 1 when
 * none does; V8's own (2) where the size is not known, rather than a young generation that could
 * never grow.
 */
export function growthFactorFor(semiSpace, maxBytes) {
  if (!(semiSpace > 0)) return 2;
  return Math.max(1, Math.floor(maxBytes / semiSpace));
}

/** V8's page, the unit semi-spaces are sized in. */
const PAGE_BYTES = 256 * 1024;

/**
 * The size of one semi-space of this heap: what the young generation can hold (used and available),
 * which falls short of the semi-space by less than a page (what V8 keeps aside), rounded up to a page;
 * 0 where V8 does not report a new space.
 */
export function semiSpaceBytes() {
  const space = v8.getHeapSpaceStatistics().find((each) => each.space_name === 'new_space');
  const holds = space ? space.space_used_size + space.space_available_size : 0;
  return Math.ceil(holds / PAGE_BYTES) * PAGE_BYTES;
}
