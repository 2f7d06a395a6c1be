import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/errors.ts';
import { withRepeatedLabel } from '../../domain/repeated-wall-times.ts';
import { withoutDirectionControls } from '../../domain/text-rules.ts';
import { formatUtc } from '../../domain/time-format.ts';
import { zoneClockName, zoneTimeWords, zoneWordsLanguage } from '../../domain/zone-words.ts';
import { ownOrigins, publicPath, publicPathPrefix } from '../public-base-url.ts';

/**
 * What every server-rendered page shares (the local checkout, the booking pages, the console): the
 * document and its style, the security headers, the same-origin rule for form posts, escaping, and
 * money and times in the organisation's locale. Pages load nothing from elsewhere and run no script.
 */

/**
 * A form post must come from one of this server's own pages. Browsers send Origin with every form
 * post (our pages' Referrer-Policy: same-origin keeps it from being "null"); a browser that sends
 * none still sends a Referer. A post with neither is not from our page: refused too, in words that
 * name the page the form belongs to and the way back to it.
 */
export async function refuseCrossSiteForm(request: FastifyRequest): Promise<void> {
  const claimed = originOf(request.headers.origin ?? request.headers.referer);
  if (claimed === undefined || !ownOrigins(request).has(claimed)) {
    throw new AppError('invalid_host', refusalOf(request.routeOptions.url ?? request.url), 'Origin');
  }
}

/** The refusal of a form post from elsewhere, by the route the form posts to (its page's own). */
function refusalOf(route: string): string {
  if (route.startsWith('/checkout/')) {
    return 'This form is accepted only from the checkout page itself. Open the payment link again and use its buttons.';
  }
  if (route.startsWith('/card-setup/')) {
    return 'This form is accepted only from the card page itself. Open the booking page again and use its buttons.';
  }
  return 'This form is accepted only from the booking page itself. Open the booking page again and use its buttons.';
}

