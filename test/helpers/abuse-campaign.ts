import net from 'node:net';
import fc from 'fast-check';
import { ERROR_CATALOGUE, ERROR_CODES, type ErrorCode } from '../../src/domain/errors.ts';

/**
 * An abuse campaign against a listening server, over real sockets (raw bytes, so nothing a client
 * library refuses to send is out of reach): fast-check generates malformed requests for every endpoint
 * of the server's own OpenAPI document, the health check and the MCP transports, and every answer is
 * held to the contract: never a 5xx, always an X-Request-Id, every refusal a 4xx error envelope, and a
 * 2xx only for a request that was in fact valid, whose data must then read back as sent.
 */

export interface AbuseCampaignOptions {
  /** http://host:port of a listening server. */
  baseUrl: string;
  /** A read_write key whose rate limit covers the whole campaign. */
  key: string;
  /** Generated requests (discovery, read-backs and the health checks come on top). */
  numRuns: number;
  /** fast-check seed; fixed by default so that a failing campaign can be replayed. */
  seed?: number;
  /**
   * The loopback address every request without the valid key comes from. Failed authentications are
   * counted per client address and lock it out for the rest of the minute, so guessing must not come
   * from the address the rest of the campaign (and the health check after it) uses. Linux routes all
   * of 127.0.0.0/8 to the loopback interface.
   */
  guessingAddress?: string;
  /** Requests in flight at once. */
  concurrency?: number;
}

export interface AbuseCampaignFigures {
  seed: number;
  /** Every HTTP exchange of the campaign: discovery, generated requests, read-backs, health checks. */
  requests: number;
  statusCounts: Record<number, number>;
  serverErrors: number;
  /** The first few broken rules, each naming the request; empty when the server held up. */
  envelopeViolations: string[];
  healthyAfter: boolean;
}

export const DEFAULT_ABUSE_SEED = 20_261_123;
const MAIN_ADDRESS = '127.0.0.1';
const VIOLATIONS_KEPT = 20;
const EXCHANGE_TIMEOUT_MS = 15_000;
/** The service's documented body limit (64 KiB). */
const BODY_LIMIT = 64 * 1024;
/** Node's default limit on the request line and headers together. */
const HEADER_LIMIT = 16 * 1024;

// ---------------------------------------------------------------------------------------------------
// Raw HTTP/1.1 over node:net

type Bytes = string | Buffer;

interface RawRequest {
  method: string;
  /** The request-target exactly as sent (a Buffer for bytes that are not ASCII). */
  target: Bytes;
  headers: Array<[string, Bytes]>;
  body?: Buffer;
  /** Complete bytes, sent as they are instead of the fields above (broken framing and the like). */
  raw?: Buffer;
  /** Closes the sending side after the bytes: a request that stops short of what it announced. */
  halfClose?: boolean;
  from: 'main' | 'guessing';
}

interface RawResponse {
  status: number;
  /** Lower-cased names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
}

type ExchangeResult = { response: RawResponse } | { failure: string };

function serialise(request: RawRequest, host: string): Buffer {
  if (request.raw) return request.raw;
  const parts: Buffer[] = [Buffer.from(`${request.method} `), Buffer.from(request.target)];
  parts.push(Buffer.from(' HTTP/1.1\r\n'));
  const names = new Set(request.headers.map(([name]) => name.toLowerCase()));
  // The caller's own Host, when it sends one, is the only one.
  if (!names.has('host')) parts.push(Buffer.from(`Host: ${host}\r\n`));
  // Connection: close makes the end of every answer unambiguous and keeps no idle sockets around.
  if (!names.has('connection')) parts.push(Buffer.from('Connection: close\r\n'));
  for (const [name, value] of request.headers) {
    parts.push(Buffer.from(`${name}: `), Buffer.from(value), Buffer.from('\r\n'));
  }
  const framed = names.has('content-length') || names.has('transfer-encoding');
  if (request.body && !framed) parts.push(Buffer.from(`Content-Length: ${request.body.length}\r\n`));
  parts.push(Buffer.from('\r\n'));
  if (request.body) parts.push(request.body);
  return Buffer.concat(parts);
}

/** Reads one response (skipping 1xx interim ones) from what has arrived so far; null while incomplete. */
function parseResponse(
  data: Buffer,
  isHead: boolean,
  final: boolean,
): RawResponse | { broken: string } | null {
  let offset = 0;
  for (;;) {
    const headEnd = data.indexOf('\r\n\r\n', offset);
    if (headEnd === -1) return final ? { broken: 'the connection closed inside the response head' } : null;
    const lines = data.subarray(offset, headEnd).toString('latin1').split('\r\n');
    const statusMatch = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
    if (!statusMatch)
      return { broken: `not an HTTP response: ${JSON.stringify((lines[0] ?? '').slice(0, 60))}` };
    const status = Number(statusMatch[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    const bodyStart = headEnd + 4;
    if (status >= 100 && status < 200) {
      offset = bodyStart;
      continue;
    }
    const rest = data.subarray(bodyStart);
    if (
      isHead ||
      status === 204 ||
      status === 304 ||
      headers['content-type']?.startsWith('text/event-stream')
    ) {
      return { status, headers, body: Buffer.alloc(0) };
    }
    if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const body = dechunk(rest);
      if (body) return { status, headers, body };
      return final ? { broken: 'the connection closed inside a chunked body' } : null;
    }
    if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      if (rest.length >= length) return { status, headers, body: rest.subarray(0, length) };
      return final ? { broken: 'the connection closed before Content-Length bytes' } : null;
    }
    return final ? { status, headers, body: rest } : null;
  }
}

function dechunk(data: Buffer): Buffer | null {
  const chunks: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', offset);
    if (lineEnd === -1) return null;
    const size = Number.parseInt(data.subarray(offset, lineEnd).toString('latin1'), 16);
    if (Number.isNaN(size)) return null;
    if (size === 0) return Buffer.concat(chunks);
    if (data.length < lineEnd + 2 + size + 2) return null;
    chunks.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    offset = lineEnd + 2 + size + 2;
  }
}

class RawHttpClient {
  readonly #host: string;
  readonly #port: number;
  readonly #addresses: { main: string; guessing: string };

  constructor(baseUrl: string, addresses: { main: string; guessing: string }) {
    const url = new URL(baseUrl);
    if (url.protocol !== 'http:')
      throw new Error('The abuse campaign speaks plain HTTP to a loopback server.');
    this.#host = url.host;
    this.#port = Number(url.port || 80);
    this.#addresses = addresses;
  }

  get host(): string {
    return this.#host;
  }

  exchange(request: RawRequest): Promise<ExchangeResult> {
    const bytes = serialise(request, this.#host);
    const isHead = request.method === 'HEAD';
    return new Promise((resolve) => {
      const socket = net.connect({
        host: new URL(`http://${this.#host}`).hostname,
        port: this.#port,
        localAddress: this.#addresses[request.from],
      });
      let data = Buffer.alloc(0);
      let settled = false;
      const settle = (result: ExchangeResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        socket.destroy();
        resolve(result);
      };
      const finish = (final: boolean, reason: string) => {
        const parsed = parseResponse(data, isHead, final);
        if (parsed === null) return;
        if ('broken' in parsed) {
          settle({ failure: data.length === 0 ? `no response (${reason})` : parsed.broken });
        } else {
          settle({ response: parsed });
        }
      };
      const timer = setTimeout(() => finish(true, 'timed out'), EXCHANGE_TIMEOUT_MS);
      socket.on('data', (chunk: Buffer) => {
        data = Buffer.concat([data, chunk]);
        finish(false, '');
      });
      // A server may answer and close before reading everything (413): the answer is what counts.
      socket.on('error', (error: NodeJS.ErrnoException) => finish(true, error.code ?? error.message));
      socket.on('close', () => finish(true, 'connection closed'));
      socket.on('connect', () => {
        socket.write(bytes);
        if (request.halfClose) socket.end();
      });
    });
  }
}

// ---------------------------------------------------------------------------------------------------
// The rules every answer is held to

interface AbuseCase {
  family: string;
  /** What was sent, short, for a violation report. */
  label: string;
  request: RawRequest;
  /**
   * rejected: the request is invalid, so only a 4xx envelope will do. valid: the request is well
   * formed; the service may still refuse it (an unknown slug, a slot already taken) with a 4xx
   * envelope, or succeed, and then `verify` checks what it did.
   */
  expect: 'rejected' | 'valid';
  /** A valid request that cannot fail (fresh e-mail, existing resources). */
  mustSucceed?: boolean;
  /** The only error codes acceptable, when the reason for refusal is known. */
  errorCodes?: readonly string[];
  verify?: (response: RawResponse, client: CampaignClient) => Promise<string | undefined>;
}

/** The MCP transports speak JSON-RPC: their own protocol errors are JSON-RPC error objects. */
function isMcpTransport(target: Bytes): boolean {
  return /^\/(mcp|sse|messages)(\?|$)/.test(target.toString('latin1'));
}

const PLAIN_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The REST API's answers, and anything refused before a route took it, carry the contract's three
 * rate-limit headers. The MCP transports and the health check are not the REST API; a request to
 * their paths is judged by them only when a route took it (a wrong method on /healthz is not).
 */
function owesRateLimitHeaders(target: Bytes, status: number): boolean {
  const path = target.toString('latin1');
  if (isMcpTransport(target)) return false;
  if (/^\/healthz(\?|$)/.test(path)) return status === 405 || status === 404;
  return true;
}

function judge(abuse: AbuseCase, response: RawResponse): string[] {
  const problems: string[] = [];
  const { status, headers } = response;
  if (status >= 500) problems.push('a server error');
  const requestId = headers['x-request-id'];
  if (!requestId) problems.push('no X-Request-Id');
  const sentId = abuse.request.headers.find(([name]) => name.toLowerCase() === 'x-request-id')?.[1];
  if (requestId && typeof sentId === 'string' && PLAIN_REQUEST_ID.test(sentId) && requestId !== sentId) {
    problems.push(`the caller's plain X-Request-Id ${sentId} was not kept`);
  }
  if (owesRateLimitHeaders(abuse.request.target, status)) {
    for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
      if (!/^\d+$/.test(headers[name] ?? '')) problems.push(`no ${name}`);
    }
  }
  if (status >= 200 && status < 300) {
    if (abuse.expect === 'rejected') problems.push('a success for an invalid request');
    return problems;
  }
  if (status < 400 || status >= 600) problems.push(`status ${status} for a refusal`);
  if (abuse.mustSucceed) problems.push('a refusal of a request that cannot fail');
  if (status === 429 && !headers['retry-after']) problems.push('429 without Retry-After');
  if (abuse.request.method === 'HEAD') return problems;
  const body = parseJson(response.body);
  const envelopeProblem = envelopeProblemOf(body, status, abuse.errorCodes);
  if (envelopeProblem && !(isMcpTransport(abuse.request.target) && isJsonRpcError(body))) {
    problems.push(envelopeProblem);
  }
  if (!/^application\/json/.test(headers['content-type'] ?? '')) {
    problems.push(`content-type ${headers['content-type'] ?? '(none)'} for an error`);
  }
  return problems;
}

