import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { SseSessions } from '../../src/http/mcp-sse.ts';

/**
 * The books of the legacy SSE transport: a client that goes while its stream is being opened (the
 * transport loading, the key's oldest stream closing) leaves nothing behind, so the streams per key
 * stay counted right. Real sockets, a real server.
 */
let server: http.Server | undefined;
afterEach(() => server?.close());

describe('SSE sessions', () => {
  it('keep no stream of a client that left while it was being opened', async () => {
    const sessions = new SseSessions({
      limits: { keepAliveMs: 60_000, idleMs: 60_000, maxStreamsPerKey: 2 },
      keyIsActive: async () => true,
      now: () => Date.now(),
    });
    const opened: Promise<unknown>[] = [];
    server = http.createServer((request, response) => {
      // Gone before open has even started: each open must see it and keep nothing.
      request.socket.destroy();
      opened.push(
        sessions.open(response, 'key-1', new Server({ name: 't', version: '1' }, { capabilities: {} })),
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
  });
});
