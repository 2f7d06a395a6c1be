import { type ChildProcess, spawn, spawnSync } from 'node:child_process';

/** Whether strace is there to count a process's disk syncs. */
export const canTraceSyncs = spawnSync('strace', ['-V']).status === 0;

/** The disk syncs (fsync, fdatasync) a process made, in all and by the file synced. */
export interface Syncs {
  total: number;
  byFile: Map<string, number>;
}

/**
 * strace counting the disk syncs of `pid` (every thread) until stopped. A SQLite database in WAL mode
 * syncs its `-wal` file at each durable commit and, at a checkpoint, the WAL and then the database
 * file itself: the syncs of the database file count its checkpoints.
 */
export async function countSyncs(pid: number): Promise<{ stop(): Promise<Syncs> }> {
  const tracer: ChildProcess = spawn(
    'strace',
    ['-f', '-y', '-e', 'trace=fsync,fdatasync', '-p', String(pid)],
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
      // One line a call, `-y` naming the file: `[pid 7] fdatasync(21</tmp/x/booking.sqlite-wal>) = 0`
      // (a call another thread interrupted is split into "unfinished" and "resumed": counted once).
      const byFile = new Map<string, number>();
      for (const match of report.matchAll(/\b(?:fsync|fdatasync)\(\d+<([^>]*)>/g)) {
        byFile.set(match[1]!, (byFile.get(match[1]!) ?? 0) + 1);
      }
      return { total: [...byFile.values()].reduce((n, c) => n + c, 0), byFile };
    },
  };
}

/**
 * What a SQLite database's syncs were: durable commits (one sync of the WAL each), checkpoints (each
 * syncs the WAL, then the database file, and the first commit after it syncs the WAL's new header:
 * three, the database file's counting them), and any other file's (the directory, when SQLite
 * creates the WAL).
 */
export function sqliteSyncs(syncs: Syncs): { commits: number; checkpoints: number; other: number } {
  const of = (suffix: string) =>
    [...syncs.byFile].filter(([file]) => file.endsWith(suffix)).reduce((n, [, c]) => n + c, 0);
  const checkpoints = of('.sqlite');
  const commits = of('.sqlite-wal') - 2 * checkpoints;
  return { commits, checkpoints, other: syncs.total - commits - 3 * checkpoints };
}
