import { request as httpRequest } from 'node:http';
import { ProtocolError } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, type ErrorCode } from '../../src/domain/errors.ts';
import { type Json, TOOL_NAMES } from '../helpers/mcp-harness.ts';
import {
  type ConnectedClient,
  connectSse,
  connectStreamableHttp,
  type ListeningApp,
  startListeningApp,
} from '../helpers/mcp-servers.ts';

/**
 * Every error answer of the MCP endpoints that take JSON-RPC messages (POST /mcp, POST /messages) is a
 * JSON-RPC error carrying the hint, never the REST envelope, including what the app refuses before
 * their handlers run: the body (a NUL, a lone surrogate, a __proto__ key, not JSON, empty, too large,
 * not application/json), the URL, a wrong method. The SDK's client then hands the caller's agent a
 * JSON-RPC error instead of throwing "Error POSTing to endpoint". The same bodies on the REST API still
 * get the REST envelope. A real listening app, real sockets.
 */

let server: ListeningApp;
beforeAll(async () => {
  server = await startListeningApp();
});
afterAll(async () => {
  await server?.t.close();
});

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** A POST of `body` as it is (bytes, not re-encoded), with the read_write key unless told otherwise. */
async function post(
  path: string,
  body: string | Buffer | undefined,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<Answer> {
  const response = await fetch(new URL(path, server.origin), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${server.t.keys.readWrite}`,
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    ...(body !== undefined && { body }),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** What a JSON-RPC error of an MCP endpoint must say. */
interface ExpectedError {
  status: number;
  id: string | number | null;
  rpcCode: number;
  code: ErrorCode;
  detail: string;
  param?: string;
}

/** A JSON-RPC error of an MCP endpoint: exactly {jsonrpc, id, error: {code, message: hint, data}}. */
function expectJsonRpcError(answer: Answer, expected: ExpectedError, label = ''): void {
  expect(answer.status, label).toBe(expected.status);
  expect(answer.headers.get('content-type'), label).toMatch(/^application\/json/);
  expect(answer.headers.get('x-request-id'), label).toMatch(/\S/);
  expect(JSON.parse(answer.text), label).toEqual({
    jsonrpc: '2.0',
    id: expected.id,
    error: {
      code: expected.rpcCode,
      message: ERROR_CATALOGUE[expected.code].hint,
      data: {
        code: expected.code,
        detail: expected.detail,
        ...(expected.param !== undefined && { param: expected.param }),
      },
    },
  });
}

/** A tools/call of get_booking whose reference is `reference`, as JSON text written by hand. */
const getBooking = (id: number | string, reference: string) =>
  `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"tools/call","params":{"name":"get_booking","arguments":{"reference":"${reference}"}}}`;

const TOO_LARGE = JSON.stringify({
  jsonrpc: '2.0',
  id: 7,
  method: 'tools/list',
  params: { pad: 'x'.repeat(70_000) },
});

/**
 * The bodies refused, each as sent and as answered: the id is the request's wherever the body is
 * still JSON (what it holds was refused), null where it is not, or was never read.
 */
interface Refused extends ExpectedError {
  label: string;
  body: string | Buffer | undefined;
  contentType?: string;
  /** The REST API's message for the same body (its envelope is unchanged). */
  restMessage: string;
  /**
   * The REST API's param where it is not the JSON-RPC answer's: the top-level field holding what was
   * refused (a REST body is an object of fields, and the contract's invalid_request names the field).
   */
  restParam?: string;
}

/** A body sent as another media type than JSON: never read, so no id. */
function notJson(label: string, body: string, contentType: string): Refused {
  const said = 'A request body must be sent as application/json.';
  return {
    label,
    body,
    contentType,
    status: 400,
    id: null,
    rpcCode: -32000,
    code: 'invalid_request',
    detail: said,
    param: 'Content-Type',
    restMessage: said,
  };
}

const REFUSED: Refused[] = [
  {
    label: 'a NUL character',
    body: getBooking(7, 'a\\u0000b'),
    status: 400,
    id: 7,
    rpcCode: -32000,
    code: 'invalid_request',
    detail: 'The body holds a NUL character (\\u0000).',
    param: 'body',
    restMessage: 'params holds a NUL character (\\u0000); send text only.',
    restParam: 'params',
  },
  {
    label: 'a lone surrogate',
    body: getBooking('call-8', '\\ud800'),
    status: 400,
    id: 'call-8',
    rpcCode: -32000,
    code: 'invalid_request',
    detail: 'The body holds a lone UTF-16 surrogate escape.',
    param: 'body',
    restMessage: 'params holds a lone UTF-16 surrogate escape; send text only.',
    restParam: 'params',
  },
  {
    label: 'a __proto__ key',
    body: '{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"__proto__":{"admin":true}}}',
    status: 400,
    id: 9,
    rpcCode: -32000,
    code: 'invalid_request',
    detail: 'The body holds the key __proto__, which is not accepted.',
    param: 'body',
    restMessage: 'The body holds the key __proto__, which is not accepted.',
  },
  {
    label: 'a constructor.prototype',
    body: '{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{"constructor":{"prototype":{}}}}',
    status: 400,
    id: 10,
    rpcCode: -32000,
    code: 'invalid_request',
    detail: 'The body holds the key constructor.prototype, which is not accepted.',
    param: 'body',
    restMessage: 'The body holds the key constructor.prototype, which is not accepted.',
  },
  {
    label: 'invalid JSON',
    body: '{"jsonrpc":"2.0","id":11,',
    status: 400,
    id: null,
    rpcCode: -32700,
    code: 'invalid_request',
    detail: 'The body is not valid JSON.',
    param: 'body',
    restMessage: 'The body is not valid JSON.',
  },
  {
    label: 'an empty body',
    body: '',
    status: 400,
    id: null,
    rpcCode: -32700,
    code: 'invalid_request',
    detail: 'The body is empty; send a JSON object.',
    param: 'body',
    restMessage: 'The body is empty; send a JSON object.',
  },
  {
    label: 'bytes that are not UTF-8',
    body: Buffer.from('{"jsonrpc":"2.0","id":12,"method":"tools/list","params":{"x":"\xe9"}}', 'latin1'),
    status: 400,
    id: null,
    rpcCode: -32700,
    code: 'invalid_request',
    detail: 'The body is not valid UTF-8.',
    param: 'body',
    restMessage: 'The body is not valid UTF-8.',
  },
  {
    label: 'a body over 64 KiB',
    body: TOO_LARGE,
    status: 413,
    id: null,
    rpcCode: -32000,
    code: 'payload_too_large',
    detail: 'The request body is larger than 64 KiB.',
    restMessage: 'The request body is larger than 64 KiB.',
  },
  notJson('text/plain', '{"jsonrpc":"2.0","id":13,"method":"tools/list"}', 'text/plain'),
  notJson('a form', 'jsonrpc=2.0&id=14&method=tools%2Flist', 'application/x-www-form-urlencoded'),
];

describe('POST /mcp answers every refusal in JSON-RPC', () => {
  it.each(REFUSED)('$label', async (refused) => {
    const answer = await post('/mcp', refused.body, {
      'content-type': refused.contentType ?? 'application/json',
    });
    expectJsonRpcError(answer, refused);
    // Only the REST API's answers carry the key's or the address's window on these (unchanged).
    expect(answer.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('names the id of a body nested deeper than 64 levels, which is JSON', async () => {
    const deep = `{"jsonrpc":"2.0","id":15,"method":"tools/list","params":{"x":${'['.repeat(70)}${']'.repeat(70)}}}`;
    expectJsonRpcError(await post('/mcp', deep), {
      status: 400,
      id: 15,
      rpcCode: -32000,
      code: 'invalid_request',
      detail: 'The body nests deeper than 64 levels.',
      param: 'body',
    });
  });

  it('keeps the caller’s plain X-Request-Id on a refusal', async () => {
    const answer = await post('/mcp', getBooking(16, 'a\\u0000b'), {
      'content-type': 'application/json',
      'x-request-id': 'call-42.a_b',
    });
    expect(answer.status).toBe(400);
    expect(answer.headers.get('x-request-id')).toBe('call-42.a_b');
  });

  it('refuses a NUL in the URL and a relayed plain-HTTP request in JSON-RPC', async () => {
    const body = '{"jsonrpc":"2.0","id":17,"method":"tools/list"}';
    expectJsonRpcError(await post('/mcp?x=%00', body), {
      status: 400,
      id: null,
      rpcCode: -32000,
      code: 'invalid_request',
      detail: 'The URL holds a NUL character (%00).',
      param: 'url',
    });
    const relayed = await post('/mcp', body, {
      'content-type': 'application/json',
      'x-forwarded-proto': 'https',
    });
    expect(relayed.status).toBe(403);
    expect(JSON.parse(relayed.text)).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: ERROR_CATALOGUE.https_required.hint, data: { code: 'https_required' } },
    });
  });

  it('answers every method but POST with 405, Allow: POST, in JSON-RPC', async () => {
    for (const method of ['GET', 'DELETE', 'PUT', 'PATCH', 'OPTIONS']) {
      const response = await fetch(`${server.origin}/mcp`, {
        method,
        headers: { authorization: `Bearer ${server.t.keys.readWrite}`, accept: 'text/event-stream' },
      });
      const answer = { status: response.status, headers: response.headers, text: await response.text() };
      expectJsonRpcError(
        answer,
        {
          status: 405,
          id: null,
          rpcCode: -32000,
          code: 'method_not_allowed',
          detail: `${method} is not allowed here; use POST.`,
        },
        method,
      );
      expect(response.headers.get('allow'), method).toBe('POST');
      // Refused before routing, as on the REST API: the address's window.
      expect(response.headers.get('x-ratelimit-limit'), method).toMatch(/^\d+$/);
    }
    const head = await fetch(`${server.origin}/mcp`, { method: 'HEAD' });
    expect(head.status).toBe(405);
    expect(head.headers.get('allow')).toBe('POST');
  });

  it('answers an expectation other than 100-continue with 417 in JSON-RPC', async () => {
    const answer = await new Promise<Answer>((resolve, reject) => {
      const req = httpRequest(
        new URL('/mcp', server.origin),
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${server.t.keys.readWrite}`,
            'content-type': 'application/json',
            expect: 'something-else',
            'content-length': '2',
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            text += chunk;
          });
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: new Headers(res.headers as Record<string, string>),
              text,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end('{}');
    });
    expectJsonRpcError(answer, {
      status: 417,
      id: null,
      rpcCode: -32000,
      code: 'expectation_failed',
      detail: 'Only the expectation 100-continue is supported.',
      param: 'Expect',
    });
  });
});

