import type { FastifyReply } from 'fastify';
import { withRepeatedLabel } from '../../domain/repeated-wall-times.ts';
import { formatUtc, localDateAt } from '../../domain/time-format.ts';
import { esc, securePage as secureShellPage } from '../pages/page-shell.ts';

/**
 * The console's page shell: one stylesheet inline, one script served by the project
 * (/console/assets/console.js), nothing from elsewhere. Every interpolated value goes through esc().
 */
export interface Shell {
  title: string;
  /** The signed-in person, for the header and the sign-out form; absent on the sign-in page. */
  session?: { email: string; role: string; organisationName: string; csrfToken: string };
  /** Which item of the navigation is current. */
  current?:
    | 'diary'
    | 'book'
    | 'waitlist'
    | 'clients'
    | 'messages'
    | 'outbox'
    | 'keys'
    | 'webhooks'
    | 'connectors'
    | 'calendars';
  /** Owners and admins: the API keys and webhooks pages are theirs (canManageKeys). */
  canManageKeys?: boolean;
  /**
   * Without the console's script: a page outside the console (the OAuth consent page), which has no
   * diary to update and whose policy allows no script.
   */
  noScript?: true;
}

/**
 * The tab's icon, served by the console (its CSP allows images from this origin): without one the
 * browser asks for /favicon.ico, which is nobody's, and logs the 404 as an error on every console page.
 * A page without the console's script (the OAuth consent page) has a policy that allows no image, and
 * names none.
 */
export const ICON_PATH = '/console/assets/icon.svg';

/** The icon: a diary page, in the header's colours. */
export const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect x="1" y="2" width="14" height="13" rx="2" fill="#123"/><rect x="3" y="6" width="10" height="7" fill="#fff"/><rect x="4" y="1" width="2" height="3" fill="#123"/><rect x="10" y="1" width="2" height="3" fill="#123"/></svg>';

export function page(shell: Shell, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${esc(shell.title)} – Console</title>
<style>${STYLE}</style>
${shell.noScript ? '' : `<link rel="icon" href="${ICON_PATH}">\n<script src="/console/assets/console.js" defer></script>\n`}</head>
<body>
${shell.session ? header(shell) : ''}<main id="main">
${body}
</main>
</body>
</html>
`;
}

function header(shell: Shell): string {
  const s = shell.session!;
  const item = (key: NonNullable<Shell['current']>, href: string, label: string) =>
    `<li><a href="${href}"${shell.current === key ? ' aria-current="page"' : ''}>${label}</a></li>`;
  return `<header>
<nav aria-label="Console">
<ul>
${item('diary', '/console/diary', 'Diary')}
${item('book', '/console/book', 'Book')}
${item('waitlist', '/console/waitlist', 'Waitlist')}
${item('clients', '/console/clients', 'Clients')}
${item('messages', '/console/messages', 'Messages')}
${item('outbox', '/console/outbox', 'Outbox')}
${shell.canManageKeys ? item('keys', '/console/keys', 'API keys') : ''}
${shell.canManageKeys ? item('webhooks', '/console/webhooks', 'Webhooks') : ''}
${shell.canManageKeys ? item('connectors', '/console/connectors', 'Connectors') : ''}
${shell.canManageKeys ? item('calendars', '/console/calendars', 'Calendars') : ''}
</ul>
</nav>
<div class="who"><span>${esc(s.email)} (${esc(s.role)}) · ${esc(s.organisationName)}</span>
<form method="post" action="/console/sign-out">${csrfField(s.csrfToken)}<button type="submit" class="link">Sign out</button></form></div>
</header>
`;
}

export function csrfField(token: string): string {
  return `<input type="hidden" name="_csrf" value="${esc(token)}">`;
}

/** A one-button form posting to `action` with the session's CSRF token. */
export function actionForm(
  action: string,
  token: string,
  label: string,
  fields: Record<string, string> = {},
  cls = 'secondary',
): string {
  const hidden = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${esc(name)}" value="${esc(value)}">`)
    .join('');
  return `<form method="post" action="${esc(action)}" class="inline">${csrfField(token)}${hidden}<button type="submit" class="${cls}">${esc(label)}</button></form>`;
}