function envelopeProblemOf(
  body: unknown,
  status: number,
  allowedCodes: readonly string[] | undefined,
): string | undefined {
  if (!isRecord(body) || Object.keys(body).join() !== 'error' || !isRecord(body.error)) {
    return `not an error envelope: ${describeBody(body)}`;
  }
  const { code, message, param, reason, details, ...rest } = body.error;
  if (typeof code !== 'string' || !(ERROR_CODES as readonly string[]).includes(code)) {
    return `error.code ${JSON.stringify(code)} is not in the catalogue`;
  }
  if (typeof message !== 'string' || message === '') return 'error.message is not a non-empty string';
  if (param !== undefined && typeof param !== 'string') return 'error.param is not a string';
  if (reason !== undefined && typeof reason !== 'string') return 'error.reason is not a string';
  // A conflict's details (earliest_starts_at, date...): an object, and only beside a reason.
  if (details !== undefined && (!isRecord(details) || reason === undefined)) {
    return 'error.details is not an object beside a reason';
  }
  if (Object.keys(rest).length > 0) return `the envelope has extra members ${Object.keys(rest).join(', ')}`;
  if (ERROR_CATALOGUE[code as ErrorCode].status !== status) {
    return `error.code ${code} with status ${status}, where the catalogue says ${ERROR_CATALOGUE[code as ErrorCode].status}`;
  }
  if (allowedCodes && !allowedCodes.includes(code)) {
    return `error.code ${code}, expected one of ${allowedCodes.join(', ')}`;
  }
  return undefined;
}

function isJsonRpcError(body: unknown): boolean {
  return (
    isRecord(body) &&
    body.jsonrpc === '2.0' &&
    isRecord(body.error) &&
    typeof body.error.code === 'number' &&
    typeof body.error.message === 'string'
  );
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describeBody(body: unknown): string {
  return body === undefined ? '(not JSON)' : JSON.stringify(body).slice(0, 120);
}

function short(value: unknown, length = 60): string {
  const text = typeof value === 'string' ? value : String(value);
  return JSON.stringify(text.length > length ? `${text.slice(0, length)}…(${text.length})` : text);
}

// ---------------------------------------------------------------------------------------------------
// Sending and keeping the figures

class CampaignClient {
  readonly figures: AbuseCampaignFigures;
  readonly #http: RawHttpClient;
  readonly #key: string;
  #violations = 0;

  constructor(http: RawHttpClient, key: string, seed: number) {
    this.#http = http;
    this.#key = key;
    this.figures = {
      seed,
      requests: 0,
      statusCounts: {},
      serverErrors: 0,
      envelopeViolations: [],
      healthyAfter: false,
    };
  }

  get host(): string {
    return this.#http.host;
  }

  get bearer(): string {
    return `Bearer ${this.#key}`;
  }

  /** Sends one request, holds its answer to the rules and records both; the answer, if any. */
  async send(abuse: AbuseCase): Promise<RawResponse | undefined> {
    this.figures.requests += 1;
    const result = await this.#http.exchange(abuse.request);
    if ('failure' in result) {
      this.violation(abuse, result.failure);
      return undefined;
    }
    const { response } = result;
    this.figures.statusCounts[response.status] = (this.figures.statusCounts[response.status] ?? 0) + 1;
    if (response.status >= 500) this.figures.serverErrors += 1;
    for (const problem of judge(abuse, response)) this.violation(abuse, `${response.status}: ${problem}`);
    if (response.status >= 200 && response.status < 300 && abuse.verify) {
      const problem = await abuse.verify(response, this);
      if (problem) this.violation(abuse, `${response.status}: ${problem}`);
    }
    return response;
  }

  /** A request with the campaign's key, from the main address, that must succeed (discovery, read-backs). */
  async call(
    method: string,
    target: string,
    body?: unknown,
    extraHeaders: Array<[string, string]> = [],
  ): Promise<RawResponse | undefined> {
    const headers: Array<[string, Bytes]> = [['Authorization', this.bearer], ...extraHeaders];
    if (body !== undefined) headers.push(['Content-Type', 'application/json']);
    return this.send({
      family: 'setup',
      label: `${method} ${target}`,
      request: {
        method,
        target,
        headers,
        ...(body !== undefined && { body: Buffer.from(JSON.stringify(body)) }),
        from: 'main',
      },
      expect: 'valid',
      mustSucceed: true,
    });
  }

  violation(abuse: AbuseCase, problem: string): void {
    this.#violations += 1;
    const kept = this.figures.envelopeViolations;
    const line = `[${abuse.family}] ${abuse.label} -> ${problem}`;
    if (this.#violations <= VIOLATIONS_KEPT) kept.push(line);
    else kept[VIOLATIONS_KEPT] = `... and ${this.#violations - VIOLATIONS_KEPT} more`;
  }
}

function dataOf(response: RawResponse | undefined): unknown {
  if (!response || response.status >= 300) return undefined;
  const body = parseJson(response.body);
  return isRecord(body) ? body.data : undefined;
}

// ---------------------------------------------------------------------------------------------------
// What the server says it serves

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  $ref?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
}

interface QueryParam {
  name: string;
  required: boolean;
  schema: JsonSchema;
}

interface Endpoint {
  method: string;
  /** OpenAPI template, e.g. /v1/locations/{slug}/services. */
  template: string;
  pathParams: string[];
  query: QueryParam[];
  /** The request body schema, with references resolved one level. */
  body?: JsonSchema;
  kind: 'rest' | 'health' | 'openapi' | 'mcp' | 'sse' | 'messages';
}

/** The endpoints the OpenAPI document lists, plus those it leaves out: health, the document, MCP. */
function endpointsOf(document: unknown): Endpoint[] {
  const doc = document as {
    paths: Record<string, Record<string, { parameters?: unknown[]; requestBody?: unknown }>>;
    components?: { schemas?: Record<string, JsonSchema> };
  };
  const resolve = (schema: JsonSchema | undefined): JsonSchema | undefined => {
    const name = schema?.$ref?.replace('#/components/schemas/', '');
    return name ? doc.components?.schemas?.[name] : schema;
  };
  const endpoints: Endpoint[] = [];
  for (const [template, operations] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const parameters = (operation.parameters ?? []) as Array<{
        in: string;
        name: string;
        required?: boolean;
        schema: JsonSchema;
      }>;
      const requestBody = operation.requestBody as
        | { content?: { 'application/json'?: { schema?: JsonSchema } } }
        | undefined;
      const body = resolve(requestBody?.content?.['application/json']?.schema);
      endpoints.push({
        method: method.toUpperCase(),
        template,
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        query: parameters
          .filter((p) => p.in === 'query')
          .map((p) => ({ name: p.name, required: p.required === true, schema: p.schema })),
        ...(body && { body }),
        kind: 'rest',
      });
    }
  }
  const extra = (method: string, template: string, kind: Endpoint['kind']): Endpoint => ({
    method,
    template,
    pathParams: [],
    query: [],
    kind,
  });
  endpoints.push(
    extra('GET', '/healthz', 'health'),
    extra('GET', '/v1/openapi.json', 'openapi'),
    extra('POST', '/mcp', 'mcp'),
    extra('GET', '/sse', 'sse'),
    extra('POST', '/messages', 'messages'),
  );
  return endpoints;
}

/** Methods each path answers, for telling a wrong method from a right one. */
function allowedMethods(endpoints: Endpoint[]): Map<string, Set<string>> {
  const allowed = new Map<string, Set<string>>();
  for (const endpoint of endpoints) {
    const methods = allowed.get(endpoint.template) ?? new Set<string>();
    methods.add(endpoint.method);
    if (endpoint.method === 'GET') methods.add('HEAD');
    allowed.set(endpoint.template, methods);
  }
  return allowed;
}

/** Real data found before the campaign, so that valid-shaped requests reach past validation. */
interface Fixtures {
  slug: string;
  serviceIds: string[];
  staffId: string;
  clientId: string;
  /** A local date with slots, YYYY-MM-DD. */
  date: string;
  /** Free slots (starts_at) other than the one the fixture booking took. */
  freeStarts: string[];
  /** A live booking's reference. */
  reference: string;
  toolNames: string[];
}

const PLACEHOLDER_UUID = '00000000-0000-4000-8000-000000000000';
/** Streamable HTTP wants a client to take both a JSON answer and a stream. */
const MCP_ACCEPT: [string, string] = ['Accept', 'application/json, text/event-stream'];

