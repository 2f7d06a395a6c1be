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
 * - a key holds at most `maxStreamsPerKey`: a new stream beyond that closes the key's oldest;
 * - an organisation holds at most `maxStreamsPerOrganisation` across all its keys: a new stream beyond
 *   that is refused (reserve), unless it replaces its key's oldest; another key's stream is never
 *   closed for it. Streams live in one process, so each process keeps its own books.
 *
 * The frozen v1 transport of the SDK (`@modelcontextprotocol/server-legacy/sse`) speaks the protocol;
 * this only keeps the books.
 */
export interface SseLimits {
  keepAliveMs: number;
  idleMs: number;
  maxStreamsPerKey: number;
  maxStreamsPerOrganisation: number;
}

export const DEFAULT_SSE_LIMITS: SseLimits = {
  keepAliveMs: 20_000,
  idleMs: 10 * 60_000,
  maxStreamsPerKey: 5,
  maxStreamsPerOrganisation: 10,
};

/** Whose stream it is: its key, and the key's organisation. */
export interface SseOwner {
  apiKeyId: string;
  organisationId: string;
}

/** A place for a new stream, held from its admission until open() takes it or it is released. */
export type SseReservation = Readonly<SseOwner>;

export interface SseSession {
  transport: SSEServerTransport;
  /** The stream's response, which keep-alives are written to. */
  response: ServerResponse;
  apiKeyId: string;
  organisationId: string;
  openedAt: number;
  lastActive: number;
  /** The server closed its transport; its response may not have closed yet (a client not reading). */
  closed: boolean;
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
  /** Streams admitted and not yet opened: they count towards the limits as open ones do. */
  readonly #reserved = new Set<SseReservation>();
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
   * A place for a new stream of `owner`, or null when its organisation already holds (or is opening)
   * maxStreamsPerOrganisation streams and the new one would not replace one of its key's own (a key
   * at maxStreamsPerKey, none of its streams still closing, replaces its oldest, which leaves the
   * organisation's count as it was). Taken in one turn, so concurrent admissions cannot overshoot;
   * open() takes it, release() gives it back.
   */
  reserve(owner: SseOwner): SseReservation | null {
    const streams = [...this.#sessions.values(), ...this.#reserved];
    // Only the key's open streams can be replaced (open() closes the oldest of those): places still
    // being opened do not make room. Nor does a replacement while one of the key's streams is still
    // closing: a replaced stream whose client stopped reading keeps its socket, and replacing again and
    // again would pile such sockets up past both caps.
    const ofKey = [...this.#sessions.values()].filter((s) => s.apiKeyId === owner.apiKeyId);
    const openOfKey = ofKey.filter((s) => !s.closed).length;
    const replaces = openOfKey >= this.#limits.maxStreamsPerKey && openOfKey === ofKey.length;
    const ofOrganisation = streams.filter((s) => s.organisationId === owner.organisationId).length;
    if (!replaces && ofOrganisation >= this.#limits.maxStreamsPerOrganisation) return null;
    const reservation: SseReservation = { apiKeyId: owner.apiKeyId, organisationId: owner.organisationId };
    this.#reserved.add(reservation);
    return reservation;
  }

  /** Gives back a place open() did not take (the request failed first); nothing if it did. */
  release(reservation: SseReservation): void {
    this.#reserved.delete(reservation);
  }

  /**
   * Opens a stream on `response` in the place `reservation` holds and connects `server` to it; null
   * (and `server` closed) if the client has gone meanwhile. The response's 'close' is listened for in
   * the same turn as the last check, so a stream that ends is always dropped from the books.
   */
  async open(
    response: ServerResponse,
    reservation: SseReservation,
    server: Server,
  ): Promise<SseSession | null> {
    try {
      const SSEServerTransport = await loadSseTransport();
      const { apiKeyId, organisationId } = reservation;
      const ofKey = [...this.#sessions.values()].filter((s) => s.apiKeyId === apiKeyId);
      const stillOpen = ofKey.filter((s) => !s.closed);
      if (ofKey.length >= this.#limits.maxStreamsPerKey && stillOpen.length > 0) {
        const oldest = stillOpen.reduce((a, b) => (a.openedAt <= b.openedAt ? a : b));
        await oldest.transport.close();
      }
      if (response.destroyed) {
        await server.close();
        return null;
      }
      const transport = new SSEServerTransport('/messages', response);
      const now = this.#now();
      const session: SseSession = {
        transport,
        response,
        apiKeyId,
        organisationId,
        openedAt: now,
        lastActive: now,
        closed: false,
      };
      this.#sessions.set(transport.sessionId, session);
      this.#reserved.delete(reservation);
      response.on('close', () => {
        this.#sessions.delete(transport.sessionId);
        void server.close();
        if (this.#sessions.size === 0) this.#stopTicking();
      });
      // Closing the transport (a replaced, idle or revoked stream; shutdown) ends its response, whose
      // 'close' waits until what was written is sent, which a client that stopped reading delays for
      // as long as it likes. Marked closed at once, it is handed no more messages (the SDK answers one
      // for a closed transport with a plain-text 500), while its socket still counts towards the
      // limits until it goes. The server keeps this across connect().
      transport.onclose = () => {
        session.closed = true;
      };
      await server.connect(transport);
      this.#startTicking();
      return session;
    } finally {
      this.#reserved.delete(reservation);
    }
  }

  /**
   * The open session with this id of this key, marked active (a message is arriving), or undefined.
   * Another key's session is left as it was: its POSTs must not keep a stranger's idle stream open.
   */
  touch(sessionId: unknown, apiKeyId: string): SseSession | undefined {
    const session = typeof sessionId === 'string' ? this.#sessions.get(sessionId) : undefined;
    if (!session || session.closed || session.apiKeyId !== apiKeyId) return undefined;
    session.lastActive = this.#now();
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
