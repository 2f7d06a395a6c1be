/**
 * fetch as a web page at `origin` makes it (the Fetch standard's CORS protocol, credentials omitted as
 * the MCP SDK's browser clients send them): a request that is not "simple" is preceded by a preflight
 * (OPTIONS with Access-Control-Request-Method and -Headers) that must grant its method and headers; the
 * answer is readable only when its Access-Control-Allow-Origin names the page (or is `*`), and shows
 * only the safelisted headers and those in Access-Control-Expose-Headers. What a browser would refuse
 * throws the TypeError a browser throws, so a client run through it meets what it meets in a browser.
 */
export interface BrowserFetch {
  fetch: typeof fetch;
  /** "METHOD path" of every preflight sent, in order. */
  preflights: string[];
}

const SIMPLE_METHODS = new Set(['GET', 'HEAD', 'POST']);
const SIMPLE_CONTENT_TYPES = new Set([
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'text/plain',
]);
const SAFELISTED_RESPONSE_HEADERS = [
  'cache-control',
  'content-language',
  'content-length',
  'content-type',
  'expires',
  'last-modified',
  'pragma',
];

export function browserFetch(origin: string): BrowserFetch {
  const preflights: string[] = [];
  const run = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    const method = request.method.toUpperCase();
    const headers = new Headers(request.headers);
    const unsafe = [...headers.keys()].filter((name) => !isSafelistedRequestHeader(name, headers.get(name)!));
    if (url.origin !== origin && (!SIMPLE_METHODS.has(method) || unsafe.length > 0)) {
      preflights.push(`${method} ${url.pathname}`);
      const preflight = await fetch(url, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': method,
          ...(unsafe.length > 0 && { 'access-control-request-headers': unsafe.sort().join(',') }),
        },
      });
      await preflight.body?.cancel();
      const grants = (name: string) =>
        (preflight.headers.get(name) ?? '')
          .split(',')
          .map((value) => value.trim().toLowerCase())
          .filter(Boolean);
      const methods = grants('access-control-allow-methods');
      const allowed = grants('access-control-allow-headers');
      if (
        !preflight.ok ||
        !allowsOrigin(preflight, origin) ||
        (!SIMPLE_METHODS.has(method) && !methods.includes(method.toLowerCase()) && !methods.includes('*')) ||
        unsafe.some((name) => !allowed.includes(name) && !(allowed.includes('*') && name !== 'authorization'))
      ) {
        throw new TypeError(`Failed to fetch: the preflight of ${method} ${url.pathname} granted nothing`);
      }
    }
    if (url.origin !== origin) headers.set('origin', origin);
    const response = await fetch(url, {
      method,
      headers,
      body: method === 'GET' || method === 'HEAD' ? undefined : await request.arrayBuffer(),
      redirect: request.redirect,
      signal: request.signal,
    });
    if (url.origin === origin) return response;
    if (!allowsOrigin(response, origin)) {
      await response.body?.cancel();
      throw new TypeError(`Failed to fetch: ${method} ${url.pathname} is not readable from ${origin}`);
    }
    const exposed = (response.headers.get('access-control-expose-headers') ?? '')
      .split(',')
      .map((name) => name.trim().toLowerCase());
    const visible = new Headers();
    response.headers.forEach((value, name) => {
      if (SAFELISTED_RESPONSE_HEADERS.includes(name) || exposed.includes(name)) visible.set(name, value);
    });
    const body = response.status === 204 || method === 'HEAD' ? null : await response.arrayBuffer();
    return new Response(body, { status: response.status, statusText: response.statusText, headers: visible });
  };
  return { fetch: run as typeof fetch, preflights };
}

/** The answer names the page's origin, or any: `*` is enough, since no credentials are sent. */
function allowsOrigin(response: Response, origin: string): boolean {
  const allowed = response.headers.get('access-control-allow-origin');
  return allowed === '*' || allowed === origin;
}

function isSafelistedRequestHeader(name: string, value: string): boolean {
  if (name === 'accept' || name === 'accept-language' || name === 'content-language') return true;
  if (name === 'content-type') return SIMPLE_CONTENT_TYPES.has(value.split(';')[0]!.trim().toLowerCase());
  return false;
}