async function discoverFixtures(client: CampaignClient, uniqueTag: string): Promise<Fixtures> {
  const fixtures: Fixtures = {
    slug: 'no-such-location',
    serviceIds: [PLACEHOLDER_UUID],
    staffId: PLACEHOLDER_UUID,
    clientId: PLACEHOLDER_UUID,
    date: '2026-12-01',
    freeStarts: ['2026-12-01T10:00:00+00:00'],
    reference: 'XX-000000',
    toolNames: [],
  };
  const locations = dataOf(await client.call('GET', '/v1/locations'));
  const location = Array.isArray(locations)
    ? (locations.find(
        (l) => isRecord(l) && isRecord(l.booking_protection_policy) && !l.booking_protection_policy.applies,
      ) ?? locations[0])
    : undefined;
  if (isRecord(location) && typeof location.slug === 'string') fixtures.slug = location.slug;
  const services = dataOf(
    await client.call('GET', `/v1/locations/${encodeURIComponent(fixtures.slug)}/services`),
  );
  const service = Array.isArray(services)
    ? services.find(
        (s) => isRecord(s) && s.online_bookable === true && s.deposit === null && Array.isArray(s.staff),
      )
    : undefined;
  if (isRecord(service) && typeof service.id === 'string') {
    fixtures.serviceIds = [service.id];
    const staff = (service.staff as unknown[]).find(isRecord);
    if (staff && typeof staff.id === 'string') fixtures.staffId = staff.id;
  }
  const registered = dataOf(
    await client.call('POST', '/v1/clients', {
      first_name: 'Abuse',
      last_name: 'Fixture',
      email: `fixture-${uniqueTag}@abuse.example`,
    }),
  );
  if (isRecord(registered) && typeof registered.id === 'string') {
    fixtures.clientId = registered.id;
    // The service's own notion of today (its clock may be a test's), from the record it just made.
    if (typeof registered.created_at === 'string') fixtures.date = registered.created_at.slice(0, 10);
  }
  const availability = dataOf(
    await client.call(
      'GET',
      `/v1/locations/${encodeURIComponent(fixtures.slug)}/availability?service_ids=${fixtures.serviceIds[0]}&date=${fixtures.date}&days=14`,
    ),
  );
  const starts =
    isRecord(availability) && Array.isArray(availability.slots)
      ? availability.slots.flatMap((slot) =>
          isRecord(slot) && typeof slot.starts_at === 'string' ? [slot.starts_at] : [],
        )
      : [];
  if (starts.length > 0) {
    fixtures.date = starts[0]!.slice(0, 10);
    const booked = dataOf(
      await client.call(
        'POST',
        '/v1/bookings',
        {
          location_slug: fixtures.slug,
          service_ids: fixtures.serviceIds,
          client_id: fixtures.clientId,
          starts_at: starts[0],
        },
        [['Idempotency-Key', `fixture-${uniqueTag}`]],
      ),
    );
    if (isRecord(booked) && typeof booked.reference === 'string') fixtures.reference = booked.reference;
    // Spread over the slots, so that a few valid bookings of the campaign succeed and are read back.
    fixtures.freeStarts = starts
      .slice(1)
      .filter((_, index) => index % 7 === 0)
      .slice(0, 12);
    if (fixtures.freeStarts.length === 0) fixtures.freeStarts = [starts[0]!];
  }
  const tools = parseJson(
    (await client.call('POST', '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, [MCP_ACCEPT]))
      ?.body ?? Buffer.alloc(0),
  );
  if (isRecord(tools) && isRecord(tools.result) && Array.isArray(tools.result.tools)) {
    fixtures.toolNames = tools.result.tools.flatMap((tool) =>
      isRecord(tool) && typeof tool.name === 'string' ? [tool.name] : [],
    );
  }
  return fixtures;
}

// ---------------------------------------------------------------------------------------------------
// Hostile values

/** Text that must be stored as data, never interpreted. */
const INJECTIONS = [
  "'; DROP TABLE bookings;--",
  "' OR '1'='1",
  "Robert'); DROP TABLE clients;--",
  '1; SELECT * FROM api_keys',
  '{"$gt":""}',
  '{"$ne":null}',
  '$where',
  '__proto__',
  'constructor',
  'prototype',
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: template syntax sent as data, never evaluated.
  '${7*7}',
  '{{7*7}}',
  '%s%s%n',
  '../../../../etc/passwd',
  '..\\..\\windows\\win.ini',
  'http://169.254.169.254/latest/meta-data/',
  'a\u0000b',
  '\u0000',
  'null',
  'undefined',
  'NaN',
  '1e309',
  '%00',
  '%ZZ',
  '\r\nX-Injected: 1',
  '\u202eevil\u202c',
  'שלום עולם',
  'مرحبا بالعالم',
  '🙂',
  '👩‍👩‍👧‍👦',
  'e\u0301',
  'Ａｄａ',
  'İß',
  '\u200b',
  '\ufeffAda',
  '\u2028',
  ' Ada ',
  '\tAda',
  '',
  ' ',
  '\ud800',
  '\udfff',
  'a\ud83dz',
  'x'.repeat(60),
  'x'.repeat(61),
  '🙂'.repeat(60),
  '🙂'.repeat(61),
] as const;

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit));

const hostileText: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...INJECTIONS), weight: 4 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }), weight: 2 },
  {
    arbitrary: fc.string({
      unit: fc.oneof(loneSurrogate, fc.constantFrom('a', '🙂', '\u202e')),
      maxLength: 6,
    }),
    weight: 1,
  },
  {
    arbitrary: fc
      .tuple(fc.constantFrom(...INJECTIONS), fc.string({ unit: 'binary', maxLength: 10 }))
      .map(([a, b]) => a + b),
    weight: 1,
  },
);

/** Dates and times that are not: calendar, clock and offset all out of range. */
const INVALID_DATES = [
  '2026-02-30',
  '2026-13-01',
  '2026-00-10',
  '2026-02-29',
  '2026-04-31',
  '26-12-01',
  '2026-1-1',
  '2026/12/01',
  '20261201',
  '0000-00-00',
  '+02026-12-01',
  '2026-12-01x',
  '',
];
const INVALID_DATE_TIMES = [
  '2026-02-30T10:00:00+00:00',
  '2026-13-01T10:00:00Z',
  '2026-02-29T10:00:00Z',
  '2026-12-01T25:00:00+00:00',
  '2026-12-01T24:00:01Z',
  '2026-12-01T10:60:00Z',
  '2026-12-01T10:00:61Z',
  '2026-12-01T10:00:00+25:00',
  '2026-12-01T10:00:00+14:60',
  '2026-12-01T10:00:00',
  '2026-12-01 10:00:00+00:00',
  '2026-12-01',
  '10:00',
  '2026-12-01T10:00Z',
  '+002026-12-01T10:00:00Z',
  'tomorrow at ten',
  '1764583200',
];

/** UTF-8 of a string, lone surrogates included (as their three-byte forms, which are not UTF-8). */
function wtf8(value: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < value.length; i++) {
    let point = value.charCodeAt(i);
    const next = value.charCodeAt(i + 1);
    if (point >= 0xd800 && point <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      point = 0x10000 + ((point - 0xd800) << 10) + (next - 0xdc00);
      i++;
    }
    if (point < 0x80) bytes.push(point);
    else if (point < 0x800) bytes.push(0xc0 | (point >> 6), 0x80 | (point & 0x3f));
    else if (point < 0x10000)
      bytes.push(0xe0 | (point >> 12), 0x80 | ((point >> 6) & 0x3f), 0x80 | (point & 0x3f));
    else {
      bytes.push(
        0xf0 | (point >> 18),
        0x80 | ((point >> 12) & 0x3f),
        0x80 | ((point >> 6) & 0x3f),
        0x80 | (point & 0x3f),
      );
    }
  }
  return Buffer.from(bytes);
}

