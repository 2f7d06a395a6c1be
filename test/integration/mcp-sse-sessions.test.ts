import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/server';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { revokeApiKey } from '../../src/app/api-key-service.ts';
import { ERROR_CATALOGUE } from '../../src/domain/errors.ts';
import { SseSessions } from '../../src/http/mcp-sse.ts';
import { TOOL_NAMES } from '../helpers/mcp-harness.ts';
import { connectSse, type ListeningApp, startListeningApp } from '../helpers/mcp-servers.ts';

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
      // Each open done before the next client: the place it held is given back by then (while it is
      // being opened, a place counts for the organisation, so more at once than its cap are refused).
      await opened[i];
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

  it('hand no message to a stream whose transport is closed, and count it until its response has closed', async () => {
    const sessions = new SseSessions({
      limits: { keepAliveMs: 60_000, idleMs: 60_000, maxStreamsPerKey: 1, maxStreamsPerOrganisation: 3 },
      keyIsActive: async () => true,
      now: () => Date.now(),
    });
    const opened: Promise<{ transport: { sessionId: string } } | null>[] = [];
    const responses: http.ServerResponse[] = [];
    server = http.createServer((_request, response) => {
      responses.push(response);
      const place = sessions.reserve({ apiKeyId: 'key-1', organisationId: 'org-1' });
      if (!place) throw new Error('a place was refused');
      opened.push(
        sessions.open(response, place, new Server({ name: 't', version: '1' }, { capabilities: {} })),
      );
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const clients: http.ClientRequest[] = [];
    const clientResponses: http.IncomingMessage[] = [];
    const stream = () =>
      clients.push(
        http
          .get({ host: '127.0.0.1', port, path: '/sse' }, (answer) => clientResponses.push(answer))
          .on('error', () => {}),
      );
    stream();
    await vi.waitFor(() => expect(opened).toHaveLength(1));
    const first = (await opened[0])!.transport.sessionId;
    await vi.waitFor(() => expect(clientResponses).toHaveLength(1));
    // A client that has stopped reading: what the first stream's end writes cannot be sent, so its
    // response reports no 'close' for as long.
    clientResponses[0]!.pause();
    const filler = `: ${'x'.repeat(1 << 20)}\n\n`;
    // More than loopback's buffers hold on both sides.
    await vi.waitFor(
      () => {
        responses[0]!.write(filler);
        expect(responses[0]!.writableLength).toBeGreaterThan(8 << 20);
      },
      { timeout: 10_000, interval: 50 },
    );
    // The key's second stream replaces its first: once it is open, a message for the first must not
    // find it, though the first's response has not closed (the SDK would answer a message handed to
    // its closed transport with a plain-text 500).
    stream();
    await vi.waitFor(() => expect(opened).toHaveLength(2));
    await opened[1];
    expect(sessions.touch(first, 'key-1')).toBeUndefined();
    // Its socket is still held, so it still counts towards the limits until it goes.
    expect(sessions.size).toBe(2);
    clients[0]!.destroy();
    await vi.waitFor(() => expect(sessions.size).toBe(1));
    clients[1]!.destroy();
  });

  it('let a key replace its stream past the organisation’s cap only while none of its replaced ones is still closing', async () => {
    const sessions = new SseSessions({
      limits: { keepAliveMs: 60_000, idleMs: 60_000, maxStreamsPerKey: 1, maxStreamsPerOrganisation: 2 },
      keyIsActive: async () => true,
      now: () => Date.now(),
    });
    const opened: Promise<unknown>[] = [];
    const responses: http.ServerResponse[] = [];
    server = http.createServer((_request, response) => {
      responses.push(response);
      const place = sessions.reserve({ apiKeyId: 'key-1', organisationId: 'org-1' });
      if (!place) {
        response.writeHead(429).end();
        return;
      }
      opened.push(
        sessions.open(response, place, new Server({ name: 't', version: '1' }, { capabilities: {} })),
      );
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const clients: http.ClientRequest[] = [];
    const answers: http.IncomingMessage[] = [];
    const stream = () =>
      clients.push(
        http
          .get({ host: '127.0.0.1', port, path: '/sse' }, (answer) => answers.push(answer))
          .on('error', () => {}),
      );
    // A client that stops reading its stream: the stream's end cannot be sent, so its socket stays.
    const stall = async (i: number) => {
      await vi.waitFor(() => expect(answers).toHaveLength(i + 1));
      answers[i]!.pause();
      const filler = `: ${'x'.repeat(1 << 20)}\n\n`;
      await vi.waitFor(
        () => {
          responses[i]!.write(filler);
          expect(responses[i]!.writableLength).toBeGreaterThan(8 << 20);
        },
        { timeout: 10_000, interval: 50 },
      );
    };
    stream();
    await vi.waitFor(() => expect(opened).toHaveLength(1));
    await opened[0];
    await stall(0);
    // The key's second stream replaces its first, whose socket stays: two sockets, the cap.
    stream();
    await vi.waitFor(() => expect(opened).toHaveLength(2));
    await opened[1];
    expect(sessions.size).toBe(2);
    // Replacing again would leave a third socket (and a fourth, and so on for a client that stalls
    // each one): refused while the replaced one is still closing.
    expect(sessions.reserve({ apiKeyId: 'key-1', organisationId: 'org-1' })).toBeNull();
    await stall(1);
    stream();
    await vi.waitFor(() => expect(answers).toHaveLength(3));
    expect(answers[2]!.statusCode).toBe(429);
    expect(sessions.size).toBe(2);
    // Once its socket has gone, the key replaces its stream again.
    clients[0]!.destroy();
    await vi.waitFor(() => expect(sessions.size).toBe(1));
    const place = sessions.reserve({ apiKeyId: 'key-1', organisationId: 'org-1' });
    expect(place).not.toBeNull();
    sessions.release(place!);
    for (const client of clients) client.destroy();
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
    // key-1 holds one place, none open: nothing of its own to replace, and the organisation is full.
    expect(sessions.reserve({ apiKeyId: 'key-1', organisationId: 'org-1' })).toBeNull();
    sessions.release(second!);
    expect(sessions.reserve({ apiKeyId: 'key-1', organisationId: 'org-1' })).not.toBeNull();
    // Places still being opened replace nothing: only open streams make room, so no overshoot.
    expect(sessions.reserve({ apiKeyId: 'key-1', organisationId: 'org-1' })).toBeNull();
    expect(sessions.reserve({ apiKeyId: 'key-3', organisationId: 'org-1' })).toBeNull();
  });
});

/**
 * POST /messages checks the host and the key before it looks at the session (design.md 9.1): whoever
 * posts to a live session's URL without its key is refused with 401 and changes nothing there; the
 * session's own client goes on as before. A stream whose key is revoked is closed by the sessions'
 * tick. The SDK's SSE client on a real listening app.
 */
describe('POST /messages to a live session', () => {
  let app: ListeningApp;
  beforeAll(async () => {
    app = await startListeningApp({ mcpSse: { keepAliveMs: 100, idleMs: 60_000, maxStreamsPerKey: 5 } });
  });
  afterAll(() => app?.t.close());

  const keyIdOf = async (key: string) =>
    (
      await app.t.database.db
        .selectFrom('api_keys')
        .select('id')
        .where('key_last4', '=', key.slice(-4))
        .executeTakeFirstOrThrow()
    ).id;

  /** A tools/list POSTed to `url` as it is, with `authorization` (none when undefined). */
  const postTo = async (url: URL, authorization: string | undefined, host?: string) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(authorization !== undefined && { authorization }),
        ...(host !== undefined && { origin: `http://${host}` }),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    return {
      status: response.status,
      authenticate: response.headers.get('www-authenticate'),
      json: (await response.json()) as { id: unknown; error: { message: string; data: { code: string } } },
    };
  };

  it('refuses a missing, unknown or revoked key with 401 and leaves the session to its owner', async () => {
    const mcp = await connectSse(app.origin, app.t.keys.readWrite);
    try {
      await mcp.client.listTools();
      const messages = mcp.messagesUrl();
      const revoked = await app.t.keyFor('northside-hair', 'read_write');
      await revokeApiKey(app.t.database.db, await keyIdOf(revoked), Date.now());
      const wrong = `${app.t.keys.readWrite.slice(0, -4)}0000`;
      for (const [authorization, code] of [
        [undefined, 'missing_api_key'],
        [`Bearer ${wrong}`, 'invalid_api_key'],
        [`Bearer ${revoked}`, 'invalid_api_key'],
      ] as const) {
        const refused = await postTo(messages, authorization);
        expect(refused.status, authorization).toBe(401);
        expect(refused.authenticate).toMatch(/^Bearer /);
        expect(refused.json).toMatchObject({
          jsonrpc: '2.0',
          id: null,
          error: { message: ERROR_CATALOGUE[code].hint, data: { code } },
        });
      }
      // Another organisation's valid key: the session does not exist for it. A foreign Origin: 403.
      const otherKey = await postTo(messages, `Bearer ${await app.t.keyFor('northside-hair', 'read')}`);
      expect([otherKey.status, otherKey.json.error.data.code]).toEqual([404, 'not_found']);
      // Said of the transport, not as the caller-facing "Nothing matches that" of not_found.
      expect(otherKey.json.error.message).toBe(
        'No SSE session has this sessionId (it ended, or another key opened it): open a new stream at /sse and post to the endpoint it names.',
      );
      const foreign = await postTo(messages, `Bearer ${app.t.keys.readWrite}`, 'evil.example');
      expect([foreign.status, foreign.json.error.data.code]).toEqual([403, 'invalid_host']);

      // Nothing reached the stream: it is open, and its client goes on with no stray answer seen.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await mcp.client.listTools()).tools).toHaveLength(TOOL_NAMES.length);
      expect(mcp.errors).toEqual([]);
    } finally {
      await mcp.close();
    }
  });

  it('keeps no session alive for another key: its POSTs do not count as the session’s activity', async () => {
    const key = await app.t.keyFor('northside-hair', 'read_write');
    const stream = await fetch(`${app.origin}/sse`, {
      headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
    });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    const endpoint = new TextDecoder().decode((await reader.read()).value);
    const path = /^data: (\S+)$/m.exec(endpoint)![1]!;
    // Another key posts to the session 50 s into its 60 s of idleness...
    app.t.clock.advance({ seconds: 50 });
    const other = await postTo(new URL(path, app.origin), `Bearer ${app.t.keys.read}`);
    expect(other.status).toBe(404);
    // ...and 70 s after its owner last used it, the session is idle: the next tick closes it.
    app.t.clock.advance({ seconds: 20 });
    const started = Date.now();
    while (!(await reader.read()).done) {
      if (Date.now() - started > 5000) throw new Error('the idle session was kept alive by another key');
    }
  });

  it('closes the stream of a key revoked while it is open at the next tick', async () => {
    const key = await app.t.keyFor('northside-hair', 'read_write');
    const stream = await fetch(`${app.origin}/sse`, {
      headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
    });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toMatch(/^event: endpoint\n/);
    await revokeApiKey(app.t.database.db, await keyIdOf(key), Date.now());
    // Keep-alives until the tick sees the key revoked, then the end of the stream.
    const started = Date.now();
    while (!(await reader.read()).done) {
      if (Date.now() - started > 5000) throw new Error('the stream of the revoked key is still open');
    }
  });
});
