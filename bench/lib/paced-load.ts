import { Agent, request } from 'node:http';
import type { LoadSettings, LoadStats, LoadTarget } from './load.ts';

/**
 * An open-loop load at a steady rate: requests leave evenly spaced in time (a few per millisecond
 * tick, not in bursts) over a fixed pool of keep-alive connections, and each one's latency is timed
 * from when it was due, so time spent waiting for a free connection counts against the server.
 *
 * autocannon's `overallRate` paces each connection on its own timer; the timers line up and requests
 * arrive in bursts of up to one per connection, which measures the bursts rather than the server.
 */
export async function runPacedLoad(
  target: LoadTarget,
  settings: LoadSettings & { rate: number },
): Promise<LoadStats> {
  const agent = new Agent({ keepAlive: true, maxSockets: settings.connections });
  const url = new URL(target.url);
  const latencies: number[] = [];
  let non2xx = 0;
  let errors = 0;
  let bytes = 0;
  const inFlight = new Set<Promise<void>>();

  const send = (due: number) => {
    const body = target.body?.();
    const headers = {
      ...target.headers,
      ...target.requestHeaders?.(),
      ...(body !== undefined && { 'content-length': String(Buffer.byteLength(body)) }),
    };
    const done = new Promise<void>((resolve) => {
      const req = request(url, { agent, method: target.method ?? 'GET', headers }, (res) => {
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
        });
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          target.onStatus?.(status);
          if (target.expectedStatus ? status === target.expectedStatus : status >= 200 && status < 300) {
            latencies.push(performance.now() - due);
          } else non2xx += 1;
          resolve();
        });
      });
      req.on('error', () => {
        errors += 1;
        resolve();
      });
      req.end(body);
    });
    inFlight.add(done);
    void done.then(() => inFlight.delete(done));
  };

  const start = performance.now();
  const total = Math.round(settings.rate * settings.durationS);
  let sent = 0;
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const elapsed = performance.now() - start;
      // Request k is due at k / rate seconds: at `elapsed`, requests 0 .. floor(elapsed × rate) are.
      const dueCount = Math.min(total, Math.floor((elapsed / 1000) * settings.rate) + 1);
      for (; sent < dueCount; sent += 1) send(start + (sent * 1000) / settings.rate);
      if (sent >= total) {
        clearInterval(tick);
        resolve();
      }
    }, 1);
  });
  await Promise.all(inFlight);
  const seconds = (performance.now() - start) / 1000;
  agent.destroy();

  latencies.sort((a, b) => a - b);
  const at = (p: number) =>
    round(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0);
  return {
    requests: latencies.length + non2xx,
    seconds,
    requestsPerSecond: (latencies.length + non2xx) / seconds,
    bytesPerRequest: latencies.length === 0 ? 0 : bytes / latencies.length,
    p50: at(50),
    p90: at(90),
    p99: at(99),
    max: round(latencies[latencies.length - 1] ?? 0),
    non2xx,
    errors,
  };
}

const round = (ms: number) => Math.round(ms * 100) / 100;