/** Percent-encoding that, unlike encodeURIComponent, also takes lone surrogates. */
function percentEncode(value: string): string {
  let out = '';
  for (const byte of wtf8(value)) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** A path segment as an attacker may write it: encoded, half-encoded, raw bytes, traversal, huge. */
const hostileSegment: fc.Arbitrary<{ text: Bytes; label: string }> = fc.oneof(
  hostileText.map((text) => ({ text: percentEncode(text), label: `encoded ${short(text)}` })),
  fc
    .constantFrom(
      '..',
      '../..',
      '%2e%2e',
      '..%2F..%2Fhealthz',
      '%2F',
      '%',
      '%Z1',
      '%E0%A4%A',
      '%C0%AF',
      '%ED%A0%80',
      '%FF',
      '%00',
      ';',
      'a;b=c',
      '*',
      '~',
      '',
    )
    .map((text) => ({ text, label: `raw ${short(text)}` })),
  fc
    .integer({ min: 201, max: 12_000 })
    .map((length) => ({ text: 'a'.repeat(length), label: `${length} characters` })),
  fc.constantFrom('🙂', 'é', '\u202e', 'שלום', '\u00ff', ' ', '\t', '\u0000', '\u007f').map((text) => ({
    text: Buffer.concat([Buffer.from('x'), wtf8(text)]),
    label: `raw bytes of ${short(text)}`,
  })),
  fc
    .constantFrom([0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0x80], [0xf8, 0x88, 0x80, 0x80, 0x80])
    .map((bytes) => ({
      text: Buffer.from(bytes),
      label: `invalid UTF-8 ${Buffer.from(bytes).toString('hex')}`,
    })),
);

// ---------------------------------------------------------------------------------------------------
// Request generators, one family each

interface Context {
  client: CampaignClient;
  endpoints: Endpoint[];
  allowed: Map<string, Set<string>>;
  fixtures: Fixtures;
}

type Member = [key: string, rawJson: string];

function objectText(members: Member[]): string {
  return `{${members.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(',')}}`;
}

function schemaOf(schema: JsonSchema | undefined): JsonSchema {
  if (!schema) return {};
  const branches = schema.anyOf ?? schema.oneOf;
  return branches ? (branches.find((branch) => branch.type !== 'null') ?? {}) : schema;
}

/** The JSON types a property takes (null included where it may be). */
function typesOf(schema: JsonSchema): Set<string> {
  const types = new Set<string>();
  for (const branch of schema.anyOf ?? schema.oneOf ?? [schema]) {
    const type = branch.type;
    for (const t of Array.isArray(type) ? type : type ? [type] : [])
      types.add(t === 'integer' ? 'number' : t);
  }
  return types;
}

function jsonTypeOf(rawJson: string): string {
  const value: unknown = JSON.parse(rawJson);
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function concretePath(
  endpoint: Endpoint,
  fixtures: Fixtures,
  override?: { name: string; text: Bytes },
): Bytes {
  const fixtureValue = (name: string): string => {
    if (name === 'slug') return fixtures.slug;
    if (name === 'reference') return fixtures.reference;
    if (name === 'client_id') return fixtures.clientId;
    return 'x';
  };
  const parts = endpoint.template.split(/\{(\w+)\}/);
  const out: Buffer[] = parts.map((part, index) => {
    if (index % 2 === 0) return Buffer.from(part);
    if (override && override.name === part) return Buffer.from(override.text);
    return Buffer.from(percentEncode(fixtureValue(part)));
  });
  return Buffer.concat(out);
}

function validQuery(endpoint: Endpoint, fixtures: Fixtures): Array<[string, string]> {
  return endpoint.query
    .filter((param) => param.required)
    .map((param): [string, string] => {
      if (param.name === 'service_ids') return [param.name, fixtures.serviceIds.join(',')];
      if (param.name === 'date') return [param.name, fixtures.date];
      return [param.name, 'x'];
    });
}

function queryText(pairs: Array<[string, string]>): string {
  return pairs.length === 0
    ? ''
    : `?${pairs.map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`).join('&')}`;
}

/** The members a valid body needs: the required ones, and the e-mail a client needs as its only contact. */
function essentialMembers(endpoint: Endpoint): string[] {
  const schema = schemaOf(endpoint.body);
  const required = schema.required ?? [];
  return 'email' in (schema.properties ?? {}) && !required.includes('email')
    ? [...required, 'email']
    : required;
}

/** A valid body for the endpoint: its essential members, with real ids and a fresh e-mail. */
function validMembers(endpoint: Endpoint, fixtures: Fixtures, tag: string, start: string): Member[] {
  const properties = schemaOf(endpoint.body).properties ?? {};
  return essentialMembers(endpoint).map(
    (name): Member => [
      name,
      JSON.stringify(exampleValue(name, schemaOf(properties[name]), fixtures, tag, start)),
    ],
  );
}

function exampleValue(
  name: string,
  schema: JsonSchema,
  fixtures: Fixtures,
  tag: string,
  start: string,
): unknown {
  switch (name) {
    case 'location_slug':
      return fixtures.slug;
    case 'service_ids':
      return fixtures.serviceIds;
    case 'client_id':
      return fixtures.clientId;
    case 'staff_id':
      return fixtures.staffId;
    case 'starts_at':
      return start;
    case 'first_name':
      return 'Ada';
    case 'last_name':
      return 'Lovelace';
    case 'email':
      return `${tag}@abuse.example`;
  }
  if (schema.type === 'array')
    return [exampleValue(`${name}[]`, schemaOf(schema.items), fixtures, tag, start)];
  if (schema.type === 'integer' || schema.type === 'number') return schema.minimum ?? 1;
  if (schema.type === 'boolean') return false;
  if (schema.format === 'uuid') return PLACEHOLDER_UUID;
  if (schema.format === 'date-time') return start;
  return 'x';
}

/** Whether a free-text value is one the field accepts, and what the service then stores. */
function acceptedText(field: string, schema: JsonSchema, value: string): { stored: string } | undefined {
  if (/\p{Cs}/u.test(value)) return undefined;
  // JSON Schema (and zod) count a string's length in code points, not UTF-16 units.
  const points = [...value].length;
  if (points < (schema.minLength ?? 0) || points > (schema.maxLength ?? Number.POSITIVE_INFINITY)) {
    return undefined;
  }
  const trimmed = value.trim();
  const length = [...trimmed].length;
  if (field === 'first_name' || field === 'last_name' || field === 'caller_name') {
    // 1 to 60 characters (a caller's name for a message: 120), of the trimmed name, which holds no
    // control characters (C0 or C1) nor line separators, and something that shows (not zero-width
    // characters alone).
    const most = field === 'caller_name' ? 120 : 60;
    const shows = /[^\s\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]/u;
    if (!shows.test(trimmed) || length > most || /[\p{Cc}\u2028\u2029]/u.test(trimmed)) return undefined;
    return { stored: trimmed };
  }
  if (field === 'message') {
    // A message for staff: trimmed, 1 to 2000 characters, line breaks and tabs but no other control characters.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what a message may not hold.
    if (length < 1 || length > 2000 || /[\u0000-\u0008\u000b-\u001f\u007f]/.test(trimmed)) return undefined;
    return { stored: trimmed };
  }
  return { stored: value };
}

/** Fields whose value is free text kept as given: where injection strings must be plain data. */
const FREE_TEXT_FIELDS = new Set(['first_name', 'last_name', 'notes', 'reason', 'caller_name', 'message']);

interface BodyPlan {
  members: Member[];
  /** Members whose current value (or whose very name) makes the body invalid. */
  invalid: Set<string>;
  labels: string[];
  /** Free-text members the service must store as given. */
  expectedText: Record<string, string>;
}

type Mutation = (plan: BodyPlan) => BodyPlan;

/** The plan with member `name` replaced (or removed, for a null value): later mutations undo earlier ones. */
function withMember(
  plan: BodyPlan,
  name: string,
  change: { rawJson: string | null; ok: boolean; label: string; stored?: string },
): BodyPlan {
  const members = plan.members.filter(([key]) => key !== name);
  if (change.rawJson !== null) members.push([name, change.rawJson]);
  const invalid = new Set(plan.invalid);
  if (change.ok) invalid.delete(name);
  else invalid.add(name);
  const expectedText = { ...plan.expectedText };
  delete expectedText[name];
  if (change.stored !== undefined) expectedText[name] = change.stored;
  return { members, invalid, labels: [...plan.labels, change.label], expectedText };
}

function mutationsFor(endpoint: Endpoint): fc.Arbitrary<Mutation>[] {
  const schema = schemaOf(endpoint.body);
  const properties = Object.entries(schema.properties ?? {});
  const names = properties.map(([name]) => name);
  const arbitraries: fc.Arbitrary<Mutation>[] = [];
  if (names.length === 0) return arbitraries;

  const wrongValues = [
    'null',
    'true',
    '0',
    '-1',
    '1.5',
    '1e400',
    '""',
    '[]',
    '{}',
    '[null]',
    '{"$gt":""}',
    '"x"',
    '[["x"]]',
  ];
  arbitraries.push(
    fc
      .tuple(fc.constantFrom(...properties), fc.constantFrom(...wrongValues))
      .filter(([[, property], value]) => !typesOf(property).has(jsonTypeOf(value)))
      .map(
        ([[name], rawJson]) =>
          (plan: BodyPlan) =>
            withMember(plan, name, { rawJson, ok: false, label: `${name}=${rawJson}` }),
      ),
  );
  arbitraries.push(
    fc
      .constantFrom(...names)
      .map(
        (name) => (plan: BodyPlan) =>
          withMember(plan, name, { rawJson: null, ok: true, label: `without ${name}` }),
      ),
  );
  arbitraries.push(
    fc
      .tuple(
        fc.oneof(
          fc.constantFrom(
            'nickname',
            'admin',
            'id',
            'created_at',
            'role',
            '$where',
            'FIRST_NAME',
            ' email',
            '',
          ),
          fc.string({ unit: 'binary', maxLength: 12 }),
        ),
        fc.constantFrom('1', '"x"', 'null', '{"admin":true}'),
      )
      .filter(([key]) => !names.includes(key))
      .map(
        ([key, rawJson]) =>
          (plan: BodyPlan) =>
            withMember(plan, key, { rawJson, ok: false, label: `unknown ${short(key, 20)}` }),
      ),
  );
  arbitraries.push(
    fc
      .constantFrom<Member>(
        ['__proto__', '{"admin":true}'],
        ['__proto__', 'null'],
        ['constructor', '{"prototype":{"admin":true}}'],
        ['constructor', '1'],
        ['prototype', '{}'],
      )
      .map(
        ([key, rawJson]) =>
          (plan: BodyPlan) =>
            withMember(plan, key, { rawJson, ok: false, label: `${key}=${rawJson}` }),
      ),
  );
  const dateFields = properties
    .filter(([, property]) => schemaOf(property).format === 'date-time')
    .map(([n]) => n);
  if (dateFields.length > 0) {
    arbitraries.push(
      fc.tuple(fc.constantFrom(...dateFields), fc.constantFrom(...INVALID_DATE_TIMES)).map(
        ([name, value]) =>
          (plan: BodyPlan) =>
            withMember(plan, name, { rawJson: JSON.stringify(value), ok: false, label: `${name}=${value}` }),
      ),
    );
  }
  const textFields = properties.filter(
    ([, property]) =>
      typesOf(property).has('string') && !schemaOf(property).format && !('enum' in schemaOf(property)),
  );
  if (textFields.length > 0) {
    arbitraries.push(
      fc
        .tuple(fc.constantFrom(...textFields), hostileText)
        .map(([[name, property], value]) => (plan: BodyPlan) => {
          // Hostile text in an identifying field (slug, phone, e-mail) names nothing: never a success.
          const accepted = FREE_TEXT_FIELDS.has(name)
            ? acceptedText(name, schemaOf(property), value)
            : undefined;
          return withMember(plan, name, {
            rawJson: JSON.stringify(value),
            ok: accepted !== undefined,
            label: `${name}=${short(value, 30)}`,
            ...(accepted && { stored: accepted.stored }),
          });
        }),
    );
  }
  arbitraries.push(
    fc
      .tuple(fc.constantFrom(...names), fc.integer({ min: -96, max: 96 }))
      .map(([name, delta]) => (plan: BodyPlan) => {
        const rest = plan.members.filter(([key]) => key !== name);
        const overhead = objectText([...rest, [name, '""']]).length;
        const padding = Math.max(1, BODY_LIMIT + delta - overhead);
        return withMember(plan, name, {
          rawJson: JSON.stringify('p'.repeat(padding)),
          ok: false,
          label: `${name} padded to ${BODY_LIMIT + delta} bytes`,
        });
      }),
  );
  arbitraries.push(
    fc.tuple(fc.constantFrom(...names), fc.integer({ min: 1_000, max: 40_000 }), fc.boolean()).map(
      ([name, depth, asObjects]) =>
        (plan: BodyPlan) =>
          withMember(plan, name, {
            rawJson: asObjects
              ? `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
              : `${'['.repeat(depth)}${']'.repeat(depth)}`,
            ok: false,
            label: `${name} nested ${depth} ${asObjects ? 'objects' : 'arrays'} deep`,
          }),
    ),
  );
  return arbitraries;
}

/** Valid when no member is invalid and none the body needs has been taken out. */
function isValidPlan(endpoint: Endpoint, plan: BodyPlan): boolean {
  return (
    plan.invalid.size === 0 &&
    essentialMembers(endpoint).every((name) => plan.members.some(([key]) => key === name))
  );
}

function jsonRequest(
  endpoint: Endpoint,
  context: Context,
  target: Bytes,
  body: Buffer | undefined,
  extraHeaders: Array<[string, Bytes]> = [],
  contentType: string | null = 'application/json',
): RawRequest {
  const headers: Array<[string, Bytes]> = [['Authorization', context.client.bearer]];
  if (contentType !== null && body) headers.push(['Content-Type', contentType]);
  if (endpoint.kind === 'mcp') headers.push(MCP_ACCEPT);
  headers.push(...extraHeaders);
  return { method: endpoint.method, target, headers, ...(body && { body }), from: 'main' };
}

