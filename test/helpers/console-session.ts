import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { createUser } from '../../src/app/staff-account-service.ts';
import type { TestApp } from './test-app.ts';

/**
 * A staff account signed in to the console through HTTP (inject), as a browser would be: its session
 * cookie and CSRF token carried on every request; and the accessible-name check of design.md 8.4.
 */
const ORIGIN = 'http://localhost:80';

export interface SignedIn {
  get(url: string): Promise<LightMyRequestResponse>;
  post(url: string, form?: Record<string, string | string[]>): Promise<LightMyRequestResponse>;
}

function encode(fields: Record<string, string | string[]>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) for (const v of [value].flat()) params.append(name, v);
  return params.toString();
}

/** A console account of acme-hair (the small catalogue's organisation), made as `booking users create` would. */
export async function addAcmeAccount(
  t: TestApp,
  email: string,
  role: 'owner' | 'admin' | 'staff',
  password: string,
): Promise<void> {
  await createUser(t.database.db, { organisationSlug: 'acme-hair', email, role, password }, t.clock.nowMs());
}

/** A new console account of `organisation`, made as `booking users create` would, signed in. */
export async function signInNewAccount(
  t: TestApp,
  organisation: string,
  email: string,
  role: 'owner' | 'admin' | 'staff',
  password = 'correct horse battery',
): Promise<SignedIn> {
  await createUser(t.database.db, { organisationSlug: organisation, email, role, password }, t.clock.nowMs());
  return signInToConsole(t, organisation, email, password);
}

export async function signInToConsole(
  t: TestApp,
  organisation: string,
  email: string,
  password: string,
): Promise<SignedIn> {
  const response = await t.app.inject({
    method: 'POST',
    url: '/console/sign-in',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: ORIGIN },
    payload: encode({ organisation, email, password, next: '/console/diary' }),
  });
  expect(response.statusCode, response.body).toBe(303);
  const cookie = String(response.headers['set-cookie']).split(';')[0]!;
  const get = (url: string) => t.app.inject({ method: 'GET', url, headers: { cookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec((await get('/console/clients')).body)![1]!;
  return {
    get,
    post: (url, fields = {}) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: ORIGIN, cookie },
        payload: encode({ _csrf: csrf, ...fields }),
      }),
  };
}

/**
 * Every control of the page's main part has an accessible name (design.md 8.4): an input or select
 * by a <label for> or by the <label> around it, a button or link by its text (hidden text counts).
 */
export function expectNamedControls(html: string): void {
  const main = /<main id="main">([\s\S]*)<\/main>/.exec(html)![1]!;
  const textOf = (inner: string) => inner.replace(/<[^>]+>/g, '').trim();
  const labelled = new Set([...main.matchAll(/<label for="([^"]+)"/g)].map((m) => m[1]));
  const wrapped = new Set(
    [...main.matchAll(/<label[^>]*>([\s\S]*?)<\/label>/g)].flatMap((m) =>
      [...m[1]!.matchAll(/<input[^>]*>/g)].map((input) => input[0]),
    ),
  );
  const controls = [...main.matchAll(/<(input|select|textarea)\b[^>]*>/g)].filter(
    (m) => !/type="hidden"/.test(m[0]),
  );
  const buttons = [...main.matchAll(/<button\b[^>]*>([\s\S]*?)<\/button>/g)];
  expect(controls.length + buttons.length).toBeGreaterThan(0);
  for (const [control] of controls) {
    const id = /\bid="([^"]+)"/.exec(control)?.[1];
    const named =
      (id !== undefined && labelled.has(id)) || wrapped.has(control) || /aria-label="[^"]+"/.test(control);
    expect(named, control).toBe(true);
  }
  for (const [button, inner] of buttons) {
    expect(textOf(inner!), button).not.toBe('');
  }
  for (const [link, inner] of main.matchAll(/<a\b[^>]*>([\s\S]*?)<\/a>/g)) {
    expect(textOf(inner!), link).not.toBe('');
  }
}

/** The rows of a page's table body, each as its cells' text (tags and hidden text dropped). */
export function tableRows(html: string): string[][] {
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(html)?.[1] ?? '';
  return [...body.matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...row[1]!.matchAll(/<td>([\s\S]*?)<\/td>/g)].map((cell) =>
      cell[1]!
        .replace(/<span class="visually-hidden">[\s\S]*?<\/span>/g, '')
        .replace(/<br>/g, ' | ')
        .replace(/<[^>]+>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    ),
  );
}