describe('the SDK 2.x client over Streamable HTTP', () => {
  let mcp: ConnectedClient;
  beforeAll(async () => {
    mcp = await connectStreamableHttp(server.origin, server.t.keys.readWrite, 'modern');
  });
  afterAll(async () => {
    await mcp?.close();
  });

  it('gets a JSON-RPC error carrying the hint for a NUL or a lone surrogate in an argument, not a transport failure', async () => {
    for (const [reference, detail] of [
      ['a\u0000b', 'The body holds a NUL character (\\u0000).'],
      ['\ud800', 'The body holds a lone UTF-16 surrogate escape.'],
    ] as const) {
      const call = mcp.client.callTool({ name: 'get_booking', arguments: { reference } });
      const error = await call.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, detail).toBeInstanceOf(ProtocolError);
      expect(error, detail).toMatchObject({
        code: -32000,
        message: expect.stringContaining(ERROR_CATALOGUE.invalid_request.hint),
        data: { code: 'invalid_request', detail, param: 'body' },
      });
    }
    // Nothing reached the transport's error channel, and the client goes on.
    expect(mcp.errors.map(String)).toEqual([]);
    expect((await mcp.client.listTools()).tools.map((tool) => tool.name)).toEqual(TOOL_NAMES);
  });

  it('with the 2025 handshake fails the call on the 400 (that client does so on any 4xx), its error now showing the hint', async () => {
    const legacy = await connectStreamableHttp(server.origin, server.t.keys.readWrite, 'legacy');
    try {
      const call = legacy.client.callTool({ name: 'get_booking', arguments: { reference: 'a\u0000b' } });
      await expect(call).rejects.toThrow(ERROR_CATALOGUE.invalid_request.hint);
    } finally {
      await legacy.close();
    }
  });
});

