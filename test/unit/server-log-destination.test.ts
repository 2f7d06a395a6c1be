import { spawnSync } from 'node:child_process';
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
});
