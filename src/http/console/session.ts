import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../../app/deps.ts';
import { type ConsoleSession, IDLE_TIMEOUT_MS, resumeSession } from '../../app/staff-account-service.ts';
import { originOf } from '../pages/page-shell.ts';
import { ownOrigins } from '../public-base-url.ts';

/**
 * The console's session cookie and the checks every form post passes. The cookie is HttpOnly (no
 * script reads it), Secure (browsers treat loopback as secure, so local use works too), SameSite=Lax
 * (sent on top-level navigation only, never on another site's form post) and lives no longer than the
 * idle timeout, which the server enforces anyway. Form posts must also come from this server's own
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

export function setSessionCookie(reply: FastifyReply, token: string): void {
  reply.header(
    'set-cookie',
    `${SESSION_COOKIE}=${token}; Path=/console; HttpOnly; Secure; SameSite=Lax; Max-Age=${IDLE_TIMEOUT_MS / 1000}`,
  );
}

export function clearSessionCookie(reply: FastifyReply): void {
  reply.header('set-cookie', `${SESSION_COOKIE}=; Path=/console; HttpOnly; Secure; SameSite=Lax; Max-Age=0`);
}

/**
 * The signed-in session, or a redirect to the sign-in page (remembering where the person was going,
 * for a page; saying the session ended, for a post).
 */
export async function requireSession(
  db: AppDeps['db'],
  request: FastifyRequest,
  now: number,
): Promise<ConsoleSession> {
  const token = cookieOf(request, SESSION_COOKIE);
  const session = token === undefined ? null : await resumeSession(db, token, now);
  if (session) return session;
  const next = request.method === 'GET' ? `&next=${encodeURIComponent(request.url)}` : '';
  throw new ConsoleRedirect(`/console/sign-in?expired=${token === undefined ? '0' : '1'}${next}`);
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

/** A safe place to go back to after signing in: a console path of this server only. */
export function safeNext(value: string | undefined): string {
  return value && /^\/console(\/|$|\?)/.test(value) && !value.startsWith('//') ? value : '/console/diary';
}
