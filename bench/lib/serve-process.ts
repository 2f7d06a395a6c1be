import { type RunningServer, startServer } from '../../test/helpers/cli.ts';
import { PINNING, pinProcess, SERVER_CPU } from './cpu-pinning.ts';

/**
 * The real `booking serve` (bin/booking.js, as `npx booking serve` runs it: its own V8 settings,
 * production mode, the default log level), listening on a free loopback port, pinned to the server's
 * core. Its log goes to a file rather than back to this process, so that keeping it costs the load
 * generator nothing, as under systemd or a container runtime.
 */
export async function startServeProcess(
  env: Record<string, string>,
  options: { logFile: string; cpuProfileDir?: string | undefined },
): Promise<RunningServer> {
  const profile = options.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`] : [];
  const server = await startServer(
    ['--port', '0', '--host', '127.0.0.1'],
    { NODE_ENV: 'production', LOG_LEVEL: 'info', ...env },
    profile,
    { logFile: options.logFile },
  );
  if (PINNING && server.process.pid !== undefined) pinProcess(server.process.pid, SERVER_CPU);
  return server;
}
