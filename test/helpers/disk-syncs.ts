import { type ChildProcess, spawn, spawnSync } from 'node:child_process';

/** Whether strace is there to count a process's disk syncs. */
export const canTraceSyncs = spawnSync('strace', ['-V']).status === 0;

/** strace counting the disk syncs (fsync, fdatasync) of `pid`, every thread, until stopped; the count then. */
export async function countSyncs(pid: number): Promise<{ stop(): Promise<number> }> {
  const tracer: ChildProcess = spawn(
    'strace',
    ['-f', '-c', '-e', 'trace=fsync,fdatasync', '-p', String(pid)],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let report = '';
  tracer.stderr!.on('data', (chunk) => {
    report += chunk;
  });
  // strace says it attached before it counts anything.
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`strace did not attach: ${report}`)), 10_000);
    tracer.stderr!.on('data', () => {
      if (/attached/.test(report)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return {
    async stop() {
      const exited = new Promise((resolve) => tracer.once('exit', resolve));
      tracer.kill('SIGINT');
      await exited;
      // strace -c's table: % time, seconds, usecs/call, calls, [errors,] syscall.
      const calls = (name: string) => {
        const row = report.split('\n').find((line) => line.trim().endsWith(` ${name}`));
        return row ? Number(row.trim().split(/\s+/)[3]) : 0;
      };
      return calls('fsync') + calls('fdatasync');
    },
  };
}