describe('POST /messages (legacy SSE) answers every refusal in JSON-RPC', () => {
  let sse: Awaited<ReturnType<typeof connectSse>>;
  let messages: string;
  beforeAll(async () => {
    sse = await connectSse(server.origin, server.t.keys.readWrite);
    await sse.client.listTools();
    const url = sse.messagesUrl();
    messages = `${url.pathname}${url.search}`;
  });
  afterAll(async () => {
    await sse?.close();
  });

  it.each(REFUSED)('$label', async (refused) => {
    const answer = await post(messages, refused.body, {
      'content-type': refused.contentType ?? 'application/json',
    });
    expectJsonRpcError(answer, refused);
  });

  it('answers JSON that is not one JSON-RPC message with -32600, and the session goes on', async () => {
    for (const body of ['null', '{"hello":"world"}']) {
      expectJsonRpcError(
        await post(messages, body),
        {
          status: 400,
          id: null,
          rpcCode: -32600,
          code: 'invalid_request',
          detail: 'The body must be one JSON-RPC message.',
          param: 'body',
        },
        body,
      );
    }
    // A batch is told why, in the message itself (docs/mcp.md, "Batches").
    const batch = await post(messages, '[1,2]');
    const refusal =
      'JSON-RPC batches are not accepted on the SSE transport (protocol revision 2024-11-05 has none): POST one message at a time.';
    expect([batch.status, JSON.parse(batch.text)]).toEqual([
      400,
      {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message: refusal,
          data: { code: 'invalid_request', detail: refusal, param: 'body' },
        },
      },
    ]);
    expect((await sse.client.listTools()).tools).toHaveLength(TOOL_NAMES.length);
  });

  it('answers a wrong method with 405 in JSON-RPC', async () => {
    const response = await fetch(`${server.origin}${messages}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${server.t.keys.readWrite}` },
    });
    expectJsonRpcError(
      { status: response.status, headers: response.headers, text: await response.text() },
      {
        status: 405,
        id: null,
        rpcCode: -32000,
        code: 'method_not_allowed',
        detail: 'PUT is not allowed here; use POST.',
      },
    );
    expect(response.headers.get('allow')).toBe('POST');
  });
});

