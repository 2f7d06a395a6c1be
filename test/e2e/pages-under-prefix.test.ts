import { runInNewContext } from 'node:vm';
import { afterEach, describe, expect, it } from 'vitest';
import { createUser } from '../../src/app/staff-account-service.ts';
import { offerFreedTimes } from '../../src/app/waitlist/offers.ts';
import { demoCatalogue } from '../helpers/mcp-harness.ts';
import { startPrefixProxy } from '../helpers/prefix-proxy.ts';
import { deliveredCode } from '../helpers/public-booking.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { bookingPagePathOf } from '../helpers/waitlist-fixtures.ts';

/**
 * The hosted pages and the console under a PUBLIC_BASE_URL path (https://example.com/booking), behind
 * a proxy that strips it (test/helpers/prefix-proxy.ts), as a browser uses them: every step follows
 * the forms, links and redirects the pages themselves give, every cookie goes back only where its Path
 * lets a browser send it, and every address any page names (href, action, src) and every address the
 * console's script asks for must lead through the proxy: nothing may reach it outside the prefix.
 * The demo catalogue (code proof on the public page, a £20 deposit on a full colour at Camden);
 * Monday 23 November 2026, 09:00 in London.
 */
const NOW = '2026-11-23T09:00:00Z';
const ORG = 'northside-hair';
const WEDNESDAY = '2026-11-25';
const WEDNESDAY_2PM = '2026-11-25T14:00Z';
/** Nobody works at Camden on Sundays: the search finds nothing and offers the waitlist. */
const SUNDAY = '2026-11-29';
const PREFIX = '/booking';
const OWNER = { email: 'owner@northside.example', password: 'correct horse battery' };

let t: TestApp | undefined;
let closeProxy: (() => Promise<void>) | undefined;
afterEach(async () => {
  await t?.close();
  await closeProxy?.();
  t = undefined;
  closeProxy = undefined;
});

/** A page as the visitor got it, after following its redirects. */
interface Page {
  url: URL;
  status: number;
  body: string;
}

interface Form {
  method: 'get' | 'post';
  action: URL;
  /** The form's hidden fields, as the page wrote them. */
  hidden: [string, string][];
  markup: string;
}

/**
 * A browser, as far as these pages need one: it follows 303s, keeps cookies by name and Path and sends
 * each only under its Path (RFC 6265 5.1.4), posts forms with its page's Origin, and reads every
 * address a page names, each of which must lie under `origin` + `prefix`.
 */
class Visitor {
  readonly #cookies = new Map<string, { name: string; value: string; path: string }>();
  /** Every href and src any page named (resolved), to be opened in turn. */
  readonly links = new Set<string>();

  readonly origin: string;
  readonly prefix: string;

  constructor(origin: string, prefix: string) {
    this.origin = origin;
    this.prefix = prefix;
  }

  async open(url: string | URL, post?: URLSearchParams): Promise<Page> {
    let target = new URL(url);
    let body = post;
    for (let hop = 0; hop < 10; hop++) {
      this.expectUnderPrefix(target, 'request');
      const response = await fetch(target, {
        method: body ? 'POST' : 'GET',
        redirect: 'manual',
        headers: {
          cookie: this.cookieHeader(target),
          ...(body && { origin: this.origin, 'content-type': 'application/x-www-form-urlencoded' }),
        },
        ...(body && { body: body.toString() }),
      });
      this.keepCookies(response);
      if (response.status >= 300 && response.status < 400) {
        const location = response.headers.get('location');
        expect(location, `redirect from ${target}`).toBeTruthy();
        target = new URL(location!, target);
        body = undefined;
        continue;
      }
      const page = { url: target, status: response.status, body: await response.text() };
      if (response.headers.get('content-type')?.startsWith('text/html')) this.readAddresses(page);
      return page;
    }
    throw new Error(`too many redirects from ${url}`);
  }

  /** Sends the form of `page` that `pick` chooses, with its hidden fields and `fields` (repeatable). */
  submit(page: Page, pick: (form: Form) => boolean, fields: Record<string, string | string[]> = {}) {
    const form = formsOf(page).find(pick);
    expect(form, `no such form on ${page.url}:\n${page.body}`).toBeDefined();
    const params = new URLSearchParams(form!.hidden.filter(([name]) => !(name in fields)));
    for (const [name, value] of Object.entries(fields)) {
      for (const one of [value].flat()) params.append(name, one);
    }
    if (form!.method === 'post') return this.open(form!.action, params);
    const url = new URL(form!.action);
    url.search = params.toString();
    return this.open(url);
  }