/**
 * Headers of every console page (page-shell.ts securePage's, as every page's): never cached (personal
 * data), never framed, its own script and connections to this origin only, forms posting here only,
 * no referrer to other sites.
 */
export function securePage(reply: FastifyReply): FastifyReply {
  return secureShellPage(reply, { ownScript: true });
}

export interface Formats {
  /** The organisation's locale (BCP 47), for any other date the page writes. */
  locale: string;
  money(minor: number, currency: string): string;
  /** The local time; a wall time the clocks show twice that day carries its zone (withRepeatedLabel). */
  time(epochMs: number): string;
  dateTime(epochMs: number): string;
  /** The local date, YYYY-MM-DD. */
  isoDate(epochMs: number): string;
  /** A `<time>` element, escaped. */
  when(epochMs: number): string;
  /** A local date (YYYY-MM-DD) as a `<time>` element in the locale ("24 Nov 2026"), escaped. */
  day(isoDate: string): string;
}

/** Money in the organisation's locale, times in the location's zone. */
export function formats(locale: string, zone: string): Formats {
  const time = new Intl.DateTimeFormat(locale, { timeStyle: 'short', timeZone: zone });
  const dateTime = new Intl.DateTimeFormat(locale, {
    dateStyle: 'medium',
    timeStyle: 'short',
    timeZone: zone,
  });
  // A date alone names no instant: read at noon UTC, its day is the same in every zone's writing.
  const date = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: 'UTC' });
  return {
    locale,
    money: (minor, currency) => {
      const f = new Intl.NumberFormat(locale, { style: 'currency', currency });
      return f.format(minor / 10 ** (f.resolvedOptions().maximumFractionDigits ?? 2));
    },
    time: (ms) => withRepeatedLabel(time.format(ms), ms, zone, locale),
    dateTime: (ms) => withRepeatedLabel(dateTime.format(ms), ms, zone, locale),
    isoDate: (ms) => localDateAt(ms, zone),
    when: (ms) =>
      `<time datetime="${esc(formatUtc(ms))}">${esc(withRepeatedLabel(dateTime.format(ms), ms, zone, locale))}</time>`,
    day: (isoDate) => {
      const at = Date.parse(`${isoDate}T12:00:00Z`);
      return Number.isNaN(at)
        ? esc(isoDate)
        : `<time datetime="${esc(isoDate)}">${esc(date.format(at))}</time>`;
    },
  };
}

export { esc };

export const STATUS_LABELS: Record<string, string> = {
  pending_payment: 'Awaiting deposit',
  pending_confirmation: 'Awaiting confirmation',
  confirmed: 'Confirmed',
  needs_checkout: 'Needs checkout',
  completed: 'Completed',
  cancelled: 'Cancelled',
  no_show: 'No-show',
  expired: 'Expired',
};

