import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { serverSettingsOnThisNode } from '../../bin/server-settings.js';
import { PINNING, pinProcess, SERVER_CPU } from './cpu-pinning.ts';
import type { FromChild, ToChild } from './ipc.ts';

const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 10_000;

export interface ServerProcess<Info> {
  /** What the child reported once listening: its URLs, keys… */
  info: Info;
  /** The child's process id (to trace it). */
  pid: number;
  /** Asks the child to close its servers and exit; kills it if it does not. */
  stop(): Promise<void>;
}

export interface ServerProcessOptions {
  /** Write a V8 CPU profile (.cpuprofile) of the child into this directory when it exits. */
  cpuProfileDir?: string | undefined;
  /**
   * Run the child with the V8 and allocator settings `booking serve` has on this Node
   * (bin/server-settings.js): the full stacks, measured as deployed; baselines keep Node's defaults.
   */
  serveSettings?: boolean;
}

/**
 * Starts a server in its own process, so the load generator in this process and the server under test
 * never share an event loop or a core's worth of JIT and GC. The child runs with NODE_ENV=production;
 * it is a module written with bench/lib/child.ts.
 */
export async function startServerProcess<Info>(
  entry: URL,
  init: unknown,
  options: ServerProcessOptions = {},
): Promise<ServerProcess<Info>> {
  const profile = options.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`] : [];
  const settings = options.serveSettings ? serverSettingsOnThisNode() : { flags: [], environment: {} };
  const child = fork(fileURLToPath(entry), [], {
    execArgv: [...settings.flags, '--import', 'tsx', ...profile],
    env: { ...process.env, ...settings.environment, NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  if (PINNING && child.pid !== undefined) pinProcess(child.pid, SERVER_CPU);
  try {
    const info = (await handshake(child, init)) as Info;
    return { info, pid: child.pid!, stop: () => stop(child) };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

function handshake(child: ChildProcess, init: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => fail(new Error(`${child.spawnfile}: not ready in time`)),
      START_TIMEOUT_MS,
    );
    const onExit = (code: number | null) => fail(new Error(`server process exited (code ${code}) early`));
    const onMessage = (message: FromChild) => {
      if (message.type === 'hello') send(child, { type: 'init', init });
      else if (message.type === 'failed') fail(new Error(`server process failed: ${message.error}`));
      else done(() => resolve(message.info));
    };
    const done = (settle: () => void) => {
      clearTimeout(timer);
      child.off('message', onMessage).off('exit', onExit);
      settle();
    };
    const fail = (error: Error) => done(() => reject(error));
    child.on('message', onMessage).once('exit', onExit);
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  send(child, { type: 'stop' });
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

function send(child: ChildProcess, message: ToChild): void {
  child.send(message);
}