  /**
   * Opens every link and script the pages named so far (the addresses on the pages they lead to are
   * read, not opened in turn: a diary's next day has a next day too); none may fail.
   */
  async openLinks(): Promise<void> {
    for (const link of [...this.links]) {
      const page = await this.open(link);
      expect(page.status, `${link}: ${page.body}`).toBeLessThan(500);
      expect(page.status, `${link}: ${page.body}`).not.toBe(404);
    }
  }

  /** Every href, action and src of the page lies under the prefix; hrefs and srcs are kept to open. */
  readAddresses(page: Page): void {
    for (const [, attribute, raw] of page.body.matchAll(/\s(href|action|src)="([^"]*)"/g)) {
      const url = new URL(unescapeHtml(raw!), page.url);
      if (url.protocol === 'tel:' || url.protocol === 'mailto:') continue;
      this.expectUnderPrefix(url, `${attribute} on ${page.url}`);
      url.hash = '';
      if (attribute !== 'action') this.links.add(url.href);
    }
  }

  expectUnderPrefix(url: URL, what: string): void {
    expect(`${url.origin}${url.pathname}`, what).toMatch(
      new RegExp(`^${escapeRegExp(this.origin)}${escapeRegExp(this.prefix)}/`),
    );
  }

  cookie(name: string): { value: string; path: string } | undefined {
    return [...this.#cookies.values()].find((c) => c.name === name);
  }

  cookieHeader(url: URL): string {
    return [...this.#cookies.values()]
      .filter(({ path }) => pathMatches(url.pathname, path))
      .map(({ name, value }) => `${name}=${value}`)
      .join('; ');
  }

  keepCookies(response: Response): void {
    for (const header of response.headers.getSetCookie()) {
      const [pair, ...attributes] = header.split(';').map((part) => part.trim());
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const path = attributes.find((a) => /^path=/i.test(a))?.slice(5) ?? '/';
      const key = `${name};${path}`;
      if (attributes.some((a) => /^max-age=0$/i.test(a))) this.#cookies.delete(key);
      else this.#cookies.set(key, { name, value: pair!.slice(eq + 1), path });
    }
  }
}

/** RFC 6265 5.1.4: whether a cookie of Path `cookiePath` is sent with a request for `path`. */
function pathMatches(path: string, cookiePath: string): boolean {
  return (
    path === cookiePath ||
    (path.startsWith(cookiePath) && (cookiePath.endsWith('/') || path[cookiePath.length] === '/'))
  );
}

function formsOf(page: Page): Form[] {
  return [...page.body.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)].map(([, attributes, markup]) => {
    const action = /\saction="([^"]*)"/.exec(attributes!)?.[1];
    return {
      method: /\smethod="post"/i.test(attributes!) ? 'post' : 'get',
      action: new URL(action === undefined ? page.url.href : unescapeHtml(action), page.url),
      hidden: [...markup!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map(
        ([, name, value]) => [unescapeHtml(name!), unescapeHtml(value!)] as [string, string],
      ),
      markup: markup!,
    };
  });
}

