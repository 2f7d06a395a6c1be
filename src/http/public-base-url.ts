import type { AddressInfo } from 'node:net';
import { Server as TlsServer } from 'node:tls';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { customerLinks } from '../app/customer-links.ts';
import type { AppDeps } from '../app/deps.ts';
import type { BookingViewer } from '../contract/booking.ts';
import { principalOf } from './authenticate.ts';

/** How this server may name itself in links it gives out (payment_url) and which origins its forms accept. */
export interface PublicLinks {
  /** PUBLIC_BASE_URL when set: every link starts with it, whatever a request's Host says. */
  publicBaseUrl: string | null;
  /** Host names (lower case, no port) this server serves: loopback names and ALLOWED_HOSTS. */
  allowedHosts: ReadonlySet<string>;
}

declare module 'fastify' {
  interface FastifyInstance {
    publicLinks: PublicLinks;
  }
}

export function installPublicLinks(app: FastifyInstance, links: PublicLinks): void {
  app.decorate('publicLinks', links);
}

/**
 * Where the customer reaches this server, for links such as payment_url, which are stored with the
 * booking's idempotent answer and sent on to customers: PUBLIC_BASE_URL when set; otherwise the
 * request's own scheme and host (through a trusted proxy) when that host is one this server serves;
 * otherwise the address it listens on. Never a name only the request vouches for: a Host header such
 * as `evil.example/phish?x=` would otherwise put a stranger's page in a customer's payment link.
 */
export function publicBaseUrl(request: FastifyRequest): string {
  const { publicBaseUrl: configured } = request.server.publicLinks;
  return configured ?? ownOrigin(request) ?? listeningOrigin(request);
}

/**
 * The path PUBLIC_BASE_URL puts before this server's own paths: '' without one, '/booking' for
 * https://example.com/booking. Behind a proxy that strips it, the routes here are matched without it,
 * yet every address a browser is given (a page's links and forms, a redirect, a cookie's path, the
 * console's script's requests) must start with it, or the browser asks the proxy for a path it does
 * not route. `from` is a request or a reply (either knows its server).
 */
export function publicPathPrefix(from: { server: FastifyInstance }): string {
  const configured = from.server.publicLinks.publicBaseUrl;
  return configured ? new URL(configured).pathname.replace(/\/+$/, '') : '';
}

/**
 * The public path of `path`, a path as this server's routes match it ('/p/acme', '/console/diary'):
 * where a browser reaches it, under PUBLIC_BASE_URL's path. A URL of its own (https://…, //host…) is
 * left as it is.
 */
export function publicPath(from: { server: FastifyInstance }, path: string): string {
  return isServerPath(path) ? `${publicPathPrefix(from)}${path}` : path;
}

/** Whether `url` is a path from this server's root ('/…'), not a URL of another host ('//…', '/\\…'). */
function isServerPath(url: string): boolean {
  return /^\/(?![/\\])/.test(url);
}

/** `scheme://host[:port]` of the request, when its host is one this server serves; else undefined. */
export function ownOrigin(request: FastifyRequest): string | undefined {
  const host = request.host;
  const name = hostnameOf(host);
  if (name === undefined || !request.server.publicLinks.allowedHosts.has(name)) return undefined;
  return `${request.protocol}://${host}`;
}

/** The origins this server's own pages are served from, for the Origin check of its forms. */
export function ownOrigins(request: FastifyRequest): Set<string> {
  const origins = new Set<string>();
  const configured = request.server.publicLinks.publicBaseUrl;
  if (configured) origins.add(new URL(configured).origin);
  const own = ownOrigin(request);
  if (own) origins.add(new URL(own).origin);
  return origins;
}

/** The host name of a Host header (or an origin's authority), lower case; undefined when it is not one. */
export function hostnameOf(hostHeader: string | undefined): string | undefined {
  if (!hostHeader || /[/?#@\\\s]/.test(hostHeader)) return undefined;
  try {
    return new URL(`http://${hostHeader}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

/** The address the server listens on (a wildcard address read as loopback). */
function listeningOrigin(request: FastifyRequest): string {
  const server = request.server.server;
  const scheme = server instanceof TlsServer ? 'https' : 'http';
  const bound = server.address() as AddressInfo | null;
  if (!bound) return `${scheme}://localhost`;
  const { address, port } = bound;
  const host = WILDCARDS[address] ?? (address.includes(':') ? `[${address}]` : address);
  return `${scheme}://${host}:${port}`;
}

const WILDCARDS: Record<string, string> = { '0.0.0.0': '127.0.0.1', '::': '[::1]' };

/**
 * Who this request's Booking is shown to: its key's scope, and the links (payment_url,
 * booking_page_url) as the caller would hand them to the customer; no payment_url without a payment
 * provider (nobody could pay). The presenter gives the links to read_write keys only.
 */
export function bookingViewer(deps: AppDeps, request: FastifyRequest): BookingViewer {
  return { scope: principalOf(request).scope, links: customerLinks(deps.payments, publicBaseUrl(request)) };
}
