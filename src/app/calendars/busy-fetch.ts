import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { addressKind, checkedLookup, type DestinationPolicy } from '../webhooks/destinations.ts';
import { describeRequestFailure } from '../webhooks/request-failure.ts';

/**
 * One conditional GET of an external calendar (design.md 9.6), made by the refresher only, never on a
 * request's path: https (plain http only to this machine, with CALENDAR_ALLOW_LOOPBACK=1), never to a
 * private, link-local or metadata address (the webhooks' address guard, checked on the connection's
 * own lookup, so a name cannot resolve one way when checked and another when connected), at most a
 * few redirects (each checked again), the whole exchange cut at a timeout and the body at a size.
 */

export interface FetchLimits {
  timeoutMs: number;
  maxBytes: number;
}

export const DEFAULT_FETCH_LIMITS: FetchLimits = { timeoutMs: 15_000, maxBytes: 5 * 2 ** 20 };
const MAX_REDIRECTS = 3;

export type FetchOutcome =
  | { kind: 'not_modified' }
  | { kind: 'fetched'; text: string; etag: string | null; lastModified: string | null }
  | { kind: 'failed'; reason: string };

/** CALENDAR_ALLOW_LOOPBACK=1 opens this machine and private networks (tests, an on-premises server). */
function policyOf(allowLoopback: boolean): DestinationPolicy {
  return { allowInsecure: allowLoopback, allowPrivateNetworks: allowLoopback };
}

function calendarRefusal(address: string, policy: DestinationPolicy): string | null {
  const kind = addressKind(address);
  if (kind === 'public') return null;
  if ((kind === 'loopback' || kind === 'private' || kind === 'link_local') && policy.allowPrivateNetworks) {
    return null;
  }
  return kind === 'loopback' || kind === 'private' || kind === 'link_local'
    ? 'a loopback, private or link-local address (allowed only with CALENDAR_ALLOW_LOOPBACK=1)'
    : 'a reserved or cloud-metadata address, never allowed';
}

function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** Whether a URL's host is this machine by its name or address (localhost, 127.0.0.1, [::1]). */
export function namesThisMachine(url: URL): boolean {
  const host = hostOf(url);
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    (isIP(host) !== 0 && addressKind(host) === 'loopback')
  );
}

/** Why a calendar URL is refused before any connection, or null. */
export function calendarUrlRefusal(raw: string, allowLoopback: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'the URL is not valid';
  }
  if (url.username || url.password) return 'the URL carries a user name or password';
  const host = hostOf(url);
  const local = namesThisMachine(url);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowLoopback && local)) {
    return 'the URL is not https (plain http only to this machine, with CALENDAR_ALLOW_LOOPBACK=1)';
  }
  if (isIP(host) !== 0) {
    const why = calendarRefusal(host, policyOf(allowLoopback));
    if (why) return `the URL's host is ${why}`;
  } else if (local && !allowLoopback) {
    return "the URL's host is this machine (allowed only with CALENDAR_ALLOW_LOOPBACK=1)";
  }
  return null;
}

export class CalendarFetcher {
  readonly #allowLoopback: boolean;
  readonly #limits: FetchLimits;
  readonly #lookup: ReturnType<typeof checkedLookup>;

  constructor(allowLoopback: boolean, limits: FetchLimits = DEFAULT_FETCH_LIMITS) {
    this.#allowLoopback = allowLoopback;
    this.#limits = limits;
    this.#lookup = checkedLookup(policyOf(allowLoopback), calendarRefusal);
  }