/** Checks that free text came back, and reads back, exactly as the service promised to store it. */
function verifyStoredText(endpoint: Endpoint, expectedText: Record<string, string>) {
  return async (response: RawResponse, client: CampaignClient): Promise<string | undefined> => {
    const data = parseJson(response.body);
    if (!isRecord(data) || !isRecord(data.data)) return `no data member: ${describeBody(data)}`;
    const echoed = data.data;
    for (const [field, expected] of Object.entries(expectedText)) {
      if (field in echoed && echoed[field] !== expected) {
        return `${field} came back as ${short(echoed[field])}, not ${short(expected)}`;
      }
    }
    let readBack: RawResponse | undefined;
    if (endpoint.template === '/v1/clients' && typeof echoed.email === 'string') {
      readBack = await client.call('GET', `/v1/clients?email=${percentEncode(echoed.email)}`);
    } else if (endpoint.template === '/v1/bookings' && typeof echoed.reference === 'string') {
      readBack = await client.call('GET', `/v1/bookings/${percentEncode(echoed.reference)}`);
    } else {
      return undefined;
    }
    const stored = dataOf(readBack);
    if (!isRecord(stored)) return 'the created record does not read back';
    for (const [field, expected] of Object.entries(expectedText)) {
      if (field in stored && stored[field] !== expected) {
        return `${field} was stored as ${short(stored[field])}, not ${short(expected)}`;
      }
    }
    return undefined;
  };
}

function bodyEndpoints(context: Context): Endpoint[] {
  return context.endpoints.filter((endpoint) => endpoint.body !== undefined);
}

/** Valid-shaped bodies with one to three mutations: wrong types, nulls, missing and extra members, ... */
function mutatedBodies(context: Context): fc.Arbitrary<AbuseCase> {
  return fc.oneof(
    ...bodyEndpoints(context).map((endpoint) =>
      fc
        .tuple(
          fc.array(fc.oneof(...mutationsFor(endpoint)), { minLength: 1, maxLength: 3 }),
          fc.uuid(),
          fc.constantFrom(...context.fixtures.freeStarts),
        )
        .map(([mutations, tag, start]): AbuseCase => {
          const initial: BodyPlan = {
            members: validMembers(endpoint, context.fixtures, tag, start),
            invalid: new Set(),
            labels: [],
            expectedText: {},
          };
          const plan = mutations.reduce((current, mutate) => mutate(current), initial);
          const valid = isValidPlan(endpoint, plan);
          const body = Buffer.from(objectText(plan.members));
          return {
            family: 'body',
            label: `${endpoint.method} ${endpoint.template} ${plan.labels.join('; ')}`,
            request: jsonRequest(endpoint, context, concretePath(endpoint, context.fixtures), body),
            expect: valid ? 'valid' : 'rejected',
            // A fresh e-mail and acceptable names: registering cannot fail.
            mustSucceed: valid && endpoint.template === '/v1/clients',
            verify: verifyStoredText(endpoint, plan.expectedText),
          };
        }),
    ),
  );
}

/** Idempotency keys as a client may send them; Node trims the blanks around a header value. */
const idempotencyKey: fc.Arbitrary<string> = fc
  .oneof(fc.uuid(), hostileText, fc.string({ unit: 'grapheme-ascii', minLength: 250, maxLength: 260 }))
  // A line break would start another header, which is another test.
  .filter((key) => !/[\r\n]/.test(key));

/**
 * Valid bodies whose free text is hostile (injection strings, unicode, control characters): either
 * refused, when the text breaks a documented rule, or stored and read back exactly as sent.
 */
function injectedData(context: Context): fc.Arbitrary<AbuseCase> {
  const endpoints = bodyEndpoints(context).filter((endpoint) =>
    Object.keys(schemaOf(endpoint.body).properties ?? {}).some((name) => FREE_TEXT_FIELDS.has(name)),
  );
  return fc
    .constantFrom(...endpoints)
    .chain((endpoint) => {
      const fields = Object.entries(schemaOf(endpoint.body).properties ?? {}).filter(([name]) =>
        FREE_TEXT_FIELDS.has(name),
      );
      return fc.tuple(
        fc.constant(endpoint),
        fc.array(fc.tuple(fc.constantFrom(...fields), hostileText), { minLength: 1, maxLength: 2 }),
        fc.uuid(),
        fc.constantFrom(...context.fixtures.freeStarts),
        endpoint.template === '/v1/bookings' ? fc.option(idempotencyKey, { freq: 2 }) : fc.constant(null),
      );
    })
    .map(([endpoint, texts, tag, start, key]): AbuseCase => {
      let plan: BodyPlan = {
        members: validMembers(endpoint, context.fixtures, tag, start),
        invalid: new Set(),
        labels: [],
        expectedText: {},
      };
      for (const [[name, property], value] of texts) {
        const accepted = acceptedText(name, schemaOf(property), value);
        plan = withMember(plan, name, {
          rawJson: JSON.stringify(value),
          ok: accepted !== undefined,
          label: `${name}=${short(value, 30)}`,
          ...(accepted && { stored: accepted.stored }),
        });
      }
      const headers: Array<[string, Bytes]> = key === null ? [] : [['Idempotency-Key', wtf8(key)]];
      const keyValid = key === null || /^[\x21-\x7e]{1,255}$/.test(key.replace(/^[ \t]+|[ \t]+$/g, ''));
      const valid = isValidPlan(endpoint, plan) && keyValid;
      return {
        family: 'data',
        label: `${endpoint.method} ${endpoint.template} ${plan.labels.join('; ')}${key === null ? '' : ` Idempotency-Key ${short(key, 20)}`}`,
        request: jsonRequest(
          endpoint,
          context,
          concretePath(endpoint, context.fixtures),
          Buffer.from(objectText(plan.members)),
          headers,
        ),
        expect: valid ? 'valid' : 'rejected',
        mustSucceed: valid && endpoint.template === '/v1/clients',
        verify: verifyStoredText(endpoint, plan.expectedText),
      };
    });
}

const MALFORMED_JSON = [
  '{"first_name":"A",',
  '{"a":1,}',
  "{'a':1}",
  '{a:1}',
  '{"a":NaN}',
  '{"a":Infinity}',
  '{"a":undefined}',
  '// comment\n{}',
  '{"a":1}{"b":2}',
  '{"a":"\\x41"}',
  '{"a":"\\u12"}',
  '{"a":"line\nbreak"}',
  '{"a":01}',
  '{"a":1e}',
  '{"a":--1}',
  '{"a":.5}',
  '{"a":+1}',
  '[',
  '{',
  '}',
  '"',
  '',
  '   ',
  '\u0000',
  'nul',
  'tru',
  '{"a":"\\ud800"}',
  '{"a":"\\udc00\\ud800"}',
  '{"a":"\\ud83d"}',
  '[1,2]',
  '"just a string"',
  '42',
  'true',
  '[{}]',
  '{"__proto__":{"admin":true}}',
  '{"constructor":{"prototype":{"admin":true}}}',
];

/** Whole bodies that are not JSON, or not an object, or deeply nested, or not UTF-8 at all. */
function malformedBodies(context: Context): fc.Arbitrary<AbuseCase> {
  const endpoints = [...bodyEndpoints(context), ...context.endpoints.filter((e) => e.kind === 'mcp')];
  const text = fc.oneof(
    fc.constantFrom(...MALFORMED_JSON).map((body) => ({ body: Buffer.from(body), label: short(body, 40) })),
    fc.integer({ min: 1_000, max: 40_000 }).map((depth) => ({
      body: Buffer.from(`${'['.repeat(depth)}${']'.repeat(depth)}`),
      label: `${depth} nested arrays`,
    })),
    fc.integer({ min: 1, max: 30 }).map((cut) => {
      const whole = '{"first_name":"Ada","last_name":"Lovelace","email":"ada@abuse.example"}';
      return { body: Buffer.from(whole.slice(0, whole.length - cut)), label: `cut ${cut} bytes short` };
    }),
    fc
      .constantFrom(
        Buffer.from([0xfe, 0xff, 0x00, 0x7b, 0x00, 0x7d]),
        Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]),
      )
      .map((body) => ({
        body,
        label: `bytes ${body.toString('hex')} (UTF-16, or a UTF-8 byte-order mark)`,
      })),
  );
  return fc.tuple(fc.constantFrom(...endpoints), text).map(([endpoint, { body, label }]) => {
    // A cancellation takes no body at all: JSON null is its way of saying so.
    const valid = endpoint.template.endsWith('/cancel') && body.toString() === 'null';
    return {
      family: 'json',
      label: `${endpoint.method} ${endpoint.template} body ${label}`,
      request: jsonRequest(endpoint, context, concretePath(endpoint, context.fixtures), body),
      expect: valid ? 'valid' : 'rejected',
    };
  });
}

/** Bytes that are not UTF-8 (Latin-1, overlong forms, encoded surrogates) inside otherwise valid text. */
const NOT_UTF8 = [[0xeb], [0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0x80], [0xf4, 0x90, 0x80, 0x80]];

/** Valid bodies whose free text holds bytes that are not UTF-8: refused, never stored as U+FFFD. */
function notUtf8Bodies(context: Context): fc.Arbitrary<AbuseCase> {
  const endpoints = bodyEndpoints(context).filter((endpoint) =>
    Object.keys(schemaOf(endpoint.body).properties ?? {}).some((name) => FREE_TEXT_FIELDS.has(name)),
  );
  return fc
    .tuple(
      fc.constantFrom(...endpoints),
      fc.constantFrom(...NOT_UTF8),
      fc.uuid(),
      fc.constantFrom(...context.fixtures.freeStarts),
    )
    .map(([endpoint, bytes, tag, start]): AbuseCase => {
      const field = Object.keys(schemaOf(endpoint.body).properties ?? {}).find((name) =>
        FREE_TEXT_FIELDS.has(name),
      )!;
      const marker = '@@not-utf8@@';
      const members = validMembers(endpoint, context.fixtures, tag, start).filter(([key]) => key !== field);
      const [before, after] = objectText([...members, [field, JSON.stringify(`Zo${marker}`)]]).split(marker);
      return {
        family: 'utf8',
        label: `${endpoint.method} ${endpoint.template} ${field} with bytes ${Buffer.from(bytes).toString('hex')}`,
        request: jsonRequest(
          endpoint,
          context,
          concretePath(endpoint, context.fixtures),
          Buffer.concat([Buffer.from(before!), Buffer.from(bytes), Buffer.from(after!)]),
        ),
        expect: 'rejected',
      };
    });
}

