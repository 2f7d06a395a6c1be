import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/cli/logger.ts';
import { withAdminConnection } from '../helpers/postgres-test-server.ts';

/**
 * PostgreSQL's errors carry the data they refused (a CHECK's failing row in `detail`, the JSON it
 * could not read in `where`); logged as a fault, they must not put a customer's notes on stderr.
 * Real errors from the local PostgreSQL, through the logger `booking serve` and `booking mcp` use.
 */
function capturedLogger() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger('info', sink), lines };
}

async function postgresError(sql: string): Promise<Error> {
  return withAdminConnection(async (client) => {
    await client.query('CREATE TEMP TABLE refused (notes text CHECK (length(notes) < 5))');
    return client.query(sql).then(
      () => {
        throw new Error('expected PostgreSQL to refuse it');
      },
      (error: Error) => error,
    );
  });
}

describe('the logs of a PostgreSQL fault', () => {
  it('keep the error but not the failing row or the JSON it could not read', async () => {
    const { logger, lines } = capturedLogger();
    const row = await postgresError("INSERT INTO refused VALUES ('Jo Bloggs, allergic to latex')");
    expect((row as Error & { detail?: string }).detail).toContain('allergic');
    logger.error({ err: row }, 'request failed');
    const json = await postgresError(`SELECT '{"notes": "call Jo on 07911 123456 \\u0000"}'::jsonb`);
    expect((json as Error & { where?: string }).where).toContain('07911');
    logger.error({ err: json }, 'MCP tool failed');
    logger.flush();
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      // The phone with its space: a line's time and pid are digits that may hold 07911 by chance.
      expect(line).not.toMatch(/allergic|07911 123456/);
      expect(JSON.parse(line).err).toMatchObject({ type: 'DatabaseError', code: expect.any(String) });
    }
  });
});