const ENTITIES: Record<string, string> = {
  '&amp;': '&',
  '&quot;': '"',
  '&#39;': "'",
  '&lt;': '<',
  '&gt;': '>',
};
function unescapeHtml(value: string): string {
  return value.replace(/&(amp|quot|#39|lt|gt);/g, (entity) => ENTITIES[entity]!);
}

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const has = (text: string) => (form: Form) => form.markup.includes(text);

/**
 * The console's script run against a diary page as a browser would run it: the addresses it asks for
 * (the stamp poll) and goes to (the sign-in page, told the session ended), as it makes them.
 */
async function consoleScriptAddresses(script: string, diary: Page, location: string) {
  const fetched: string[] = [];
  const assigned: string[] = [];
  let poll: (() => void) | undefined;
  const element = { getAttribute: (name: string) => (name === 'data-location' ? location : 'stamp') };
  runInNewContext(script, {
    document: { readyState: 'complete', getElementById: () => element },
    location: {
      href: diary.url.href,
      pathname: diary.url.pathname,
      search: diary.url.search,
      assign: (url: string) => assigned.push(url),
    },
    // The session ended: the script sends the person to sign in again.
    fetch: async (url: string) => {
      fetched.push(url);
      return { status: 401, json: async () => ({}) };
    },
    setTimeout: (callback: () => void) => {
      poll ??= callback;
    },
  });
  expect(poll).toBeDefined();
  poll!();
  await new Promise((resolve) => setTimeout(resolve, 20));
  return { fetched, assigned };
}

describe('under a path prefix: PUBLIC_BASE_URL with a path, behind a proxy that strips it', () => {
  it('books, proves, pays, cancels and claims a waitlist offer on the hosted pages, and runs the console, all through the prefix', async () => {
    const proxy = await startPrefixProxy(PREFIX);
    closeProxy = proxy.close;
    const base = `${proxy.origin}${PREFIX}`;
    t = await startTestApp({
      catalogues: [demoCatalogue()],
      now: NOW,
      limits: { requestsPerMinute: 100_000 },
      http: { publicBaseUrl: base },
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    proxy.target = (t.app.server.address() as { port: number }).port;
    const visitor = new Visitor(proxy.origin, PREFIX);

    // The public page: a location, a service and a day, a time and the details, each by the page's own form.
    let page = await visitor.open(`${base}/p/${ORG}`);
    expect(page.status, page.body).toBe(200);
    page = await visitor.submit(page, has('name="location"'), { location: 'camden' });
    const colour = /name="services" value="([^"]+)"[^>]*>Full colour/.exec(page.body)?.[1];
    expect(colour, page.body).toBeDefined();
    page = await visitor.submit(page, has('name="date"'), { services: colour!, staff: '', date: WEDNESDAY });
    page = await visitor.submit(page, has('name="first_name"'), {
      starts_at: WEDNESDAY_2PM,
      first_name: 'Rosa',
      last_name: 'Parks',
      phone: '07400 100002',
      email: '',
    });
    // The booking's page, reached from the booking form's redirect: the code proves the phone.
    expect(page.url.pathname).toMatch(/^\/booking\/p\/manage\/[A-Za-z0-9_-]{43}$/);
    const managePage = page.url.href;
    const reference = /NHC-[0-9A-Z]{6}/.exec(page.body)?.[0];
    expect(reference, page.body).toBeDefined();
    const { code } = await deliveredCode(t, reference!);
    page = await visitor.submit(page, has('name="code"'), { code });
    expect(page.url.href).toBe(managePage);
    // The deposit, at the local checkout, which sends the customer back to the booking's page.
    page = await visitor.submit(page, (form) => form.action.pathname.endsWith('/pay'));
    expect(page.url.pathname).toMatch(/^\/booking\/checkout\/[^/]+$/);
    expect(page.body).toContain('Pay your deposit');
    page = await visitor.submit(page, (form) => form.action.pathname.endsWith('/pay'));
    expect(page.url.href).toBe(managePage);
    expect(page.body).toContain('Booking confirmed');

    // Someone waits for a colour that Wednesday afternoon; the customer cancels from the page's link.
    const joined = await t.request({
      method: 'POST',
      url: '/v1/waitlist',
      payload: {
        location_slug: 'camden',
        service_ids: [colour],
        client: { first_name: 'Dee', last_name: 'Posit', email: 'dee@example.com' },
        from_date: WEDNESDAY,
        to_date: WEDNESDAY,
        times: ['afternoon'],
      },
    });
    expect(joined.statusCode, joined.body).toBe(201);
    const cancelLink = /href="([^"]*\/cancel)"/.exec(page.body)?.[1];
    expect(cancelLink, page.body).toBeDefined();
    page = await visitor.open(new URL(unescapeHtml(cancelLink!), page.url));
    page = await visitor.submit(page, (form) => form.action.pathname.endsWith('/cancel'));
    expect(page.url.href).toBe(managePage);
    expect(page.body).toMatch(/cancelled/i);

    // The freed time is offered; the offer's page (its message's link) claims it.
    const offered = await offerFreedTimes({
      db: t.database.db,
      clock: t.clock,
      payments: t.deps.payments,
      publicBaseUrl: base,
    });
    expect(offered).toBe(1);
    const entry = (await t.request({ method: 'GET', url: `/v1/waitlist/${joined.json().data.id}` })).json()
      .data as { offer: { booking_reference: string } };
    page = await visitor.open(`${base}${await bookingPagePathOf(t, entry.offer.booking_reference)}`);
    expect(page.status, page.body).toBe(200);
    page = await visitor.submit(page, (form) => form.action.pathname.endsWith('/claim'));
    expect(page.url.pathname).toMatch(/^\/booking\/p\/manage\/[A-Za-z0-9_-]{43}$/);
    expect(page.body).toContain(entry.offer.booking_reference);

    // A day with no free time: the waitlist form, and the page that confirms joining.
    page = await visitor.open(`${base}/p/${ORG}`);
    page = await visitor.submit(page, has('name="location"'), { location: 'camden' });
    page = await visitor.submit(page, has('name="date"'), { services: colour!, staff: '', date: SUNDAY });
    page = await visitor.submit(page, has('name="from_date"'), {
      from_date: SUNDAY,
      to_date: SUNDAY,
      first_name: 'Rosa',
      last_name: 'Parks',
      phone: '',
      email: 'rosa@example.com',
    });
    expect(page.body).toContain('You are on the waitlist');

    // The console: from its root to the sign-in page, signed in, the diary of that Wednesday.
    await createUser(
      t.database.db,
      { organisationSlug: ORG, email: OWNER.email, role: 'owner', password: OWNER.password },
      t.clock.nowMs(),
    );
    page = await visitor.open(`${base}/console`);
    expect(page.url.pathname).toBe('/booking/console/sign-in');
    page = await visitor.submit(page, has('name="password"'), {
      organisation: ORG,
      email: OWNER.email,
      password: OWNER.password,
    });
    expect(page.url.pathname).toBe('/booking/console/diary');
    expect(visitor.cookie('console_session')?.path).toBe('/booking/console');
    page = await visitor.submit(page, has('name="view"'), {
      location: 'camden',
      date: WEDNESDAY,
      view: 'day',
    });
    expect(page.status, page.body).toBe(200);
    const diary = page;
    const booked = /href="([^"]*\/console\/bookings\/NHC-[0-9A-Z]{6})"/.exec(diary.body)?.[1];
    expect(booked, diary.body).toBeDefined();
    expect((await visitor.open(new URL(unescapeHtml(booked!), diary.url))).body).toContain('NHC-');

    // Its script's addresses: the stamp poll, and the sign-in page once the session has ended, which
    // comes back to this diary.
    const scriptSrc = /<script src="([^"]+)"/.exec(diary.body)?.[1];
    const script = await visitor.open(new URL(unescapeHtml(scriptSrc!), diary.url));
    expect(script.status).toBe(200);
    const { fetched, assigned } = await consoleScriptAddresses(script.body, diary, 'camden');
    expect(fetched).toHaveLength(1);
    expect(assigned).toHaveLength(1);
    const stamp = await visitor.open(new URL(fetched[0]!, diary.url));
    expect(JSON.parse(stamp.body)).toHaveProperty('stamp');
    const signIn = await visitor.open(new URL(assigned[0]!, diary.url));
    expect(signIn.body).toContain('Your session has ended');
    const next = /name="next" value="([^"]*)"/.exec(signIn.body)?.[1];
    expect(unescapeHtml(next!)).toBe(`/console/diary${diary.url.search}`);

    // Every link and script any page named leads somewhere through the proxy.
    await visitor.openLinks();

    // Signing out clears the cookie where it was set: the diary asks for a sign-in again.
    page = await visitor.open(diary.url);
    page = await visitor.submit(page, (form) => form.action.pathname.endsWith('/sign-out'));
    expect(page.url.pathname).toBe('/booking/console/sign-in');
    expect(visitor.cookie('console_session')).toBeUndefined();

    expect(proxy.unrouted).toEqual([]);
    expect(proxy.cookiePaths.length).toBeGreaterThan(0);
    for (const path of proxy.cookiePaths) expect(path).toMatch(/^\/booking(\/|$)/);
  }, 60_000);
});
