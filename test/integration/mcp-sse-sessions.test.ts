import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { SseSessions } from '../../src/http/mcp-sse.ts';

/**
 * The books of the legacy SSE transport: a client that goes while its stream is being opened (the
 * transport loading, the key's oldest stream closing) leaves nothing behind, so the streams per key
 * and per organisation stay counted right. Real sockets, a real server.
 */
let server: http.Server | undefined;
afterEach(() => server?.close());

describe('SSE sessions', () => {
  it('keep no stream of a client that left while it was being opened', async () => {
    const sessions = new SseSessions({
      limits: { keepAliveMs: 60_000, idleMs: 60_000, maxStreamsPerKey: 2, maxStreamsPerOrganisation: 3 },
      keyIsActive: async () => true,
      now: () => Date.now(),
    });
    const opened: Promise<unknown>[] = [];
    server = http.createServer((request, response) => {
      // Gone before open has even started: each open must see it and keep nothing.
      request.socket.destroy();
      const place = sessions.reserve({ apiKeyId: 'key-1', organisationId: 'org-1' });
      if (!place) throw new Error('a place was refused with no stream open');
      opened.push(
        sessions.open(response, place, new Server({ name: 't', version: '1' }, { capabilities: {} })),
      );
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    for (let i = 0; i < 4; i += 1) {
      await new Promise<void>((resolve) => {
        const client = http.get({ host: '127.0.0.1', port, path: '/sse' });
        client.on('error', () => resolve());
        client.on('close', () => resolve());
      });
    }
    expect(await Promise.all(opened)).toHaveLength(4);
    // Each stream's 'close' is in by the time the next turn runs.
    await new Promise((resolve) => setImmediate(resolve));
    expect(sessions.size).toBe(0);
    // Each place was given back: the organisation's 3 are free.
    for (const apiKeyId of ['key-2', 'key-3', 'key-4'])
      expect(sessions.reserve({ apiKeyId, organisationId: 'org-1' })).not.toBeNull();
    expect(sessions.reserve({ apiKeyId: 'key-5', organisationId: 'org-1' })).toBeNull();
  });

  it('hold an organisation’s places from admission, so admissions in one turn cannot overshoot', () => {
    const sessions = new SseSessions({
      limits: { keepAliveMs: 60_000, idleMs: 60_000, maxStreamsPerKey: 2, maxStreamsPerOrganisation: 2 },
      keyIsActive: async () => true,
      now: () => Date.now(),
    });
    const first = sessions.reserve({ apiKeyId: 'key-1', organisationId: 'org-1' });
    const second = sessions.reserve({ apiKeyId: 'key-2', organisationId: 'org-1' });
    expect([first, second]).not.toContain(null);
    expect(sessions.reserve({ apiKeyId: 'key-3', organisationId: 'org-1' })).toBeNull();
    expect(sessions.reserve({ apiKeyId: 'key-9', organisationId: 'org-2' })).not.toBeNull();
    // key-1, once at its own cap of 2, replaces its oldest: the organisation's count does not grow.
    expect(sessions.reserve({ apiKeyId: 'key-1', organisationId: 'org-1' })).toBeNull();
    sessions.release(second!);
    expect(sessions.reserve({ apiKeyId: 'key-1', organisationId: 'org-1' })).not.toBeNull();
    expect(sessions.reserve({ apiKeyId: 'key-1', organisationId: 'org-1' })).not.toBeNull();
    expect(sessions.reserve({ apiKeyId: 'key-3', organisationId: 'org-1' })).toBeNull();
  });
});
