import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';

/**
 * Where the machine's CPU went during a measured phase, from /proc (Linux): the whole machine's busy
 * and stolen time, and the CPU time of groups of processes (the load generator, the servers, the
 * database). On a machine whose few cores are shared by all of them, these say whether a throughput
 * figure is a limit of the code or of the machine. Elsewhere (no /proc) nothing is measured.
 */
export interface CpuSnapshot {
  at: number;
  /** Clock ticks of the whole machine: busy (user, nice, system, irq, softirq), stolen, and in all. */
  busy: number;
  steal: number;
  total: number;
  /** CPU ticks (user + system) of every process, and its command name. */
  processes: Map<number, { comm: string; ticks: number }>;
}

/** Cores used on average over a phase (1 = one core fully busy), per group and for the machine. */
export interface CpuUse {
  seconds: number;
  cores: number;
  machineBusy: number;
  stolen: number;
  groups: Record<string, number>;
}

const TICKS_PER_SECOND = clockTicks();

function clockTicks(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

export function cpuSnapshot(): CpuSnapshot | null {
  let stat: string;
  try {
    stat = readFileSync('/proc/stat', 'utf8');
  } catch {
    return null;
  }
  const fields = (stat.split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
  const processes = new Map<number, { comm: string; ticks: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const text = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name is in parentheses and may itself hold spaces or parentheses.
      const close = text.lastIndexOf(')');
      const comm = text.slice(text.indexOf('(') + 1, close);
      const rest = text.slice(close + 2).split(' ');
      processes.set(Number(entry), { comm, ticks: Number(rest[11]) + Number(rest[12]) });
    } catch {
      // The process ended between listing and reading.
    }
  }
  const busy = user + nice + system + irq + softirq;
  return { at: performance.now(), busy, steal, total: busy + idle + iowait + steal, processes };
}

/**
 * The CPU used between two snapshots, per group: a group names its processes by id or by command name.
 * A process started in between counts from zero; one that ended in between is lost (its time shows in
 * the machine's busy time only).
 */
export function cpuUseBetween(
  before: CpuSnapshot,
  after: CpuSnapshot,
  groups: Record<string, (pid: number, comm: string) => boolean>,
): CpuUse {
  const seconds = (after.at - before.at) / 1000;
  const cores = (ticks: number) => ticks / TICKS_PER_SECOND / Math.max(seconds, 1e-9);
  const used: Record<string, number> = {};
  for (const [name, member] of Object.entries(groups)) {
    let ticks = 0;
    for (const [pid, { comm, ticks: now }] of after.processes) {
      if (member(pid, comm)) ticks += now - (before.processes.get(pid)?.ticks ?? 0);
    }
    used[name] = cores(ticks);
  }
  return {
    seconds,
    cores: cpus().length,
    machineBusy: cores(after.busy - before.busy),
    stolen: cores(after.steal - before.steal),
    groups: used,
  };
}