  /** GET `url`, conditional on the validators of the copy kept. Never throws. */
  async fetch(
    url: string,
    validators: { etag: string | null; lastModified: string | null },
  ): Promise<FetchOutcome> {
    const deadline = AbortSignal.timeout(this.#limits.timeoutMs);
    let current = url;
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const refused = calendarUrlRefusal(current, this.#allowLoopback);
      if (refused) return { kind: 'failed', reason: refused };
      const answer = await this.#get(current, validators, deadline);
      if ('redirect' in answer) {
        try {
          current = new URL(answer.redirect, current).toString();
        } catch {
          return { kind: 'failed', reason: 'a redirect to an invalid URL' };
        }
        continue;
      }
      return answer;
    }
    return { kind: 'failed', reason: `more than ${MAX_REDIRECTS} redirects` };
  }

  #get(
    raw: string,
    validators: { etag: string | null; lastModified: string | null },
    signal: AbortSignal,
  ): Promise<FetchOutcome | { redirect: string }> {
    const url = new URL(raw);
    const client = url.protocol === 'https:' ? https : http;
    const headers: Record<string, string> = {
      accept: 'text/calendar, */*;q=0.5',
      'accept-encoding': 'gzip, deflate, br',
      'user-agent': 'booking-engine calendar refresher',
    };
    if (validators.etag) headers['if-none-match'] = validators.etag;
    if (validators.lastModified) headers['if-modified-since'] = validators.lastModified;
    const { timeoutMs, maxBytes } = this.#limits;
    return new Promise((resolve) => {
      let settled = false;
      const settle = (outcome: FetchOutcome | { redirect: string }) => {
        if (settled) return;
        settled = true;
        resolve(outcome);
      };
      const request = client.request(url, { method: 'GET', headers, lookup: this.#lookup, signal });
      request.on('response', (response) => {
        const status = response.statusCode ?? 0;
        if (status === 304) {
          response.resume();
          settle({ kind: 'not_modified' });
          return;
        }
        if ([301, 302, 303, 307, 308].includes(status) && response.headers.location) {
          response.resume();
          settle({ redirect: response.headers.location });
          return;
        }
        if (status < 200 || status > 299) {
          response.resume();
          settle({ kind: 'failed', reason: `the server answered ${status}` });
          return;
        }
        const declared = Number(response.headers['content-length'] ?? Number.NaN);
        if (declared > maxBytes) {
          response.destroy();
          settle({ kind: 'failed', reason: `the calendar is larger than ${maxBytes} bytes` });
          return;
        }
        // A server may send the file compressed (asked to, and without an Accept-Encoding at all, RFC
        // 9110 12.5.3): it is read decompressed, the size limit counting what it decompresses to.
        const decoder = decoderOf(response.headers['content-encoding']);
        if (decoder === null) {
          response.destroy();
          settle({ kind: 'failed', reason: 'the server sent the calendar in an encoding not read' });
          return;
        }
        const body: Readable = decoder ? response.pipe(decoder) : response;
        const chunks: Buffer[] = [];
        let read = 0;
        body.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > maxBytes) {
            response.destroy();
            decoder?.destroy();
            settle({ kind: 'failed', reason: `the calendar is larger than ${maxBytes} bytes` });
            return;
          }
          chunks.push(chunk);
        });
        body.on('end', () =>
          settle({
            kind: 'fetched',
            text: Buffer.concat(chunks).toString('utf8'),
            etag: headerOf(response.headers.etag),
            lastModified: headerOf(response.headers['last-modified']),
          }),
        );
        decoder?.on('error', () =>
          settle({ kind: 'failed', reason: 'the compressed calendar could not be decompressed' }),
        );
        response.on('error', (error: NodeJS.ErrnoException) =>
          settle({ kind: 'failed', reason: describe(error, timeoutMs) }),
        );
        // Closed before all of it came; one that came whole is still being decompressed.
        response.on('close', () => {
          if (!decoder || !response.complete) {
            settle({ kind: 'failed', reason: describe(signal.reason, timeoutMs) });
          }
        });
      });
      request.on('error', (error: NodeJS.ErrnoException) =>
        settle({ kind: 'failed', reason: describe(error, timeoutMs) }),
      );
      request.end();
    });
  }
}

/** A decompressor for the answer's Content-Encoding, undefined for none, null for one not read. */
function decoderOf(
  header: string | undefined,
): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | undefined | null {
  const encoding = (header ?? '').trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') return undefined;
  if (encoding === 'gzip' || encoding === 'x-gzip') return zlib.createGunzip();
  if (encoding === 'deflate') return zlib.createInflate();
  if (encoding === 'br') return zlib.createBrotliDecompress();
  return null;
}

function headerOf(value: string | string[] | undefined): string | null {
  const one = Array.isArray(value) ? value[0] : value;
  return one && one.length <= 500 ? one : null;
}

/** Why a fetch got no calendar, in words with nothing of the URL in them (it may hold a secret). */
function describe(error: NodeJS.ErrnoException | undefined, timeoutMs: number): string {
  return error
    ? describeRequestFailure(error, timeoutMs)
    : 'the connection closed before the calendar was read';
}
