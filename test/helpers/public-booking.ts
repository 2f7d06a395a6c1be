import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { customerLinks } from '../../src/app/customer-links.ts';
import { deliverAllDue } from '../../src/app/outbox-delivery.ts';
import { listOutbox } from '../../src/app/outbox-service.ts';
import { localCheckout } from '../../src/app/payments.ts';
import type { OutboxMessage } from '../../src/domain/outbox.ts';
import { catalogueIds } from './booking-fixtures.ts';
import type { TestApp } from './test-app.ts';

/**
 * The public booking page driven through real HTTP (inject), as a stranger on the internet would: the
 * booking form, the code the message carries (delivered by the real outbox worker, logged as no
 * provider is set up), and the booking's page.
 */

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
/** The Origin inject's requests come from: the server's own (http://localhost:80). */
export const OWN_ORIGIN = 'http://localhost:80';

export function pageGet(t: TestApp, url: string): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'GET', url });
}

export function pagePost(
  t: TestApp,
  url: string,
  fields: Record<string, string> = {},
  options: { address?: string } = {},
): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url,
    headers: { ...FORM, origin: OWN_ORIGIN },
    payload: new URLSearchParams(fields).toString(),
    ...(options.address && { remoteAddress: options.address }),
  });
}

/** Books on /p/{org}/book; the response (303 to the booking's page when it worked). */
export async function bookOnPage(
  t: TestApp,
  org: string,
  booking: {
    location: string;
    service: string;
    startsAt: string;
    firstName?: string;
    lastName?: string;
    phone?: string;
    email?: string;
  },
  options: { address?: string } = {},
): Promise<LightMyRequestResponse> {
  const ids = await catalogueIds(t.database.db);
  return pagePost(
    t,
    `/p/${org}/book`,
    {
      location: booking.location,
      services: ids.services[booking.service]!,
      starts_at: booking.startsAt,
      first_name: booking.firstName ?? 'Rosa',
      last_name: booking.lastName ?? 'Parks',
      ...(booking.phone && { phone: booking.phone }),
      ...(booking.email && { email: booking.email }),
    },
    options,
  );
}

/** The booking page's path a successful booking redirects to. */
export function pagePathOf(response: LightMyRequestResponse): string {
  expect(response.statusCode, response.body).toBe(303);
  const location = String(response.headers.location);
  expect(location).toMatch(/^\/p\/manage\/[A-Za-z0-9_-]{43}$/);
  return location;
}

/** The reference a booking's page shows. */
export async function referenceOnPage(t: TestApp, path: string): Promise<string> {
  const body = (await pageGet(t, path)).body;
  const reference = /<strong>([A-Z0-9]+-[0-9A-Z]{6})<\/strong>/.exec(body)?.[1];
  expect(reference, body).toBeDefined();
  return reference!;
}

export async function messagesOf(t: TestApp, reference: string): Promise<OutboxMessage[]> {
  const ids = await catalogueIds(t.database.db);
  return (await listOutbox(t.database.db, ids.organisation)).filter((m) => m.reference === reference);
}

/** Delivers what is due (logged: no provider), as the worker of `booking serve` does. */
export async function deliver(t: TestApp): Promise<void> {
  const links = customerLinks(localCheckout, 'https://book.example');
  await deliverAllDue({ db: t.database.db, clock: t.clock, senders: { sms: null, email: null }, links });
}

/**
 * The latest verification message of a booking, delivered: its words, and the code and link path they
 * carry.
 */
export async function deliveredCode(
  t: TestApp,
  reference: string,
): Promise<{ message: OutboxMessage; words: string; code: string; linkPath: string }> {
  await deliver(t);
  const codes = (await messagesOf(t, reference)).filter((m) => m.kind === 'verification_code');
  const message = codes[codes.length - 1];
  expect(message?.status).toBe('logged');
  const body = JSON.parse(message!.body!) as { text: string; subject?: string };
  const words = [body.subject, body.text].filter(Boolean).join('\n');
  const code = /\b(\d{6})\b/.exec(words)?.[1];
  const link = /https:\/\/book\.example(\/p\/verify\/[A-Za-z0-9_-]{43})/.exec(words)?.[1];
  expect(code, words).toBeDefined();
  expect(link, words).toBeDefined();
  return { message: message!, words, code: code!, linkPath: link! };
}