/** A request body must be application/json (any case, any charset parameter); nothing else is read. */
function contentTypes(context: Context): fc.Arbitrary<AbuseCase> {
  const refused: Array<[string | null, (json: string) => Buffer]> = [
    ['text/plain', (json) => Buffer.from(json)],
    ['text/plain; charset=utf-8', (json) => Buffer.from(json)],
    ['application/x-www-form-urlencoded', () => Buffer.from('first_name=Ada&last_name=Lovelace')],
    [
      'multipart/form-data; boundary=XyZ',
      () =>
        Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="first_name"\r\n\r\nAda\r\n--XyZ--\r\n'),
    ],
    ['application/xml', () => Buffer.from('<client><first_name>Ada</first_name></client>')],
    ['application/json-patch+json', (json) => Buffer.from(json)],
    ['application/jsonx', (json) => Buffer.from(json)],
    ['json', (json) => Buffer.from(json)],
    ['*/*', (json) => Buffer.from(json)],
    ['', (json) => Buffer.from(json)],
    [null, (json) => Buffer.from(json)],
  ];
  const accepted = [
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=latin1',
    'Application/JSON',
    'application/json;charset=UTF-8',
  ];
  const endpoints = [...bodyEndpoints(context), ...context.endpoints.filter((e) => e.kind === 'mcp')];
  return fc
    .tuple(
      fc.constantFrom(...endpoints),
      fc.oneof(
        fc.constantFrom(...refused).map(([type, body]) => ({ type, body, valid: false })),
        fc
          .constantFrom(...accepted)
          .map((type) => ({ type, body: (json: string) => Buffer.from(json), valid: true })),
      ),
      fc.uuid(),
      fc.constantFrom(...context.fixtures.freeStarts),
    )
    .map(([endpoint, { type, body, valid }, tag, start]): AbuseCase => {
      const json =
        endpoint.kind === 'mcp'
          ? JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' })
          : objectText(validMembers(endpoint, context.fixtures, tag, start));
      const request = jsonRequest(
        endpoint,
        context,
        concretePath(endpoint, context.fixtures),
        body(json),
        [],
        type,
      );
      return {
        family: 'content-type',
        label: `${endpoint.method} ${endpoint.template} as ${type === null ? '(no Content-Type)' : short(type)}`,
        request,
        expect: valid ? 'valid' : 'rejected',
        mustSucceed: valid && endpoint.template === '/v1/clients',
      };
    });
}

/** Path parameters that are no such thing. */
function pathParams(context: Context): fc.Arbitrary<AbuseCase> {
  const endpoints = context.endpoints.filter((endpoint) => endpoint.pathParams.length > 0);
  return fc
    .tuple(
      fc.constantFrom(...endpoints),
      hostileSegment,
      fc.uuid(),
      fc.constantFrom(...context.fixtures.freeStarts),
    )
    .chain(([endpoint, segment, tag, start]) =>
      fc.constantFrom(...endpoint.pathParams).map((name): AbuseCase => {
        const body = endpoint.body
          ? Buffer.from(objectText(validMembers(endpoint, context.fixtures, tag, start)))
          : undefined;
        const target = Buffer.concat([
          Buffer.from(concretePath(endpoint, context.fixtures, { name, text: segment.text })),
          Buffer.from(queryText(validQuery(endpoint, context.fixtures))),
        ]);
        return {
          family: 'path',
          label: `${endpoint.method} ${endpoint.template} with ${name} ${segment.label}`,
          request: jsonRequest(endpoint, context, target, body),
          expect: 'rejected',
        };
      }),
    );
}

/** Query strings with at least one thing wrong: wrong types, unknown or repeated names, huge values. */
function queries(context: Context): fc.Arbitrary<AbuseCase> {
  const endpoints = context.endpoints.filter((endpoint) => endpoint.query.length > 0);
  const poisonFor = (endpoint: Endpoint): fc.Arbitrary<{ pairs: Array<[string, string]>; label: string }> => {
    const names = endpoint.query.map((param) => param.name);
    const integers = endpoint.query.filter((p) => p.schema.type === 'integer').map((p) => p.name);
    const options: fc.Arbitrary<{ pairs: Array<[string, string]>; label: string }>[] = [
      fc
        .tuple(
          fc.oneof(
            fc.constantFrom('limt', '__proto__', 'constructor', 'a[b]', '$where', 'Limit'),
            fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 }),
          ),
          hostileText,
        )
        .filter(([name]) => !names.includes(name))
        .map(([name, value]) => ({ pairs: [[name, value]], label: `unknown ${short(name, 20)}` })),
      fc.tuple(fc.constantFrom(...names), hostileText, hostileText).map(([name, a, b]) => ({
        pairs: [
          [name, a],
          [name, b],
        ],
        label: `${name} twice`,
      })),
    ];
    if (integers.length > 0) {
      options.push(
        fc
          .tuple(
            fc.constantFrom(...integers),
            fc.constantFrom(
              'abc',
              '1.5',
              '-1',
              '0',
              '1e3',
              '0x10',
              ' 5',
              '9'.repeat(400),
              'NaN',
              'Infinity',
              '[]',
              'null',
              '101',
              '15',
            ),
          )
          // Numbers are read as JavaScript reads them (" 5" and "0x10" are numbers): keep the ones out of
          // range. (Empty is no value: an optional parameter sent empty is left out.)
          .filter(([name, value]) => {
            const schema = endpoint.query.find((param) => param.name === name)!.schema;
            const number = Number(value);
            return !(
              Number.isInteger(number) &&
              number >= (schema.minimum ?? -Infinity) &&
              number <= (schema.maximum ?? Infinity)
            );
          })
          .map(([name, value]) => ({ pairs: [[name, value]], label: `${name}=${short(value, 20)}` })),
      );
    }
    if (names.includes('date')) {
      options.push(
        fc
          .constantFrom(...INVALID_DATES)
          .map((value) => ({ pairs: [['date', value]], label: `date=${short(value)}` })),
      );
    }
    if (names.includes('service_ids')) {
      options.push(
        fc
          .constantFrom(
            '',
            ',',
            'x',
            `${PLACEHOLDER_UUID},${PLACEHOLDER_UUID}`,
            Array(11).fill(PLACEHOLDER_UUID).join(','),
            `${PLACEHOLDER_UUID}'--`,
            'a'.repeat(401),
          )
          .map((value) => ({ pairs: [['service_ids', value]], label: `service_ids=${short(value, 30)}` })),
      );
    }
    if (names.includes('cursor')) {
      options.push(
        fc
          .oneof(
            hostileText,
            fc.integer({ min: 4097, max: 12_000 }).map((n) => 'c'.repeat(n)),
          )
          .filter((value) => value !== '')
          .map((value) => ({ pairs: [['cursor', value]], label: `cursor=${short(value, 30)}` })),
      );
    }
    if (names.includes('email') || names.includes('phone')) {
      options.push(fc.constant({ pairs: [], label: 'neither phone nor email' }));
      // No hostile phone or e-mail is anyone's: a 400 or a 404, never a client.
      options.push(
        fc
          .tuple(fc.constantFrom('phone', 'email'), hostileText)
          .map(([name, value]) => ({ pairs: [[name, value]], label: `${name}=${short(value, 30)}` })),
      );
    }
    return fc.oneof(...options);
  };
  return fc
    .constantFrom(...endpoints)
    .chain((endpoint) => fc.tuple(fc.constant(endpoint), poisonFor(endpoint), fc.boolean()))
    .map(([endpoint, poison, huge]): AbuseCase => {
      const poisoned = new Set(poison.pairs.map(([name]) => name));
      const base = validQuery(endpoint, context.fixtures).filter(([name]) => !poisoned.has(name));
      let query = queryText([...base, ...poison.pairs]);
      let label = poison.label;
      // Sometimes pad the query past what any server should read (Node's header limit is 16 KiB).
      if (huge) {
        const size = HEADER_LIMIT - 2_000 + (poison.label.length % 4_000);
        query += `${query === '' ? '?' : '&'}pad=${'q'.repeat(size)}`;
        label += `, padded to ${size}`;
      }
      const target = Buffer.concat([
        Buffer.from(concretePath(endpoint, context.fixtures)),
        Buffer.from(query),
      ]);
      return {
        family: 'query',
        label: `${endpoint.method} ${endpoint.template} ${label}`,
        request: jsonRequest(endpoint, context, target, undefined),
        expect: 'rejected',
      };
    });
}

