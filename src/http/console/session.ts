import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../../app/deps.ts';
import { type ConsoleSession, IDLE_TIMEOUT_MS, resumeSession } from '../../app/staff-account-service.ts';
import { originOf } from '../pages/page-shell.ts';
import { ownOrigins, publicPath } from '../public-base-url.ts';

/**
 * The console's session cookie and the checks every form post passes. The cookie is HttpOnly (no
 * script reads it), Secure (browsers treat loopback as secure, so local use works too), SameSite=Lax
 * (sent on top-level navigation only, never on another site's form post) and ends when the session
 * does: the idle timeout after its last use, renewed with every use (requireSession); the server
 * enforces the timeout anyway. Form posts must also come from this server's own
 * pages (Origin or Referer) and carry the session's CSRF token.
 */
export const SESSION_COOKIE = 'console_session';

export class ConsoleRedirect extends Error {
  readonly location: string;

  constructor(location: string) {
    super('redirect');
    this.location = location;
  }
}

/** Thrown where a page answers with a status of its own (403 for a role, 400 for a bad form). */
export class ConsoleRefusal extends Error {
  readonly status: number;
  readonly title: string;

  constructor(status: number, title: string, message: string) {
    super(message);
    this.status = status;
    this.title = title;
  }
}

export function cookieOf(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * The session's cookie, ending when the session would end unused (a new one's: IDLE_TIMEOUT_MS). Its
 * path is the console's public path (/console, or /booking/console under PUBLIC_BASE_URL
 * https://example.com/booking): a browser sends it back only to addresses under that.
 */
export function setSessionCookie(reply: FastifyReply, token: string, maxAgeMs = IDLE_TIMEOUT_MS): void {
  replaceSessionCookie(
    reply,
    `${SESSION_COOKIE}=${token}; Path=${publicPath(reply, '/console')}; HttpOnly; Secure; SameSite=Lax; Max-Age=${Math.ceil(maxAgeMs / 1000)}`,
  );
}

export function clearSessionCookie(reply: FastifyReply): void {
  replaceSessionCookie(
    reply,
    `${SESSION_COOKIE}=; Path=${publicPath(reply, '/console')}; HttpOnly; Secure; SameSite=Lax; Max-Age=0`,
  );
}

/** One Set-Cookie for the session per answer: sign-out's clearing replaces the renewal before it. */
function replaceSessionCookie(reply: FastifyReply, cookie: string): void {
  const others = [reply.getHeader('set-cookie') ?? []]
    .flat()
    .map(String)
    .filter((header) => !header.startsWith(`${SESSION_COOKIE}=`));
  reply.removeHeader('set-cookie');
  for (const header of others) reply.header('set-cookie', header);
  reply.header('set-cookie', cookie);
}

/**
 * Whether a request is the console's script at work rather than a person: the diary's stamp poll and
 * its refetch of the page (fetch() sends Sec-Fetch-Mode "cors"; opening a page or sending a form,
 * "navigate"). The script also says so itself (BACKGROUND_HEADER), for browsers without Sec-Fetch
 * headers (Safari before 16.4); a request with neither is taken to be a person.
 */
function isBackground(request: FastifyRequest): boolean {
  const mode = request.headers['sec-fetch-mode'];
  return request.headers[BACKGROUND_HEADER] === '1' || (mode !== undefined && mode !== 'navigate');
}

/** Sent by the console's script on its own requests (console-script.ts). */
export const BACKGROUND_HEADER = 'x-console-background';

/**
 * The signed-in session, or a redirect to the sign-in page (remembering where the person was going,
 * for a page; saying the session ended, for a post). A page opened or a form sent is use: the session's
 * idle time starts afresh and, given the reply, so does the cookie's, which ends when the session
 * would. The console's own background requests (isBackground) are not use: they neither keep the
 * session alive nor renew the cookie, so a diary left open on a screen nobody touches signs out after
 * IDLE_TIMEOUT_MS, as the README says.
 */
export async function requireSession(
  db: AppDeps['db'],
  request: FastifyRequest,
  now: number,
  reply?: FastifyReply,
): Promise<ConsoleSession> {
  const token = cookieOf(request, SESSION_COOKIE);
  const use = !isBackground(request);
  const session = token === undefined ? null : await resumeSession(db, token, now, use);
  if (session && token !== undefined) {
    if (use && reply) setSessionCookie(reply, token, session.idleUntil - now);
    return session;
  }
  const next = request.method === 'GET' ? `&next=${encodeURIComponent(request.url)}` : '';
  throw new ConsoleRedirect(`/console/sign-in?expired=${token === undefined ? '0' : '1'}${next}`);
}

/**
 * The session of the diary's stamp poll, or null once it has ended: the poll is never use, whatever
 * the browser says of itself, so it neither keeps the session alive nor renews the cookie.
 */
export async function pollSession(
  db: AppDeps['db'],
  request: FastifyRequest,
  now: number,
): Promise<ConsoleSession | null> {
  const token = cookieOf(request, SESSION_COOKIE);
  return token === undefined ? null : resumeSession(db, token, now, false);
}

/** A form post from another site (no own Origin or Referer) is refused before anything else. */
export function assertOwnOrigin(request: FastifyRequest): void {
  const claimed = originOf(request.headers.origin ?? request.headers.referer);
  if (claimed === undefined || !ownOrigins(request).has(claimed)) {
    throw new ConsoleRefusal(
      403,
      'Not accepted from here',
      'This form is accepted only from the console itself.',
    );
  }
}

/** The form's _csrf must be the session's token (compared in constant time). */
export function assertCsrf(session: ConsoleSession, form: Record<string, string>): void {
  const given = Buffer.from(form._csrf ?? '');
  const expected = Buffer.from(session.csrfToken);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new ConsoleRefusal(
      403,
      'Form expired',
      'This form is out of date or did not come from the console. Go back, reload the page and try again.',
    );
  }
}

/**
 * A safe place to go back to after signing in: a console path of this server only, as it goes into
 * the Location header and as a browser resolves it (staysInConsole). A control character (CR, LF,
 * NUL...), a line or paragraph separator or half a surrogate pair is refused with 400: no link of ours holds one, and a header cannot carry it. Other
 * characters beyond ASCII are percent-encoded, as a browser would send them.
 */
export function safeNext(value: string | undefined): string {
  if (value !== undefined && UNSAFE_IN_NEXT.test(value)) {
    throw new ConsoleRefusal(
      400,
      'Please check',
      'The address to go back to after signing in is not valid. Open the console from its own links.',
    );
  }
  if (!value || !/^\/console(\/|$|\?)/.test(value) || !staysInConsole(value)) return '/console/diary';
  return value.replace(/[^\x21-\x7e]/gu, (character) => encodeURIComponent(character));
}

const UNSAFE_IN_NEXT = /[\p{Cc}\p{Cs}\p{Zl}\p{Zp}]/u;

/**
 * Whether the path a browser makes of `value` is still the console's: it resolves dot segments
 * ("..", "%2e%2e") and reads "\\" as "/", so "/console/../p/x" is /p/x, outside the console.
 */
function staysInConsole(value: string): boolean {
  const path = new URL(value, 'http://console.invalid').pathname;
  return path === '/console' || path.startsWith('/console/');
}
