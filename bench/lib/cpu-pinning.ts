import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';

/**
 * The machines this runs on have two cores, shared by the server under test and the load generator.
 * Left to the scheduler, the two preempt each other and the tail latency measures that fight; pinned,
 * the server has core 0 and the load generator core 1. Needs `taskset` (util-linux); without it, or
 * on one core, nothing is pinned and the report says so.
 */
export const SERVER_CPU = 0;
export const LOAD_CPU = 1;

function canPin(): boolean {
  if (cpus().length < 2) return false;
  try {
    execFileSync('taskset', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Pins every thread of a process to one CPU; returns whether it worked. */
export function pinProcess(pid: number, cpu: number): boolean {
  try {
    execFileSync('taskset', ['--all-tasks', '--pid', '--cpu-list', String(cpu), String(pid)], {
      stdio: 'ignore',
    });
    return true;
  } catch {
    return false;
  }
}

/** Whether this run pins: decided once, so every server and the generator agree. */
export const PINNING = canPin();
