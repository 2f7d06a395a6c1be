import { request as httpRequest } from 'node:http';
import type { Readable } from 'node:stream';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
// The SDK's 1.x client, as hosts that still run it connect over the legacy SSE transport.
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { expect } from 'vitest';
import { createApiKey } from '../../src/app/api-key-service.ts';
import { importCatalogue } from '../../src/app/catalogue-import/import-catalogue.ts';
import { openDatabase } from '../../src/data/database.ts';
import type { HttpOptions } from '../../src/http/build-app.ts';
import { REPO_ROOT } from './cli.ts';
import { demoCatalogue, type Era, harness, type McpHarness } from './mcp-harness.ts';
import { createTempDatabase } from './temp-database.ts';
import { startTestApp, type TestApp } from './test-app.ts';

/**
 * Real MCP transports for end-to-end tests: the test app listening on a real port (Streamable HTTP at
 * /mcp, SSE at /sse), and the `booking mcp` command spawned as a child process (stdio), each driven by
 * the SDK's own client: 2.x, pinned to one protocol generation (Era), on Streamable HTTP and stdio;
 * 1.x on SSE, as the hosts that still use that transport run it.
 */

const CLIENT_INFO = { name: 'e2e-agent', version: '1.0.0' };

/** A harness that also collects the client's transport and protocol errors (e.g. a stray stdout line). */
export interface ConnectedClient extends McpHarness {
  errors: Error[];
}

function track(client: Client | ClientV1, close: () => Promise<void>): ConnectedClient {
  const errors: Error[] = [];
  client.onerror = (error) => errors.push(error);
  return Object.assign(harness(client as Client, close), { errors });
}

/** A 2.x client speaking one protocol generation: 2026-07-28 (pinned) or the 2025 handshake. */
export function clientFor(era: Era, name = CLIENT_INFO.name): Client {
  const mode = era === 'modern' ? { pin: '2026-07-28' } : 'legacy';
  return new Client({ ...CLIENT_INFO, name }, { versionNegotiation: { mode } as never });
}

export interface ListeningApp {
  t: TestApp;
  /** e.g. http://127.0.0.1:40123 */
  origin: string;
  port: number;
}

/** The demo catalogue's app on a real loopback port, its clock near the real now. */
export async function startListeningApp(http: HttpOptions = {}): Promise<ListeningApp> {
  const t = await startTestApp({
    catalogues: [demoCatalogue()],
    now: new Date().toISOString(),
    // A file's tests all fail to authenticate from one address, on a clock that moves only when a test
    // moves it: whether their refusals stayed under the per-address limit depended on the second the
    // run began. Tests of that limit start a server of their own.
    limits: { requestsPerMinute: 100_000, failedAuthPerMinute: 100_000 },
    http,
  });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('not listening on a port');
  return { t, origin: `http://127.0.0.1:${address.port}`, port: address.port };
}

/** The SDK's client over Streamable HTTP (POST /mcp), with the key as a Bearer token. */
export async function connectStreamableHttp(
  origin: string,
  key: string,
  era: Era = 'modern',
): Promise<ConnectedClient> {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', origin), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  const client = clientFor(era);
  await client.connect(transport);
  expect(client.getProtocolEra()).toBe(era);
  return track(client, () => client.close());
}

/** The SDK's client over the legacy SSE transport; `messagesUrl()` is the endpoint the server announced. */
export async function connectSse(
  origin: string,
  key: string,
): Promise<ConnectedClient & { messagesUrl(): URL }> {
  const Authorization = `Bearer ${key}`;
  let messagesUrl: URL | undefined;
  // Sees every request of the transport: the stream's GET and the POSTs to the announced endpoint.
  const recordingFetch: typeof fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.pathname === '/messages') messagesUrl = url;
    return fetch(input, init);
  };
  const transport = new SSEClientTransport(new URL('/sse', origin), {
    // The SDK sends requestInit's headers with the stream's GET as well as with the POSTs.
    requestInit: { headers: { Authorization } },
    fetch: recordingFetch,
  });
  const client = new ClientV1(CLIENT_INFO);
  await client.connect(transport);
  return Object.assign(
    track(client, () => client.close()),
    {
      messagesUrl() {
        if (!messagesUrl) throw new Error('the client has not posted to /messages yet');
        return messagesUrl;
      },
    },
  );
}

