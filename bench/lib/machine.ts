import os from 'node:os';

export interface Machine {
  cpu: string;
  cpuCount: number;
  memoryGiB: number;
  node: string;
  os: string;
  date: string;
}

/** Where the figures were measured: they mean little without it. */
export function describeMachine(now: Date = new Date()): Machine {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cpuCount: cpus.length,
    memoryGiB: os.totalmem() / 1024 ** 3,
    node: process.version,
    os: `${os.type()} ${os.release()} (${os.arch()})`,
    date: now.toISOString(),
  };
}

export function machineSummary(machine: Machine): string {
  return `${machine.cpuCount} × ${machine.cpu}, ${machine.memoryGiB.toFixed(1)} GiB, Node ${machine.node}`;
}
