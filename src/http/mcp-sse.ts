import type { ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/server';
import type { SSEServerTransport } from '@modelcontextprotocol/server-legacy/sse';
import { onDemand } from './on-demand.ts';

/**
 * The legacy MCP transport (HTTP+SSE, protocol 2024-11-05 and the 2025 revisions): a stream per
 * client at GET /sse and its messages POSTed to /messages?sessionId=. Streams live in this process and
 * are held for as long as a client wants, so they are watched:
 *
 * - a keep-alive comment every `keepAliveMs` (proxies and clients drop silent streams);
 * - a stream whose key has been revoked is closed at the next tick;
 * - a stream with no message for `idleMs` is closed;
 * - a key holds at most `maxStreamsPerKey`: a new stream beyond that closes the key's oldest.
 *
 * The frozen v1 transport of the SDK (`@modelcontextprotocol/server-legacy/sse`) speaks the protocol;
 * this only keeps the books.
 */
export interface SseLimits {
  keepAliveMs: number;
  idleMs: number;
  maxStreamsPerKey: number;
}

export const DEFAULT_SSE_LIMITS: SseLimits = {
  keepAliveMs: 20_000,
  idleMs: 10 * 60_000,
  maxStreamsPerKey: 5,
};

export interface SseSession {
  transport: SSEServerTransport;
  /** The stream's response, which keep-alives are written to. */
  response: ServerResponse;
  apiKeyId: string;
  openedAt: number;
  lastActive: number;
}

/**
 * The SDK's SSE transport, loaded with the first stream (a server no legacy client reaches never holds
 * its 3 MB of heap) and kept; a failed load is tried again by the next stream. GET /sse awaits it
 * before it takes over the response, so a failure is answered as any fault is.
 */
export const loadSseTransport = onDemand(
  async (): Promise<typeof SSEServerTransport> =>
    (await import('@modelcontextprotocol/server-legacy/sse')).SSEServerTransport,
);

export class SseSessions {
  readonly #sessions = new Map<string, SseSession>();
  readonly #limits: SseLimits;
  readonly #keyIsActive: (apiKeyId: string) => Promise<boolean>;
  readonly #now: () => number;
  #timer: NodeJS.Timeout | null = null;

  constructor(options: {
    limits: SseLimits;
    keyIsActive: (apiKeyId: string) => Promise<boolean>;
    now: () => number;
  }) {
    this.#limits = options.limits;
    this.#keyIsActive = options.keyIsActive;
    this.#now = options.now;
  }

  /**
   * Opens a stream on `response` for `apiKeyId` and connects `server` to it; null (and `server`
   * closed) if the client has gone meanwhile. The response's 'close' is listened for in the same turn
   * as the last check, so a stream that ends is always dropped from the books.
   */
  async open(response: ServerResponse, apiKeyId: string, server: Server): Promise<SseSession | null> {
    const SSEServerTransport = await loadSseTransport();
    const ofKey = [...this.#sessions.values()].filter((s) => s.apiKeyId === apiKeyId);
    if (ofKey.length >= this.#limits.maxStreamsPerKey) {
      const oldest = ofKey.reduce((a, b) => (a.openedAt <= b.openedAt ? a : b));
      await oldest.transport.close();
    }
    if (response.destroyed) {
      await server.close();
      return null;
    }
    const transport = new SSEServerTransport('/messages', response);
    const now = this.#now();
    const session = { transport, response, apiKeyId, openedAt: now, lastActive: now };
    this.#sessions.set(transport.sessionId, session);
    response.on('close', () => {
      this.#sessions.delete(transport.sessionId);
      void server.close();
      if (this.#sessions.size === 0) this.#stopTicking();
    });
    await server.connect(transport);
    this.#startTicking();
    return session;
  }

  /** The session with this id, marked active (a message is arriving), or undefined. */
  touch(sessionId: unknown): SseSession | undefined {
    const session = typeof sessionId === 'string' ? this.#sessions.get(sessionId) : undefined;
    if (session) session.lastActive = this.#now();
    return session;
  }

  /** Ends every stream (graceful shutdown: clients reconnect elsewhere). */
  async closeAll(): Promise<void> {
    this.#stopTicking();
    await Promise.all([...this.#sessions.values()].map(({ transport }) => transport.close()));
  }

  get size(): number {
    return this.#sessions.size;
  }

  #startTicking(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.#tick(), this.#limits.keepAliveMs);
    this.#timer.unref();
  }

  #stopTicking(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  async #tick(): Promise<void> {
    const now = this.#now();
    const active = new Map<string, Promise<boolean>>();
    await Promise.all(
      [...this.#sessions.values()].map(async (session) => {
        let stillActive = active.get(session.apiKeyId);
        if (!stillActive) {
          stillActive = this.#keyIsActive(session.apiKeyId).catch(() => true);
          active.set(session.apiKeyId, stillActive);
        }
        if (!(await stillActive) || now - session.lastActive >= this.#limits.idleMs) {
          await session.transport.close();
          return;
        }
        keepAlive(session);
      }),
    );
  }
}

/** An SSE comment line: ignored by clients, but traffic for every proxy and timer on the way. */
function keepAlive({ response }: SseSession): void {
  if (!response.writableEnded) response.write(': keep-alive\n\n');
}
