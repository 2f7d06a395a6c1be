import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(REPO_ROOT, 'bin/booking.js');

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `booking <args>` to completion, as a user would from the repository root; `input` is its stdin. */
export function runCli(args: string[], env: Record<string, string> = {}, input?: string): CliResult {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    cwd: REPO_ROOT,
    ...(input === undefined ? {} : { input }),
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * Runs `booking <args>` without blocking this process (runCli's spawnSync would stall HTTP clients kept
 * busy meanwhile, or a load the command runs under); resolves once it exits. With `maxFileBlocks`, the
 * command may write no file larger than that many blocks of 512 bytes (`ulimit -f`, RLIMIT_FSIZE): a
 * write past it fails as on a full disk (Node ignores SIGXFSZ, so the write gets EFBIG).
 */
export function runCliAsync(
  args: string[],
  env: Record<string, string> = {},
  options: { maxFileBlocks?: number } = {},
): Promise<CliResult> {
  const command =
    options.maxFileBlocks === undefined
      ? [process.execPath, BIN, ...args]
      : ['sh', '-c', `ulimit -f ${options.maxFileBlocks} && exec "$0" "$@"`, process.execPath, BIN, ...args];
  const child = spawn(command[0]!, command.slice(1), {
    cwd: REPO_ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return outcomeOf(child);
}

/** What a child process spawned with piped stdout and stderr printed, and its status, once it exits. */
export function outcomeOf(child: ChildProcess): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/**
 * Gives the project at `project` this checkout's packages: a node_modules of its own (so that what it
 * keeps in node_modules/.cache is its own) whose entries link to this checkout's.
 */
export function linkDependencies(project: string): string {
  const modules = path.join(project, 'node_modules');
  mkdirSync(modules, { recursive: true });
  for (const name of readdirSync(path.join(REPO_ROOT, 'node_modules')).filter((n) => n !== '.cache'))
    symlinkSync(path.join(REPO_ROOT, 'node_modules', name), path.join(modules, name), 'dir');
  return modules;
}

export interface RunningServer {
  url: string;
  stdout: () => string;
  /** Its log lines (JSON, one a line), as far as they came. */
  stderr: () => string;
  process: ChildProcess;
  /** Its exit status, once it has exited and its output has all been read. */
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `booking serve ...` and resolves once it prints its listening line. `nodeArgs` go to node
 * itself (e.g. `--cpu-prof`, which NODE_OPTIONS does not take); `logFile` takes its log (stderr).
 */
export function startServer(
  args: string[],
  env: Record<string, string>,
  nodeArgs: readonly string[] = [],
  options: { logFile?: string } = {},
): Promise<RunningServer> {
  // With a log file, stderr goes there, as under a service manager, instead of into this process.
  const log = options.logFile === undefined ? 'pipe' : openSync(options.logFile, 'a');
  const child = spawn(process.execPath, [...nodeArgs, BIN, 'serve', ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', log],
  });
  if (typeof log === 'number') closeSync(log);
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  // 'close', not 'exit': the exit can be seen before the last of its output has been read.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${stdout}\n${stderr}`)), 30_000);
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
      const match = /listening on (\S+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve({
          url: match[1]!,
          stdout: () => stdout,
          stderr: () => (options.logFile === undefined ? stderr : readFileSync(options.logFile, 'utf8')),
          process: child,
          exited,
          stop: async (signal = 'SIGTERM') => {
            child.kill(signal);
            return exited;
          },
        });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${stdout}\n${stderr}`));
    });
  });
}