/** Methods a path does not answer, including ones Node does not know. */
function wrongMethods(context: Context): fc.Arbitrary<AbuseCase> {
  // No CONNECT: Node closes a CONNECT it has no handler for without answering at all.
  const methods = [
    'GET',
    'HEAD',
    'POST',
    'PUT',
    'PATCH',
    'DELETE',
    'OPTIONS',
    'TRACE',
    'PROPFIND',
    'MKCOL',
    'COPY',
    'MOVE',
    'LOCK',
    'SEARCH',
    'PURGE',
    'REPORT',
    'LINK',
    'M-SEARCH',
    'NOTIFY',
    'QUERY',
    'FOO',
    'get',
    'Post',
    'G ET',
  ];
  return fc
    .tuple(fc.constantFrom(...context.endpoints), fc.constantFrom(...methods), fc.boolean())
    .filter(([endpoint, method]) => {
      const allowed = context.allowed.get(endpoint.template) ?? new Set();
      // Every method but POST on /mcp is a wrong method (405 in JSON-RPC).
      return !allowed.has(method) || (endpoint.kind === 'mcp' && method !== 'POST');
    })
    .map(([endpoint, method, withBody]): AbuseCase => {
      const body = withBody ? Buffer.from('{"first_name":"Ada"}') : undefined;
      const request = jsonRequest(endpoint, context, concretePath(endpoint, context.fixtures), body);
      return {
        family: 'method',
        label: `${method} ${endpoint.template}${withBody ? ' with a body' : ''}`,
        request: { ...request, method },
        expect: 'rejected',
      };
    });
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const wellFormedKey = fc
  .string({ unit: fc.constantFrom(...BASE62), minLength: 40, maxLength: 40 })
  .map((body) => `bk_${body}`);

/**
 * Authorization headers that do not carry the valid key, from the guessing address: 401 first, then
 * 429 once the address has failed too often; a header Node cannot parse is a 400.
 */
function badAuthorization(context: Context): fc.Arbitrary<AbuseCase> {
  const key = context.client.bearer.slice('Bearer '.length);
  type Header = { values: Bytes[]; label: string };
  const header: fc.Arbitrary<Header> = fc.oneof(
    fc.constant<Header>({ values: [], label: 'no Authorization' }),
    fc
      .constantFrom(
        '',
        'Bearer',
        'Bearer ',
        'Basic YTpi',
        'Token abc',
        'Bearer bk_a bk_b',
        'Bearer null',
        "Bearer bk_' OR '1'='1",
        'Bearer {"$gt":""}',
        'Bearer ../../etc/passwd',
        'Bearer <script>',
        'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
      )
      .map((value) => ({ values: [value], label: short(value) })),
    wellFormedKey.map((guess) => ({ values: [`Bearer ${guess}`], label: 'a well-formed guessed key' })),
    fc
      .tuple(fc.nat({ max: key.length - 4 }), fc.constantFrom(...BASE62))
      .filter(([index, char]) => key[index + 3] !== char)
      .map(([index, char]) => ({
        values: [`Bearer ${key.slice(0, index + 3)}${char}${key.slice(index + 4)}`],
        label: `the key with character ${index + 3} changed`,
      })),
    fc.constantFrom<Header>(
      { values: [`Bearer ${key.slice(0, -1)}`], label: 'the key one short' },
      { values: [`Bearer ${key}A`], label: 'the key one long' },
      { values: [`Basic ${key}`], label: 'the key as Basic' },
      { values: [key], label: 'the key without a scheme' },
      { values: [`Bearer ${key} ${key}`], label: 'the key twice' },
      { values: [`Bearer ${key.toUpperCase()}`], label: 'the key upper-cased' },
      { values: [`Bearer bk_${'A'.repeat(40)}`, `Bearer ${key}`], label: 'a wrong key before the right one' },
      { values: [`Bearer ${'A'.repeat(8_000)}`], label: 'an 8000-character key' },
      { values: [`Bearer ${'A'.repeat(HEADER_LIMIT + 100)}`], label: 'a key over the header limit' },
      {
        values: [Buffer.concat([Buffer.from('Bearer bk_'), wtf8('é🙂\u202e'), Buffer.from('x'.repeat(33))])],
        label: 'a key with UTF-8 bytes',
      },
      {
        values: [Buffer.from(`Bearer ${key.slice(0, 20)}\u0000${key.slice(21)}`)],
        label: 'a key with a NUL byte',
      },
    ),
  );
  const targets = context.endpoints.filter(
    (e) => e.kind === 'rest' || e.kind === 'mcp' || e.kind === 'sse' || e.kind === 'messages',
  );
  return fc
    .tuple(fc.constantFrom(...targets), header, fc.uuid())
    .map(([endpoint, { values, label }, tag]): AbuseCase => {
      const start = context.fixtures.freeStarts[0]!;
      const body =
        endpoint.kind === 'mcp' || endpoint.kind === 'messages'
          ? Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }))
          : endpoint.body
            ? Buffer.from(objectText(validMembers(endpoint, context.fixtures, tag, start)))
            : undefined;
      const target = Buffer.concat([
        Buffer.from(concretePath(endpoint, context.fixtures)),
        Buffer.from(
          endpoint.kind === 'messages'
            ? '?sessionId=guess'
            : queryText(validQuery(endpoint, context.fixtures)),
        ),
      ]);
      const request = jsonRequest(endpoint, context, target, body);
      const headers = request.headers.filter(([name]) => name !== 'Authorization');
      return {
        family: 'auth',
        label: `${endpoint.method} ${endpoint.template} with ${label}`,
        request: {
          ...request,
          headers: [...values.map((v): [string, Bytes] => ['Authorization', v]), ...headers],
          from: 'guessing',
        },
        expect: 'rejected',
        errorCodes: [
          'missing_api_key',
          'invalid_api_key',
          'rate_limited',
          'invalid_request',
          'headers_too_large',
        ],
      };
    });
}

/** Spellings of the valid key that the contract accepts: they must work, or the auth rules bite nothing. */
function goodAuthorization(context: Context): fc.Arbitrary<AbuseCase> {
  const key = context.client.bearer.slice('Bearer '.length);
  return fc
    .constantFrom(`Bearer ${key}`, `bearer ${key}`, `BEARER ${key}`, `Bearer   ${key}`, `Bearer ${key}  `)
    .map((value) => ({
      family: 'auth-ok',
      label: `GET /v1/locations with ${short(value.replace(key, '<key>'))}`,
      request: { method: 'GET', target: '/v1/locations', headers: [['Authorization', value]], from: 'main' },
      expect: 'valid',
      mustSucceed: true,
    }));
}

/** Bytes that are not a well-formed HTTP/1.1 request, or barely are. */
function rawProtocol(context: Context): fc.Arbitrary<AbuseCase> {
  const auth = `Authorization: ${context.client.bearer}\r\n`;
  const host = `Host: ${context.client.host}\r\n`;
  const close = 'Connection: close\r\n';
  const json = 'Content-Type: application/json\r\n';
  const post = `POST /v1/clients HTTP/1.1\r\n${host}${auth}${close}${json}`;
  const get = (path: string) => `GET ${path} HTTP/1.1\r\n${host}${auth}${close}`;
  type Template = {
    bytes: Bytes;
    label: string;
    halfClose?: boolean;
    valid?: boolean;
    /** Carries no key, so it fails authentication: from the guessing address. */
    keyless?: boolean;
  };
  const templates: Template[] = [
    {
      bytes: `${post}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
      label: 'a chunk size that is not hex',
    },
    {
      bytes: `${post}Transfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n`,
      label: 'a chunk without its CRLF',
    },
    {
      bytes: `${post}Transfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\n{}\r\n0\r\n\r\n`,
      label: 'a chunk size past 64 bits',
    },
    {
      bytes: `${post}Transfer-Encoding: chunked\r\n\r\n-2\r\n{}\r\n0\r\n\r\n`,
      label: 'a negative chunk size',
    },
    {
      bytes: `${post}Transfer-Encoding: chunked\r\n\r\n2;\u0001\r\n{}\r\n0\r\n\r\n`,
      label: 'a control character in a chunk extension',
    },
    {
      bytes: `${post}Transfer-Encoding: chunked\r\n\r\n10\r\n{}`,
      label: 'a chunked body cut short',
      halfClose: true,
    },
    {
      bytes: `${post}Transfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
      label: 'Content-Length and chunked',
    },
    { bytes: `${post}Transfer-Encoding: identity\r\n\r\n{}`, label: 'Transfer-Encoding identity' },
    { bytes: `${post}Content-Length: 2\r\nContent-Length: 5\r\n\r\n{}`, label: 'two Content-Lengths' },
    { bytes: `${post}Content-Length: -1\r\n\r\n{}`, label: 'a negative Content-Length' },
    { bytes: `${post}Content-Length: abc\r\n\r\n{}`, label: 'a Content-Length that is not a number' },
    { bytes: `${post}Content-Length: 100\r\n\r\n{"a":`, label: 'a body cut short', halfClose: true },
    { bytes: `${post}Content-Length: 2\r\n\r\n{}GARBAGE\r\n\r\n`, label: 'bytes after the body' },
    { bytes: `GET /v1/locations HTTP/1.1\r\n${host}${auth}`, label: 'headers cut short', halfClose: true },
    {
      bytes: `GET /v1/locations HTTP/1.1\n${host.replace('\r', '')}${auth.replace('\r', '')}${close.replace('\r', '')}\n`,
      label: 'bare LF line ends',
    },
    { bytes: `${get('/v1/locations')}X-Folded: a\r\n b\r\n\r\n`, label: 'an obs-folded header' },
    { bytes: `${get('/v1/locations')}NoColonHere\r\n\r\n`, label: 'a header line without a colon' },
    { bytes: `${get('/v1/locations')}Bad Name: x\r\n\r\n`, label: 'a space in a header name' },
    { bytes: `${get('/v1/locations')}: x\r\n\r\n`, label: 'an empty header name' },
    { bytes: `${get('/v1/locations')}X-A: a\u0000b\r\n\r\n`, label: 'a NUL in a header value' },
    {
      bytes: `${get('/v1/locations')}X-Pad: ${'a'.repeat(HEADER_LIMIT + 10)}\r\n\r\n`,
      label: 'a header over 16 KiB',
    },
    // Node keeps the first 2000 headers and drops the rest; their bytes are what is limited.
    {
      bytes: `${get('/v1/locations')}${'X-Many: v\r\n'.repeat(2_500)}\r\n`,
      label: '2500 short headers',
      valid: true,
    },
    {
      bytes: `${get('/v1/locations')}${Array.from({ length: 2_500 }, (_, i) => `X-Header-${i}: value\r\n`).join('')}\r\n`,
      label: '2500 headers over 16 KiB',
    },
    {
      bytes: `${get('/v1/locations')}Expect: the-impossible\r\n\r\n`,
      label: 'an Expect other than 100-continue',
    },
    {
      bytes: `${post}Expect: 100-continue\r\nContent-Length: 2\r\n\r\n{}`,
      label: 'Expect: 100-continue with an invalid body',
    },
    { bytes: `GET /v1/locations HTTP/1.2\r\n${host}${auth}${close}\r\n`, label: 'HTTP/1.2' },
    { bytes: `GET /v1/locations HTTP/9.9\r\n${host}${auth}${close}\r\n`, label: 'HTTP/9.9' },
    { bytes: 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', label: 'the HTTP/2 preface' },
    {
      bytes: `GET  /v1/locations  HTTP/1.1\r\n${host}${auth}${close}\r\n`,
      label: 'doubled spaces in the request line',
      // Node's parser tolerates them.
      valid: true,
    },
    { bytes: `GET /v1/locations HTTP/1.1\r\n${auth}${close}\r\n`, label: 'no Host' },
    { bytes: 'GET /v1/locations\r\n\r\n', label: 'an HTTP/0.9 request line', keyless: true },
    { bytes: `GET /v1/loc ations HTTP/1.1\r\n${host}${auth}${close}\r\n`, label: 'a space in the path' },
    {
      bytes: Buffer.concat([
        Buffer.from('GET /v1/locations/'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from(`/services HTTP/1.1\r\n${host}${auth}${close}\r\n`),
      ]),
      label: 'invalid UTF-8 bytes in the path',
    },
    {
      bytes: Buffer.concat([
        Buffer.from('GET /v1/locations/'),
        Buffer.from('🙂'),
        Buffer.from(`/services HTTP/1.1\r\n${host}${auth}${close}\r\n`),
      ]),
      label: 'raw UTF-8 in the path',
    },
    {
      bytes: `GET /v1/locations/so\u0000ho/services HTTP/1.1\r\n${host}${auth}${close}\r\n`,
      label: 'a NUL in the path',
    },
    { bytes: `GET /v1/locations?a=\u007f HTTP/1.1\r\n${host}${auth}${close}\r\n`, label: 'DEL in the query' },
    {
      bytes: `GET http://${context.client.host}/v1/locations HTTP/1.1\r\n${host}${auth}${close}\r\n`,
      label: 'an absolute-form target',
      valid: true,
    },
    {
      bytes: `${get('/v1/locations')}Upgrade: websocket\r\n\r\n`,
      label: 'an Upgrade nobody serves',
      valid: true,
    },
  ];
  return fc.constantFrom(...templates).map(
    (template): AbuseCase => ({
      family: 'raw',
      label: template.label,
      request: {
        method: template.bytes.toString('latin1').split(' ')[0] ?? '',
        target: '',
        headers: [],
        raw: Buffer.from(template.bytes),
        from: template.keyless ? 'guessing' : 'main',
        ...(template.halfClose && { halfClose: true }),
      },
      expect: template.valid ? 'valid' : 'rejected',
    }),
  );
}

/** JSON-RPC over /mcp: valid messages with hostile arguments, and messages that are not JSON-RPC. */
function mcpMessages(context: Context): fc.Arbitrary<AbuseCase> {
  const mcp = context.endpoints.find((e) => e.kind === 'mcp')!;
  const argumentKeys = [
    'location',
    'date',
    'time',
    'services',
    'service',
    'name',
    'phone',
    'reference',
    'staff',
    'client',
    'starts_at',
    'email',
  ];
  const hostileArgument = fc.oneof(
    hostileText,
    fc.constantFrom(...INVALID_DATES, ...INVALID_DATE_TIMES),
    fc.constantFrom(null, 0, -1, 1e308, true, [], {}),
  );
  const toolCall = fc
    .tuple(
      fc.oneof(
        fc.constantFrom(
          ...(context.fixtures.toolNames.length > 0 ? context.fixtures.toolNames : ['find_slots']),
        ),
        hostileText,
      ),
      fc.dictionary(fc.constantFrom(...argumentKeys), hostileArgument, { maxKeys: 4 }),
    )
    .map(([name, args]) => ({ name, arguments: args }));
  const validMessage = fc
    .tuple(
      fc.oneof(fc.nat(), fc.string({ maxLength: 8 })),
      fc.oneof(
        fc.constant({ method: 'ping' }),
        fc.constant({ method: 'tools/list' }),
        toolCall.map((params) => ({ method: 'tools/call', params })),
        hostileText.map((name) => ({
          method: 'initialize',
          params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name, version: '1' } },
        })),
        fc.constantFrom({ method: 'no/such/method' }, { method: 'resources/list' }),
      ),
    )
    .map(([id, message]) => ({
      text: JSON.stringify({ jsonrpc: '2.0', id, ...message }),
      label: `${message.method} ${short(JSON.stringify(message), 50)}`,
      valid: true,
    }));
  const invalidMessage = fc.constantFrom(
    { text: '{"jsonrpc":"1.0","id":1,"method":"ping"}', label: 'jsonrpc 1.0', valid: false },
    { text: '{"id":1,"method":"ping"}', label: 'no jsonrpc', valid: false },
    { text: '{"jsonrpc":"2.0","id":{},"method":"ping"}', label: 'an object id', valid: false },
    { text: '{"jsonrpc":"2.0","id":1,"method":5}', label: 'a numeric method', valid: false },
    { text: '{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}', label: 'array params', valid: false },
    { text: '{}', label: 'an empty object', valid: false },
    { text: 'null', label: 'null', valid: false },
    { text: '[1,2]', label: 'a batch of numbers', valid: false },
  );
  const accept = fc.constantFrom<Array<[string, string]>>(
    [MCP_ACCEPT],
    [MCP_ACCEPT],
    [MCP_ACCEPT],
    [['Accept', 'application/json']],
    [['Accept', '*/*']],
    [],
  );
  return fc
    .tuple(fc.oneof({ arbitrary: validMessage, weight: 3 }, invalidMessage), accept)
    .map(([message, headers]): AbuseCase => {
      // Whatever Accept says, the server answers JSON (design.md 8.1).
      const accept = headers[0]?.[1] ?? 'no Accept';
      const request = jsonRequest(mcp, context, '/mcp', Buffer.from(message.text));
      return {
        family: 'mcp',
        label: `POST /mcp ${message.label} (${accept})`,
        request: {
          ...request,
          headers: [...request.headers.filter(([name]) => name !== 'Accept'), ...headers],
        },
        expect: message.valid ? 'valid' : 'rejected',
      };
    });
}

