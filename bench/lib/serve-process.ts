import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { BIN, REPO_ROOT } from '../../test/helpers/cli.ts';
import { PINNING, pinProcess, SERVER_CPU } from './cpu-pinning.ts';

const START_TIMEOUT_MS = 60_000;

export interface ServeProcess {
  origin: string;
  /** Where its log went (stderr, JSON lines), as a service manager would keep it. */
  logFile: string;
  /** Stops it with SIGTERM, as a service manager would; its exit code. */
  stop(): Promise<number | null>;
}

/**
 * The real `booking serve` (bin/booking.js, as `npx booking serve` runs it: its own V8 settings,
 * production mode, the default log level), listening on a free loopback port, pinned to the server's
 * core. Its log goes to a file rather than back to this process, so that keeping it costs the load
 * generator nothing, as under systemd or a container runtime.
 */
export async function startServeProcess(
  env: Record<string, string>,
  options: { logFile: string; cpuProfileDir?: string | undefined },
): Promise<ServeProcess> {
  const profile = options.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`] : [];
  const log = openSync(options.logFile, 'a');
  const child = spawn(process.execPath, [...profile, BIN, 'serve', '--port', '0', '--host', '127.0.0.1'], {
    cwd: REPO_ROOT,
    env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', log],
  });
  closeSync(log);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stdout = '';
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`booking serve did not start:\n${stdout}`)),
      START_TIMEOUT_MS,
    );
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
      const match = /listening on (\S+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`booking serve exited with ${code}:\n${stdout}\n${tail(options.logFile)}`));
    });
  });
  if (PINNING && child.pid !== undefined) pinProcess(child.pid, SERVER_CPU);
  return {
    origin,
    logFile: options.logFile,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-20).join('\n');
  } catch {
    return `(no log at ${path.basename(file)})`;
  }
}
