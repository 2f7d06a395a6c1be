import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const LOGGER = fileURLToPath(new URL('../../src/cli/logger.ts', import.meta.url));
const LINES = 2_000;

/**
 * `booking serve`'s stderr (serverLogDestination): lines gathered in memory as bytes and written in
 * batches. Driven in a process of its own, since it writes to file descriptor 2 and flushes on exit.
 */
describe('the server log destination', () => {
  it('writes every line whole and in order, text beyond ASCII included, across batches and at exit', () => {
    const script = `
      import { createLogger, serverLogDestination } from ${JSON.stringify(LOGGER)};
      const logger = createLogger('info', serverLogDestination());
      for (let n = 0; n < ${LINES}; n++) logger.info({ n, route: '/v1/locations/:slug/services' }, 'Zoë’s café ☕ ' + n);
    `;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(child.status).toBe(0);
    const lines = child.stderr.trimEnd().split('\n');
    // About 200 bytes a line: several of the 32 KiB batches, and the last one written at exit.
    expect(child.stderr.length).toBeGreaterThan(4 * 32 * 1024);
    expect(lines).toHaveLength(LINES);
    lines.forEach((line, n) => {
      expect(JSON.parse(line)).toMatchObject({ level: 30, n, msg: `Zoë’s café ☕ ${n}` });
    });
  });

  it('writes every line at a crash while the reader of stderr has fallen behind (writes refused)', async () => {
    // Lines given in turns, as requests come, so that batches are written (and refused) as they go.
    const script = `
      import { createLogger, serverLogDestination } from ${JSON.stringify(LOGGER)};
      const logger = createLogger('info', serverLogDestination());
      let n = 0;
      const turn = () => {
        for (let i = 0; i < 500 && n < 20000; i++, n++) logger.info({ n }, 'line ' + n);
        if (n < 20000) setImmediate(turn);
        else setTimeout(() => { throw new Error('crash'); }, 300);
      };
      turn();
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    // Nobody reads until the process is well into its exit: the pipe is full, writes are refused.
    child.stderr.pause();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 2_000))]);
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const status = new Promise((resolve) => child.once('close', resolve));
    child.stderr.resume();
    expect(await status).toBe(1);
    const numbers = stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => (JSON.parse(line) as { n: number }).n);
    expect(numbers).toEqual(Array.from({ length: 20000 }, (_, n) => n));
  }, 30_000);
});