/** A request through node:http, which (unlike fetch) lets the test set the Host header. */
export function rawPost(
  origin: string,
  path: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<{ status: number; json: unknown }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      new URL(path, origin),
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'content-length': String(Buffer.byteLength(payload)),
          ...headers,
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) });
          } catch (error) {
            reject(error);
          }
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

export interface ChildDatabase {
  /** DATABASE_URL for the child process. */
  url: string;
  keys: { read: string; readWrite: string };
  /** Rows of the bookings table, read with a fresh read-only connection. */
  bookings(): Promise<{ reference: string; status: string; starts_at: number }[]>;
  /** Removes the database (the child must have exited). */
  dispose(): Promise<void>;
}

/**
 * A migrated database (a SQLite file, or a PostgreSQL database in the suite's PostgreSQL run) with the
 * demo catalogue and two keys of northside-hair, closed for a child.
 */
export async function createChildDatabase(): Promise<ChildDatabase> {
  const database = await createTempDatabase();
  const now = Date.now();
  await importCatalogue(database.db, demoCatalogue(), now);
  const keyOf = async (scope: 'read' | 'read_write') =>
    (
      await createApiKey(
        database.db,
        { organisationSlug: 'northside-hair', label: `e2e ${scope}`, scope, rateLimitPerMinute: null },
        now,
      )
    ).key;
  const keys = { read: await keyOf('read'), readWrite: await keyOf('read_write') };
  await database.close();
  return {
    url: database.url,
    keys,
    bookings: () => readBookings(database.url),
    dispose: () => database.dispose(),
  };
}

/** The bookings of the database at `url`, read on a connection of their own that writes nothing. */
export async function readBookings(
  url: string,
): Promise<{ reference: string; status: string; starts_at: number }[]> {
  const { db, close } = openDatabase(url, { readonly: true });
  try {
    return await db
      .selectFrom('bookings')
      .select(['reference', 'status', 'starts_at'])
      .orderBy('starts_at')
      .execute();
  } finally {
    await close();
  }
}

/** faketime's variables, when the suite runs under it: a child then lives on the same faked date. */
function fakedClock(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] =>
        entry[1] !== undefined && (entry[0] === 'LD_PRELOAD' || entry[0].startsWith('FAKETIME')),
    ),
  );
}

/** The SDK's client driving a spawned `booking mcp <args>` over its stdin and stdout. */
export async function connectStdio(
  args: string[],
  env: Record<string, string>,
  era: Era = 'modern',
  launch: { command: string; args: string[]; cwd: string } = {
    command: process.execPath,
    args: ['bin/booking.js', 'mcp'],
    cwd: REPO_ROOT,
  },
): Promise<ConnectedClient & { stderr(): string }> {
  const transport = new StdioClientTransport({
    command: launch.command,
    args: [...launch.args, ...args],
    // Only what the command needs (the SDK adds its short list of safe variables such as HOME), and
    // a faked clock when the suite runs under faketime (docs/decisions/tests-on-the-real-calendar.md).
    env: { PATH: process.env.PATH ?? '', ...fakedClock(), ...env },
    cwd: launch.cwd,
    stderr: 'pipe',
  });
  let stderr = '';
  (transport.stderr as Readable).on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const client = clientFor(era);
  try {
    await client.connect(transport);
  } catch (error) {
    await transport.close();
    throw new Error(`booking mcp did not start: ${String(error)}\n${stderr}`);
  }
  expect(client.getProtocolEra()).toBe(era);
  return Object.assign(
    track(client, () => client.close()),
    { stderr: () => stderr },
  );
}