/** The serialised origin of a URL or an Origin header (default ports dropped); undefined for none or "null". */
export function originOf(url: string | undefined): string | undefined {
  if (!url || url === 'null') return undefined;
  try {
    const { origin } = new URL(url);
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

/** A 303 to `url`: a path of this server's routes (sent as its public path) or a URL of its own. */
export function redirect(reply: FastifyReply, url: string): FastifyReply {
  // no-referrer: the checkout URL (the capability) must not leak to the shop's pages.
  return reply
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store')
    .redirect(publicPath(reply, url), 303);
}

/**
 * A page's markup as a browser is to read it: every href, action and src naming a path of this server
 * ('/p/acme/book') names its public path instead ('/booking/p/acme/book' under PUBLIC_BASE_URL
 * https://example.com/booking), so the pages write their links and forms as the routes match them and
 * nothing is missed. Only the markup's own attributes are met: every interpolated value goes through
 * esc(), which leaves no '"' of its own, so ` href="` is always the page's.
 */
export function withPublicPaths(from: { server: FastifyInstance }, html: string): string {
  const prefix = publicPathPrefix(from);
  if (prefix === '') return html;
  return html.replace(
    /(\s(?:href|action|src)=")(?=\/(?![/\\]))/g,
    (_m, opening: string) => `${opening}${esc(prefix)}`,
  );
}

/** Sends a page of the shell: its title and body inside the document, with its policy's headers. */
export type SendPage = (
  reply: FastifyReply,
  title: string,
  body: string,
  policy?: PagePolicy,
) => FastifyReply;

/** The SendPage of the customer's pages and the checkout's: the document with `notice`, its paths public. */
export function pageSender(notice: string): SendPage {
  const document = pageDocument(notice);
  return (reply, title, body, policy) =>
    securePage(reply, policy).send(withPublicPaths(reply, document(title, body)));
}

/** What a page's Content-Security-Policy allows beyond what every page does (inline style, forms here). */
export interface PagePolicy {
  /** The console's own script, its fetches and images, from this origin; the customer pages run none. */
  ownScript?: boolean;
  /**
   * Where else the page's forms lead, as URLs or origins (only their origins are named): Chromium
   * holds a form's redirects to form-action too, so a form answered with a redirect to a payment
   * provider's hosted page is blocked unless the page names that page's origin.
   */
  formTargets?: readonly string[];
  /**
   * The page may be kept for Back (private, max-age=0 instead of no-store): a page holding nothing
   * personal whose form must come back as it was, its own key included (the public booking form: Back
   * after booking shows the same form, whose key leads to the booking it made, not a second one).
   */
  keptForBack?: boolean;
}

/**
 * The Content-Security-Policy of every HTML page this server sends (the customer pages, the checkout
 * pages, the console): nothing loaded from elsewhere, no framing, no base URL, and form posts to this
 * origin plus the page's own formTargets.
 */
export function contentSecurityPolicy(policy: PagePolicy = {}): string {
  const targets = new Set<string>();
  for (const target of policy.formTargets ?? []) {
    const origin = originOf(target);
    // A host may contain characters a policy gives meaning to (";", ","): only plain origins are named.
    if (origin !== undefined && PLAIN_ORIGIN.test(origin)) targets.add(origin);
    const scheme = appSchemeOf(target);
    if (scheme !== undefined) targets.add(scheme);
  }
  return [
    "default-src 'none'",
    ...(policy.ownScript ? ["script-src 'self'", "connect-src 'self'"] : []),
    "style-src 'unsafe-inline'",
    ...(policy.ownScript ? ["img-src 'self'"] : []),
    `form-action ${["'self'", ...targets].join(' ')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

const PLAIN_ORIGIN = /^https?:\/\/[A-Za-z0-9.-]+(:\d+)?$|^https?:\/\/\[[0-9A-Fa-f:.]+\](:\d+)?$/;

/**
 * The scheme-source (`cursor:`) of a target of an app's own URI scheme (RFC 8252 section 7.1: a desktop
 * MCP host's OAuth redirect URI, `cursor://anysphere.cursor-mcp/oauth/callback`), or undefined. Such a
 * URL has no origin, and Chromium holds the consent form's redirect to it to form-action: without it,
 * Allow left the person on the consent page and the app never got its code. Never a scheme that runs
 * or holds content of its own.
 */
function appSchemeOf(target: string): string | undefined {
  let scheme: string;
  try {
    scheme = new URL(target).protocol.toLowerCase();
  } catch {
    return undefined;
  }
  if (!/^[a-z][a-z0-9+.-]*:$/.test(scheme) || NOT_APP_SCHEMES.has(scheme)) return undefined;
  return scheme;
}

const NOT_APP_SCHEMES: ReadonlySet<string> = new Set([
  'http:',
  'https:',
  'javascript:',
  'data:',
  'blob:',
  'filesystem:',
  'file:',
  'about:',
  'vbscript:',
  'ws:',
  'wss:',
]);

/**
 * Headers of every HTML page. Referrer-Policy same-origin: the page's URL (the capability) never leaves
 * for another site, yet its own forms post with a real Origin (no-referrer would make it "null").
 * No framing twice over: CSP frame-ancestors, and X-Frame-Options for browsers that predate it.
 */
export function securePage(reply: FastifyReply, policy: PagePolicy = {}): FastifyReply {
  return reply.headers(pageHeaders(policy));
}

/** The headers securePage sets, for a page sent by something other than Fastify (oidc-provider's). */
export function pageHeaders(policy: PagePolicy = {}): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': policy.keptForBack ? 'private, max-age=0' : 'no-store',
    'referrer-policy': 'same-origin',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'content-security-policy': contentSecurityPolicy(policy),
  };
}

// ---------------------------------------------------------------------------------------------------
// Pages. Every interpolated value goes through esc(); nothing is loaded from elsewhere.

/** Said on every page of a provider that takes no money. */
export const TEST_MODE_NOTICE = `<p class="test-mode" role="note"><strong>Test mode:</strong> this checkout takes no money. Paying here only marks the deposit as paid, and saving a card here saves none; no card is asked for or charged.</p>
`;

/** The notice a page carries: the test-mode warning when the payment provider takes no money. */
export function noticeFor(provider: { takesMoney: boolean } | null): string {
  return provider && !provider.takesMoney ? TEST_MODE_NOTICE : '';
}

/** The pages' words are English; only money and times follow the organisation's locale. */
export function pageDocument(notice: string) {
  return (title: string, body: string): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${esc(title)}</title>
<style>${styleFor(notice + body)}</style>
</head>
<body>
<main>
${notice}${body}
</main>
</body>
</html>
`;
}

/** The rules every page needs. */
const STYLE = [
  'body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f6f6;color:#1a1a1a}',
  // A long e-mail address or name breaks anywhere rather than widen the page past a phone's width.
  'main{max-width:32rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:8px;overflow-wrap:anywhere}',
  'h1{font-size:1.5rem;margin-top:0}',
  'dl{display:grid;grid-template-columns:auto minmax(0,1fr);gap:.25rem 1rem}dt{font-weight:600}dd{margin:0}',
  '.notice{padding:.75rem;border-left:4px solid #b35900;background:#fff4e5}',
  '.actions{display:flex;gap:1rem;flex-wrap:wrap;margin-top:1.5rem}',
  'button{font:inherit;padding:.6rem 1.2rem;border-radius:6px;border:2px solid #0b5394;cursor:pointer}',
  'button.primary{background:#0b5394;color:#fff}button.secondary{background:#fff;color:#0b5394}',
  ':focus-visible{outline:3px solid #f4b400;outline-offset:2px}',
  'a{color:#0b5394}',
  'label{display:block;font-weight:600;margin-top:1rem}',
  'input,select{font:inherit;width:100%;box-sizing:border-box;padding:.5rem;border:1px solid #555;border-radius:6px}',
  'input[type=radio],input[type=checkbox]{width:auto;margin-right:.5rem}',
  'fieldset{border:1px solid #ccc;border-radius:6px;margin:1rem 0;padding:.5rem 1rem}legend{font-weight:600}',
  '.choice{display:flex;align-items:center;font-weight:400;margin:.5rem 0}',
  '.fee{padding:.75rem;border-left:4px solid #8a1c1c;background:#fdecea}',
  '@media (max-width:30rem){main{margin:0;padding:1rem;border-radius:0}}',
].join('');

/**
 * Rules only some pages use, each sent with a page whose markup has its marker: a busy day's times
 * keep the booking page near 10 KB, so a page does not carry the checkout's table rules, nor the
 * time picker's the checkout.
 */
const STYLE_PARTS: readonly { marker: string; css: string }[] = [
  {
    marker: '<table',
    css: 'table{width:100%;border-collapse:collapse}th,td{text-align:left;padding:.25rem 0}td.amount,th.amount{text-align:right}tfoot th,tfoot td{border-top:1px solid #ccc}',
  },
  {
    marker: 'class="test-mode"',
    css: '.test-mode{padding:.75rem;border:2px dashed #8a1c1c;background:#fdecea;color:#5c0f0f}',
  },
  {
    marker: 'visually-hidden',
    css: '.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}',
  },
  {
    // The time picker (time-picker.ts): a week's days in a row, the times as a grid.
    marker: 'class="strip"',
    css: [
      '.days{list-style:none;padding:0;margin:1rem 0 .5rem;display:grid;grid-template-columns:repeat(7,1fr);gap:.25rem}',
      '.strip button{background:#fff;color:#0b5394;padding:.4rem .6rem;font-size:.85rem;line-height:1.3}',
      '.days button{width:100%;padding:.4rem 0;border-width:1px}.days small{display:block;font-size:.75rem}',
      // The chosen day's colours come last: a chosen day with no times stays white on blue, not grey on blue.
      '.days .none{border-color:#767676;color:#555}.days [aria-current]{background:#0b5394;color:#fff}',
      '.pager{display:flex;flex-wrap:wrap;gap:.5rem;margin:0}',
    ].join(''),
  },
  {
    marker: 'class="times"',
    css: '.times{display:grid;grid-template-columns:repeat(auto-fill,minmax(5.5rem,1fr));gap:.5rem}.times label{margin:0;font-weight:400;padding:.4rem;border:1px solid #ccc;border-radius:6px}',
  },
];

/** The style of a page: the common rules and those its markup uses. */
function styleFor(markup: string): string {
  return (
    STYLE +
    STYLE_PARTS.filter((part) => markup.includes(part.marker))
      .map((part) => part.css)
      .join('')
  );
}

/**
 * A form sent back refused because of one of its fields (the error's param): the words are said, as
 * an alert, right above that field instead of at the top of the page; the field is marked invalid,
 * described by them, and has the focus when the page opens (autofocus: the pages run no script), so
 * the keyboard, a screen reader and a phone's screen all land on what to put right.
 */
export interface FieldRefusal {
  /** The refused field's name (the error's param). */
  field: string;
  words: string;
}

/**
 * The refusal's words above the field `field` (whose element id is `id`), or '' for another field;
 * `style`, the class its page shows a refusal in (the console's is "error").
 */
export function refusalBeside(
  refusal: FieldRefusal | undefined,
  field: string,
  id: string,
  style = 'fee',
): string {
  if (refusal?.field !== field) return '';
  return `<p id="${esc(id)}-error" role="alert" class="${esc(style)}">${esc(refusal.words)}</p>\n`;
}

/** The attributes of the field `field` (element id `id`): invalid, described and focused when refused. */
export function refusedState(refusal: FieldRefusal | undefined, field: string, id: string): string {
  if (refusal?.field !== field) return '';
  return ` aria-invalid="true" aria-describedby="${esc(id)}-error" autofocus`;
}

export interface Formatter {
  money(minor: number): string;
  /**
   * A `<time>` element, already escaped, saying the clock it is on ("… at 10:00 London time", "… à
   * 10:00 (heure : Royaume-Uni)"; clockAfterTime).
   */
  time(epochMs: number): string;
}

/**
 * Money in the organisation's locale, times in the location's zone, each time with its clock named:
 * the pages run no script, so they cannot tell where the visitor is, and one abroad (or travelling)
 * must not read the salon's 10:00 as their own. A wall time the clocks show twice that day already
 * names its zone (withRepeatedLabel).
 */
export function formatter(place: { locale: string; currency: string; timezone: string }): Formatter {
  const { locale } = place;
  const currency = new Intl.NumberFormat(locale, { style: 'currency', currency: place.currency });
  const digits = currency.resolvedOptions().maximumFractionDigits ?? 2;
  const dates = new Intl.DateTimeFormat(locale, {
    dateStyle: 'full',
    timeStyle: 'short',
    timeZone: place.timezone,
  });
  return {
    money: (minor) => currency.format(minor / 10 ** digits),
    time: (epochMs) => {
      const wall = dates.format(epochMs);
      const labelled = withRepeatedLabel(wall, epochMs, place.timezone, locale);
      const said =
        labelled === wall ? `${wall} ${clockAfterTime(epochMs, place.timezone, locale)}` : labelled;
      return `<time datetime="${esc(formatUtc(epochMs))}">${esc(said)}</time>`;
    },
  };
}

/**
 * The clock a time on a page is on, named after it in the language the time is written in (the
 * organisation's locale): "London time" after an English time; after any other, as the messages name
 * it (zoneClockName): the locale's abbreviation where it has one ("um 11:00 MEZ"), else its place in
 * words, in brackets ("(heure : Royaume-Uni)", "(hora de Nueva York)").
 */
export function clockAfterTime(epochMs: number, zone: string, locale: string): string {
  return zoneWordsLanguage(locale) === 'en'
    ? zoneTimeWords(epochMs, zone, locale)
    : zoneClockName(epochMs, zone, locale);
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * Text for HTML, in an element or an attribute: markup escaped, and the explicit direction controls
 * (embeddings, overrides, isolates) left out. One of them unclosed in a value (a catalogue name, a
 * note) would run on past its element and turn the text after it backwards, a phone number included;
 * the browser's own bidirectional rules still lay out Arabic or Hebrew without them.
 */
export function esc(value: string): string {
  return withoutDirectionControls(value).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}
