import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { toAppError } from '../error-envelope.ts';
import { withPublicPaths } from '../pages/page-shell.ts';
import { esc, page, securePage } from './page.ts';

/**
 * The console's page for a refusal or a fault: what went wrong in words, the way back to the diary and
 * the request id for support. It names nothing of a session, so it serves addresses refused before any
 * route ran (answerConsoleFrameworkError) as well as the routes' own failures.
 */

/** The title of a refusal's page by status; "Something went wrong" is kept for faults. */
export const ERROR_TITLES: Record<number, string> = {
  400: 'Please check',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Not possible now',
  413: 'Too large',
  429: 'Too many requests',
  503: 'Not available now',
};

export function sendProblem(
  reply: FastifyReply,
  status: number,
  title: string,
  message: string,
  requestId: string,
): FastifyReply {
  const body = `<h1>${esc(title)}</h1><p class="error" role="alert">${esc(message)}</p><p><a href="/console/diary">Back to the diary</a> · Reference for support: <code>${esc(requestId)}</code></p>`;
  return securePage(reply.code(status)).send(withPublicPaths(reply, page({ title }, body)));
}

/** Whether a request's address is the console's (where a person in a browser reads the answer). */
export function isConsoleAddress(url: string): boolean {
  return (
    url === '/console' ||
    url.startsWith('/console/') ||
    url.startsWith('/console?') ||
    url.startsWith('/console%')
  );
}

/**
 * The router's refusal of a console address (a % that escapes nothing in a link typed or cut short):
 * the console's page saying so, since a browser shows the API's JSON envelope as raw text.
 */
export function answerConsoleFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  reply.header('x-request-id', request.id);
  const refusal = toAppError(error);
  sendProblem(
    reply,
    refusal.status,
    ERROR_TITLES[refusal.status] ?? 'Something went wrong',
    refusal.message,
    request.id,
  );
}
