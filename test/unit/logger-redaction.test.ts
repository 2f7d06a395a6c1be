import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, redacted } from '../../src/cli/logger.ts';

function captured() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { logger: createLogger('info', sink), lines };
}

/**
 * A line's text without what pino adds of its own (the time and pid are digits that may happen to
 * hold a phone number's, as a time of 1796311607911 holds 07911).
 */
function textOf(line: Record<string, unknown> | undefined): string {
  const { time: _time, pid: _pid, hostname: _hostname, ...rest } = line ?? {};
  return JSON.stringify(rest);
}

class DatabaseError extends Error {
  detail?: string;
  where?: string;
}

describe('log lines never carry personal data or keys', () => {
  it('censors personal members one level down, and leaves the rest', () => {
    const { logger, lines } = captured();
    logger.info(
      {
        client: {
          first_name: 'Jo',
          last_name: 'Bloggs',
          phone: '+447911123456',
          email: 'jo@example.org',
          id: 'c1',
        },
        booking: { notes: 'allergic to latex', reference: 'NHC-2DSDKB' },
        headers: { authorization: 'Bearer bk_secret', accept: 'application/json' },
        req: { method: 'GET', headers: { authorization: 'Bearer bk_other', host: 'x' } },
        api: { key: 'bk_plain' },
        status: 200,
      },
      'done',
    );
    const [line] = lines;
    const text = textOf(line);
    expect(text).not.toMatch(/Jo|Bloggs|447911|example\.org|latex|bk_/);
    expect(line).toMatchObject({
      client: { first_name: '[redacted]', phone: '[redacted]', id: 'c1' },
      booking: { notes: '[redacted]', reference: 'NHC-2DSDKB' },
      headers: { authorization: '[redacted]', accept: 'application/json' },
      req: { method: 'GET', headers: { authorization: '[redacted]', host: 'x' } },
      status: 200,
    });
  });

  it("censors an error's detail and where, and its causes', keeping its class, message and stack", () => {
    const { logger, lines } = captured();
    const cause = Object.assign(new DatabaseError('check failed'), {
      detail: 'Failing row contains (Jo Bloggs)',
    });
    const error = Object.assign(new DatabaseError('insert refused', { cause }), {
      where: 'JSON data, line 1: {"notes": "07911 123456"}',
    });
    logger.error({ err: error }, 'request failed');
    const [line] = lines;
    expect(textOf(line)).not.toMatch(/Jo Bloggs|07911/);
    expect(line!.err).toMatchObject({
      type: 'DatabaseError',
      message: expect.stringContaining('insert refused'),
    });
    expect((line!.err as { stack: string }).stack).toContain('insert refused');
    // The logged error itself is not changed.
    expect(error.where).toContain('07911');
  });

  it('a cause that is the error itself ends', () => {
    const error = new DatabaseError('loop') as DatabaseError & { cause?: unknown };
    error.cause = error;
    error.detail = 'Jo';
    expect(JSON.stringify((redacted({ err: error }).err as { detail: string }).detail)).toBe('"[redacted]"');
  });

  it('hides a member behind a getter without a setter, and writes the line even when an object resists', () => {
    class Sealed {
      get email() {
        return 'jo@example.org';
      }
    }
    const { logger, lines } = captured();
    logger.info({ who: new Sealed(), status: 1 }, 'getter');
    expect(textOf(lines[0])).not.toContain('jo@example.org');
    const hostile = new Proxy(
      {},
      {
        has: () => {
          throw new Error('no');
        },
      },
    );
    logger.info({ hostile, status: 2 }, 'proxy');
    expect(lines[1]).toMatchObject({ hostile: '[redacted]', status: 2, msg: 'proxy' });
  });

  it('returns a line with nothing to hide as it is (no copy on every request)', () => {
    const line = { method: 'GET', route: '/v1/x', status: 200, duration_ms: 0.3, key_id: 'k' };
    expect(redacted(line)).toBe(line);
  });
});
