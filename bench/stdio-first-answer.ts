import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../test/helpers/cli.ts';
import { createChildDatabase } from '../test/helpers/mcp-servers.ts';
import type { BenchContext, Benchmark, TimingBenchmarkResult } from './lib/benchmark.ts';
import { formatMs, summariseTimes } from './lib/timing.ts';

/** Issue 48: a host's first tool call answered this soon after it starts `booking mcp`, on Node 24. */
const TARGET_MS = 300;
/** Timed starts per Node, after one untimed start (which makes the bundle and Node's compile cache if missing). */
const STARTS = 15;
/** A start that has not answered by then is a failure, not a figure. */
const START_TIMEOUT_MS = 30_000;

const BIN = path.join(REPO_ROOT, 'bin', 'booking.js');
/** CI's Node 24 (.ci/nodes): with the runner's Node 20, the two Nodes this machine has. */
const NODE_24 = path.join(REPO_ROOT, '.ci', 'nodes', 'node_modules', 'node-24', 'bin', 'node');

/**
 * `booking mcp` as an MCP host starts it: a new process, sent initialize, the initialized notification
 * and a `list_locations` call at once; timed from the spawn to the call's answer on stdout. On the
 * runner's Node and on Node 24 when .ci/nodes has it (`cd .ci/nodes && npm ci`).
 */
export const stdioFirstAnswer: Benchmark = {
  id: 'stdio-first-answer',
  async run(context: BenchContext): Promise<TimingBenchmarkResult> {
    const database = await createChildDatabase();
    try {
      const nodes = [
        ...(existsSync(NODE_24) ? [{ label: 'Node 24', execPath: NODE_24 }] : []),
        { label: `Node ${process.versions.node.split('.')[0]} (the runner's)`, execPath: process.execPath },
      ];
      const timings = [];
      for (const node of nodes) {
        context.progress(`${node.label}: ${STARTS} starts of booking mcp`);
        await firstAnswerMs(node.execPath, database.url, database.keys.read);
        const times: number[] = [];
        for (let i = 0; i < STARTS; i += 1)
          times.push(await firstAnswerMs(node.execPath, database.url, database.keys.read));
        timings.push(summariseTimes(node.label, times));
      }
      const node24 = timings.find((timing) => timing.label === 'Node 24');
      return {
        kind: 'timing',
        subject: 'booking mcp: first tool call',
        setting: { heading: 'over stdio', detail: 'in a new `booking mcp` process per start' },
        method: [
          `Each start spawns \`node bin/booking.js mcp\` on a demo database (SQLite) with a read key, writes initialize, the initialized notification and a \`list_locations\` call at once, and times from the spawn to that call's answer. One untimed start per Node first (it makes the bundle and Node's compile cache when missing, as \`npm install\` does), then ${STARTS} timed ones.`,
        ],
        timings,
        ratios: node24
          ? [
              {
                label: `${timings[timings.length - 1]!.label} / Node 24 (p50)`,
                value: (timings[timings.length - 1]!.p50 / node24.p50).toFixed(2),
              },
            ]
          : [],
        targets: node24
          ? [
              {
                description: `First call answered on Node 24, p50 ≤ ${TARGET_MS} ms`,
                measured: `${formatMs(node24.p50)} ms`,
                pass: node24.p50 <= TARGET_MS,
              },
            ]
          : [],
      };
    } finally {
      await database.dispose();
    }
  },
};

/** One start of `booking mcp` on that Node: milliseconds from its spawn to its first tool call's answer. */
function firstAnswerMs(execPath: string, databaseUrl: string, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(execPath, [BIN, 'mcp'], {
      env: { ...process.env, DATABASE_URL: databaseUrl, BOOKING_API_KEY: key, LOG_LEVEL: 'error' },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`booking mcp on ${execPath} gave no answer in ${START_TIMEOUT_MS} ms`));
    }, START_TIMEOUT_MS);
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'bench', version: '1' },
      },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_locations', arguments: {} } });
    let pending = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const message = JSON.parse(line) as { id?: number; result?: { isError?: boolean } };
        if (message.id !== 2) continue;
        const elapsed = performance.now() - started;
        clearTimeout(timer);
        child.stdin.end();
        if (message.result?.isError !== false && message.result?.isError !== undefined) {
          reject(new Error(`list_locations failed: ${line}`));
        } else {
          child.once('exit', () => resolve(elapsed));
        }
      }
    });
    child.once('error', reject);
  });
}
