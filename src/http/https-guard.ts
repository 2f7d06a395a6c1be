import type { FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.ts';

const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host'];

/**
 * The contract wants HTTPS for everything. Plain HTTP is served only where nothing crosses a network:
 * a loopback peer that is not relaying anyone else. A request is secure when it arrived over TLS or
 * when a proxy trusted by TRUST_PROXY says the client used https (Fastify resolves request.protocol
 * from X-Forwarded-Proto only for trusted peers). Forwarding headers on plain HTTP mean a proxy is
 * relaying a remote client: refused unless that proxy is trusted and reports https.
 */
export function assertSecureTransport(request: FastifyRequest): void {
  if (request.protocol === 'https') return;
  const relayed = FORWARDING_HEADERS.some((name) => request.headers[name] !== undefined);
  if (!relayed && isLoopback(request.socket.remoteAddress)) return;
  throw new AppError(
    'https_required',
    'Plain HTTP is refused: use HTTPS (or a proxy trusted by TRUST_PROXY that reports https).',
  );
}

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  if (address === '::1') return true;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}