/** /messages with sessions nobody opened, and /sse itself (a valid request: the stream opens). */
function sseTransport(context: Context): fc.Arbitrary<AbuseCase> {
  return fc.oneof(
    fc.tuple(hostileText, fc.boolean()).map(
      ([sessionId, withBody]): AbuseCase => ({
        family: 'sse',
        label: `POST /messages?sessionId=${short(sessionId, 30)}`,
        request: {
          method: 'POST',
          target: `/messages?sessionId=${percentEncode(sessionId)}`,
          headers: [
            ['Authorization', context.client.bearer],
            ...(withBody ? [['Content-Type', 'application/json'] as [string, Bytes]] : []),
          ],
          ...(withBody && { body: Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping"}') }),
          from: 'main',
        },
        expect: 'rejected',
      }),
    ),
    hostileText.map(
      (junk): AbuseCase => ({
        family: 'sse',
        label: `GET /sse?${short(junk, 30)}`,
        request: {
          method: 'GET',
          target: `/sse?x=${percentEncode(junk)}`,
          headers: [['Authorization', context.client.bearer]],
          from: 'main',
        },
        expect: 'valid',
      }),
    ),
  );
}

/** The caller's own X-Request-Id: kept when plain, replaced otherwise, never missing. */
function withRequestId(abuse: fc.Arbitrary<AbuseCase>): fc.Arbitrary<AbuseCase> {
  return fc
    .tuple(
      abuse,
      fc.option(
        fc.oneof(
          fc.constantFrom('call-42.a_b', 'x'.repeat(128), 'x'.repeat(129), 'bad id', 'a\tb', '<script>', 'é'),
          hostileText,
        ),
        { freq: 4 },
      ),
    )
    .map(([abuseCase, requestId]) =>
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters make the header, not the id, invalid.
      requestId === null || abuseCase.request.raw || /[\u0000-\u0008\u000a-\u001f\u007f]/.test(requestId)
        ? abuseCase
        : {
            ...abuseCase,
            request: {
              ...abuseCase.request,
              headers: [...abuseCase.request.headers, ['X-Request-Id', wtf8(requestId)]],
            },
          },
    );
}

function abuseCases(context: Context): fc.Arbitrary<AbuseCase> {
  return withRequestId(
    fc.oneof(
      { arbitrary: mutatedBodies(context), weight: 5 },
      { arbitrary: injectedData(context), weight: 3 },
      { arbitrary: malformedBodies(context), weight: 2 },
      { arbitrary: notUtf8Bodies(context), weight: 1 },
      { arbitrary: contentTypes(context), weight: 2 },
      { arbitrary: pathParams(context), weight: 3 },
      { arbitrary: queries(context), weight: 3 },
      { arbitrary: wrongMethods(context), weight: 2 },
      { arbitrary: badAuthorization(context), weight: 2 },
      { arbitrary: goodAuthorization(context), weight: 1 },
      { arbitrary: rawProtocol(context), weight: 2 },
      { arbitrary: mcpMessages(context), weight: 2 },
      { arbitrary: sseTransport(context), weight: 1 },
    ),
  );
}

// ---------------------------------------------------------------------------------------------------

export type { RawResponse };

/**
 * One request over a raw socket, for example-based tests: `raw` bytes as they are, or a request built
 * from the parts (Host and Connection: close added); from `localAddress` (a 127.x address).
 */
export async function sendHttp(
  baseUrl: string,
  request: {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    raw?: string | Buffer;
    halfClose?: boolean;
    localAddress?: string;
  },
): Promise<RawResponse> {
  const address = request.localAddress ?? MAIN_ADDRESS;
  const http = new RawHttpClient(baseUrl, { main: address, guessing: address });
  const result = await http.exchange({
    method: request.method ?? 'GET',
    target: request.path ?? '/',
    headers: Object.entries(request.headers ?? {}),
    ...(request.body !== undefined && { body: Buffer.from(request.body) }),
    ...(request.raw !== undefined && { raw: Buffer.from(request.raw) }),
    ...(request.halfClose && { halfClose: true }),
    from: 'main',
  });
  if ('failure' in result) throw new Error(`no answer: ${result.failure}`);
  return result.response;
}

async function assertAddressUsable(baseUrl: string, address: string): Promise<void> {
  const url = new URL(baseUrl);
  await new Promise<void>((resolve, reject) => {
    const socket = net.connect({ host: url.hostname, port: Number(url.port), localAddress: address });
    socket.on('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.on('error', (error) =>
      reject(
        new Error(
          `The abuse campaign needs to connect from ${address} (any 127.x address on Linux): ${error.message}`,
        ),
      ),
    );
  });
}

/**
 * Runs the campaign and returns its figures; the caller asserts on them (and prints the seed when
 * they are not as expected, so the same requests can be sent again).
 */
export async function runAbuseCampaign(options: AbuseCampaignOptions): Promise<AbuseCampaignFigures> {
  const seed = options.seed ?? DEFAULT_ABUSE_SEED;
  const guessing = options.guessingAddress ?? '127.0.0.2';
  await assertAddressUsable(options.baseUrl, guessing);
  const http = new RawHttpClient(options.baseUrl, { main: MAIN_ADDRESS, guessing });
  const client = new CampaignClient(http, options.key, seed);

  const document = parseJson((await client.call('GET', '/v1/openapi.json'))?.body ?? Buffer.alloc(0));
  const endpoints = endpointsOf(document);
  const fixtures = await discoverFixtures(client, `s${seed}`);
  const context: Context = { client, endpoints, allowed: allowedMethods(endpoints), fixtures };

  const cases = fc.sample(abuseCases(context), { seed, numRuns: options.numRuns });
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const abuse = cases[next++]!;
      await client.send({ ...abuse, label: `#${next - 1} ${abuse.label}` });
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 8 }, worker));

  const health = await client.send({
    family: 'after',
    label: 'GET /healthz',
    request: { method: 'GET', target: '/healthz', headers: [], from: 'main' },
    expect: 'valid',
    mustSucceed: true,
  });
  const listing = await client.call('GET', '/v1/locations');
  client.figures.healthyAfter =
    health?.status === 200 &&
    isRecord(parseJson(health.body)) &&
    (parseJson(health.body) as Record<string, unknown>).status === 'ok' &&
    listing?.status === 200 &&
    Array.isArray(dataOf(listing));
  return client.figures;
}