describe('the REST API keeps its envelope for the same requests', () => {
  it.each(REFUSED)('$label', async (refused) => {
    // The JSON-RPC text is no client's body, but the refusals come before any field is read.
    const answer = await post('/v1/clients', refused.body, {
      'content-type': refused.contentType ?? 'application/json',
    });
    expect(answer.status).toBe(refused.status);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.headers.get('x-request-id')).toMatch(/\S/);
    // The key's window, as on every keyed REST answer.
    expect(answer.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    const json = JSON.parse(answer.text) as Json;
    expect(json).toEqual({
      error: {
        code: refused.code,
        message: refused.restMessage,
        ...(refused.param !== undefined && { param: refused.restParam ?? refused.param }),
      },
    });
  });

  it('answers a wrong method and a NUL in the URL with the envelope', async () => {
    const wrong = await fetch(`${server.origin}/v1/clients`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${server.t.keys.readWrite}` },
    });
    expect(wrong.status).toBe(405);
    expect(((await wrong.json()) as Json).error.code).toBe('method_not_allowed');
    const nul = await fetch(`${server.origin}/v1/locations?x=%00`, {
      headers: { authorization: `Bearer ${server.t.keys.readWrite}` },
    });
    expect(nul.status).toBe(400);
    expect(await nul.json()).toEqual({
      error: {
        code: 'invalid_request',
        message: 'x holds a NUL character (%00); send text only.',
        param: 'x',
      },
    });
  });
});