const STYLE = [
  '*{box-sizing:border-box}body{font:15px/1.45 system-ui,sans-serif;margin:0;background:#f4f4f4;color:#1a1a1a}',
  'header{display:flex;flex-wrap:wrap;justify-content:space-between;align-items:center;gap:.5rem;padding:.5rem 1rem;background:#123;color:#fff}',
  'header a{color:#fff}header ul{list-style:none;display:flex;flex-wrap:wrap;gap:1rem;margin:0;padding:0}',
  'header a[aria-current]{font-weight:700;text-decoration:underline}',
  '.who{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;font-size:.85rem}',
  'main{padding:1rem;max-width:100%}h1{font-size:1.35rem;margin:.2rem 0 .8rem}',
  'form.inline{display:inline}fieldset{border:1px solid #ccc;margin:0 0 1rem}',
  'label{display:block;margin:.4rem 0 .1rem;font-weight:600}label.check{font-weight:400}',
  'input,select,textarea{font:inherit;padding:.4rem;max-width:100%}',
  'button{font:inherit;padding:.4rem .9rem;border-radius:6px;border:2px solid #0b5394;cursor:pointer;margin:.15rem 0}',
  'button.primary{background:#0b5394;color:#fff}button.secondary{background:#fff;color:#0b5394}',
  'button.danger{background:#fff;color:#8a1c1c;border-color:#8a1c1c}',
  'button.link{border:0;background:none;color:inherit;text-decoration:underline;padding:0}',
  'a{color:#0b5394}header a{color:#fff}',
  ':focus-visible{outline:3px solid #f4b400;outline-offset:2px}',
  '.card{background:#fff;border-radius:8px;padding:1rem;margin-bottom:1rem}',
  'dl{display:grid;grid-template-columns:auto 1fr;gap:.2rem 1rem}dt{font-weight:600}dd{margin:0}',
  'table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.3rem .4rem;border-bottom:1px solid #e3e3e3;vertical-align:top}',
  '.notice{padding:.6rem;border-left:4px solid #b35900;background:#fff4e5}',
  '.ok{padding:.6rem;border-left:4px solid #2e7d32;background:#e8f5e9}',
  '.error{padding:.6rem;border-left:4px solid #8a1c1c;background:#fdecea}',
  '.toolbar{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end;margin-bottom:.8rem}.toolbar label{margin:0}',
  // Positioned, so the visually hidden words of its rows' links (absolute) are placed and clipped in
  // it: else they sit where their cell would be on the page and a phone scrolls the whole page sideways.
  '.scroll{overflow-x:auto;max-width:100%;position:relative}',
  '.diary{display:grid;position:relative;min-width:max-content}',
  '.col{position:relative;border-left:1px solid #ddd;background:#e9e9e9;min-width:9rem}',
  '.col h2{position:sticky;top:0;font-size:.9rem;margin:0;padding:.3rem;background:#fff;border-bottom:1px solid #ccc;height:2rem;z-index:3}',
  '.axis{position:relative;min-width:3.2rem}.axis span{position:absolute;font-size:.75rem;color:#555;right:.3rem}',
  '.hours{position:absolute;left:0;right:0;background:#fff}',
  '.off{position:absolute;left:0;right:0;background:repeating-linear-gradient(45deg,#ddd,#ddd 6px,#f0f0f0 6px,#f0f0f0 12px);font-size:.75rem;padding:.2rem;color:#444}',
  '.block{position:absolute;left:3px;right:3px;border-radius:5px;padding:.15rem .3rem;font-size:.78rem;overflow:hidden;border-left:5px solid;z-index:2;text-decoration:none;color:#1a1a1a}',
  '.s-confirmed{background:#dceefe;border-color:#0b5394}.s-pending_payment,.s-pending_confirmation{background:#fff4d6;border-color:#b35900}',
  '.s-needs_checkout{background:#efe0ff;border-color:#6a1b9a}.s-completed{background:#e0f2e1;border-color:#2e7d32}',
  '.s-no_show{background:#fde0e0;border-color:#8a1c1c}.s-cancelled,.s-expired{background:#eee;border-color:#888;color:#666;text-decoration:line-through}',
  '.now{position:absolute;left:0;right:0;border-top:2px solid #d00;z-index:4}',
  '.skipped{position:absolute;left:0;right:0;overflow:hidden;background:repeating-linear-gradient(-45deg,#c4c4c4,#c4c4c4 3px,#e9e9e9 3px,#e9e9e9 9px);font-size:.7rem;padding:0 .2rem;color:#333;z-index:1}',
  '.closed{padding:1rem;background:#fdecea;border-radius:8px}',
  '.week td{min-width:8rem}.week ul{margin:0;padding-left:1rem}',
  '.legend{display:flex;flex-wrap:wrap;gap:.5rem;font-size:.8rem;margin:.5rem 0}.legend span{padding:0 .4rem;border-left:5px solid}',
  'pre.words{white-space:pre-wrap;max-width:32rem;font:inherit;font-size:.85rem;margin:.3rem 0}',
  '.m-failed td{background:#fdecea}',
  '.key{font-family:monospace;font-size:1rem;word-break:break-all;background:#fff;padding:.5rem;border:2px dashed #0b5394}',
  '.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}',
].join('');
