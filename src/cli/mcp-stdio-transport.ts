import type { Readable, Writable } from 'node:stream';
import {
  INVALID_REQUEST,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  PARSE_ERROR,
  parseJSONRPCMessage,
  STDIO_DEFAULT_MAX_BUFFER_SIZE,
  serializeMessage,
  type Transport,
} from '@modelcontextprotocol/server';
import { batchRefusal, duplicateIdRefusal } from '../http/mcp-batches.ts';
import { withToolCallArguments } from '../mcp/call-arguments.ts';

/** The longest message read (the SDK's own stdio limit, 10 MiB); a longer line is skipped, not fatal. */
const MAX_LINE_BYTES = STDIO_DEFAULT_MAX_BUFFER_SIZE;
/** How much of a skipped line is kept to find its request id. */
const HEAD_BYTES = 1024;
/** A request's id where every SDK writes it: the first member, or the second after "jsonrpc". */
const LEADING_ID = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")/;

/**
 * MCP over stdio that answers what it was asked before it closes. The SDK's StdioServerTransport
 * closes the moment stdin ends and drops requests still being served; a host that writes a `book`
 * and closes the pipe would then never hear that the booking was made (design.md 8.1). This one
 * closes once stdin has ended and every request it read has been answered. The framing is the SDK's
 * (one JSON message per line, deserializeMessage and serializeMessage), read here so that a line over
 * the SDK's 10 MiB limit is skipped and refused (by its id, when it starts with one) instead of
 * ending the process with the requests after it unanswered, as the SDK's ReadBuffer's throw did.
 *
 * A line that is not JSON is answered with JSON-RPC's Parse error (-32700, id null), and JSON that is
 * no JSON-RPC message with Invalid Request (-32600, its id when it has one), where the SDK's transport
 * said nothing and the host waited. A batch (a JSON array) follows the rule of every transport
 * (src/http/mcp-batches.ts): served, its answers sent together as one array, once the connection
 * speaks 2025-03-26; refused with Invalid Request otherwise.
 */
export class DrainingStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #stdin: Readable;
  readonly #stdout: Writable;
  /** The current line's bytes so far (decoded only whole, so no character is cut in two). */
  #line: Buffer[] = [];
  #lineBytes = 0;
  /** The start of a line too long to read, while the rest of it is skipped. */
  #skipping: Buffer | null = null;
  /**
   * Requests read and not yet answered, by id: how many (a host that reuses an id still has each of
   * its requests run, and is answered each time).
   */
  readonly #pending = new Map<string | number, number>();
  /** The protocol revision this connection speaks, once known (initialize's answer, or an envelope). */
  #revision: string | undefined;
  /** Ids of initialize requests not yet answered: their answer names the negotiated revision. */
  readonly #initializing = new Set<string | number>();
  /** Batches being served: the ids still unanswered, and the answers so far, sent together. */
  readonly #batches: {
    ids: (string | number)[];
    waiting: Set<string | number>;
    answers: JSONRPCMessage[];
  }[] = [];
  #inputEnded = false;
  #closed = false;
  #markClosed!: () => void;
  /** Settles once the transport has closed (its onclose belongs to whoever connected it). */
  readonly closed = new Promise<void>((resolve) => {
    this.#markClosed = resolve;
  });

  constructor(stdin: Readable = process.stdin, stdout: Writable = process.stdout) {
    this.#stdin = stdin;
    this.#stdout = stdout;
  }

  async start(): Promise<void> {
    this.#stdin.on('data', this.#onData);
    this.#stdin.on('error', this.#onError);
    this.#stdin.on('end', this.#onEnd);
    this.#stdin.on('close', this.#onEnd);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return;
    const answers = isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message);
    const id = answers ? message.id : undefined;
    if (isJSONRPCResultResponse(message) && id !== undefined && this.#initializing.delete(id)) {
      const agreed = (message.result as { protocolVersion?: unknown }).protocolVersion;
      if (typeof agreed === 'string') this.#revision = agreed;
    }
    const batch = id === undefined ? undefined : this.#batches.find((b) => b.waiting.has(id));
    if (batch && id !== undefined) {
      // A batch's requests stay pending until its answers go out together.
      batch.waiting.delete(id);
      batch.answers.push(message);
      if (batch.waiting.size > 0) return;
      this.#batches.splice(this.#batches.indexOf(batch), 1);
      await this.#write(JSON.stringify(batch.answers));
      for (const answered of batch.ids) this.#answered(answered);
      this.#closeWhenDrained();
      return;
    }
    await this.#write(serializeMessage(message).trimEnd());
    if (answers) {
      if (id !== undefined) this.#answered(id);
      this.#closeWhenDrained();
    }
  }

  #write(line: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#stdout.write(`${line}\n`, (error) => (error ? reject(error) : resolve()));
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stdin.off('data', this.#onData);
    this.#stdin.off('error', this.#onError);
    this.#stdin.off('end', this.#onEnd);
    this.#stdin.off('close', this.#onEnd);
    this.#stdin.pause();
    this.#line = [];
    this.#skipping = null;
    this.onclose?.();
    this.#markClosed();
  }

  readonly #onData = (chunk: Buffer): void => {
    let start = 0;
    for (;;) {
      const end = chunk.indexOf(0x0a, start);
      this.#take(chunk.subarray(start, end === -1 ? chunk.length : end));
      if (end === -1) return;
      start = end + 1;
      this.#endLine();
    }
  };

  #take(part: Buffer): void {
    if (this.#skipping || part.length === 0) return;
    if (this.#lineBytes + part.length <= MAX_LINE_BYTES) {
      this.#line.push(part);
      this.#lineBytes += part.length;
      return;
    }
    this.#skipping = Buffer.concat([...this.#line, part]).subarray(0, HEAD_BYTES);
    this.#line = [];
    this.#lineBytes = 0;
  }

  #endLine(): void {
    const skipped = this.#skipping;
    const line = Buffer.concat(this.#line).toString('utf8');
    this.#line = [];
    this.#lineBytes = 0;
    this.#skipping = null;
    if (skipped) {
      this.#refuseTooLong(skipped);
      return;
    }
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.onerror?.(new Error('A line that is not JSON was answered with a parse error.'));
      this.#answerError(null, PARSE_ERROR, 'Parse error: the line is not JSON.');
      return;
    }
    if (Array.isArray(value)) {
      this.#serveBatch(value);
      return;
    }
    const message = this.#messageOf(value);
    if (message === undefined) {
      this.#answerError(
        leadingIdOf(value),
        INVALID_REQUEST,
        'Invalid Request: the line is not a JSON-RPC message.',
      );
      return;
    }
    this.#deliver(message);
  }

  #messageOf(value: unknown): JSONRPCMessage | undefined {
    try {
      // tools/call's arguments as the tools take them (null: none), before the SDK reads them.
      return parseJSONRPCMessage(withToolCallArguments(value));
    } catch {
      return undefined;
    }
  }

  #deliver(message: JSONRPCMessage): void {
    // A subscriptions/listen is answered only by its cancellation, never with a response: the host
    // closing stdin ends it, so it is not waited for.
    if (isJSONRPCRequest(message) && message.method !== 'subscriptions/listen') {
      this.#pending.set(message.id, (this.#pending.get(message.id) ?? 0) + 1);
      if (message.method === 'initialize') this.#initializing.add(message.id);
      const claimed = (message.params?._meta as Record<string, unknown> | undefined)?.[
        'io.modelcontextprotocol/protocolVersion'
      ];
      if (typeof claimed === 'string') this.#revision = claimed;
    }
    this.onmessage?.(message);
    // The SDK never answers a request the host cancelled (MCP's cancellation rule): it is no longer
    // waited for, or a host that cancels a call and closes stdin would leave the process running.
    if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') {
      const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof id === 'string' || typeof id === 'number') this.#settleCancelled(id);
    }
  }

  #settleCancelled(id: string | number): void {
    if (!this.#pending.has(id)) return;
    this.#initializing.delete(id);
    const batch = this.#batches.find((b) => b.waiting.has(id));
    if (batch) {
      batch.waiting.delete(id);
      if (batch.waiting.size > 0) return;
      this.#batches.splice(this.#batches.indexOf(batch), 1);
      for (const answered of batch.ids) this.#answered(answered);
      if (batch.answers.length > 0) void this.#write(JSON.stringify(batch.answers));
    } else {
      this.#answered(id);
    }
    this.#closeWhenDrained();
  }

  /** A JSON array: served on 2025-03-26, its answers sent as one array; refused on any other revision. */
  #serveBatch(batch: unknown[]): void {
    const refusal =
      batch.length === 0
        ? 'Invalid Request: an empty batch.'
        : (batchRefusal(this.#revision) ?? duplicateIdRefusal(batch));
    if (refusal !== undefined) {
      this.onerror?.(new Error('A JSON-RPC batch was refused.'));
      this.#answerError(null, INVALID_REQUEST, refusal);
      return;
    }
    const messages = batch.map((value) => this.#messageOf(value));
    const waiting = new Set<string | number>();
    for (const message of messages) if (message && isJSONRPCRequest(message)) waiting.add(message.id);
    const answers: JSONRPCMessage[] = messages.flatMap((message, i) =>
      message === undefined
        ? [invalidRequest(leadingIdOf(batch[i]), 'Invalid Request: not a JSON-RPC message.')]
        : [],
    );
    if (waiting.size > 0) this.#batches.push({ ids: [...waiting], waiting, answers });
    else if (answers.length > 0) void this.#write(JSON.stringify(answers));
    for (const message of messages) if (message) this.#deliver(message);
  }

  #answerError(id: string | number | null, code: number, message: string): void {
    void this.#write(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } }));
  }

  /** Says so to the request (when its id can be read from its start), and to the log. */
  #refuseTooLong(head: Buffer): void {
    this.onerror?.(new Error(`A message longer than ${MAX_LINE_BYTES} bytes was skipped.`));
    const id = idOf(LEADING_ID.exec(head.toString('utf8'))?.[1]);
    if (id === undefined) return;
    this.#stdout.write(
      serializeMessage({
        jsonrpc: '2.0',
        id,
        error: {
          code: INVALID_REQUEST,
          message: `The message is longer than ${MAX_LINE_BYTES / 2 ** 20} MiB; it was not read.`,
        },
      }),
    );
  }

  readonly #onError = (error: Error): void => {
    this.onerror?.(error);
  };

  readonly #onEnd = (): void => {
    if (this.#inputEnded) return;
    this.#inputEnded = true;
    // A last request without its newline was still sent before stdin closed: it is answered too.
    if (this.#lineBytes > 0 || this.#skipping) this.#endLine();
    this.#closeWhenDrained();
  };

  #answered(id: string | number): void {
    const left = (this.#pending.get(id) ?? 0) - 1;
    if (left > 0) this.#pending.set(id, left);
    else this.#pending.delete(id);
  }

  #closeWhenDrained(): void {
    if (this.#inputEnded && this.#pending.size === 0) void this.close();
  }
}

/** The id a too-long line's start names, if it is one JSON-RPC allows (`01` or `"\\q"` is none). */
function idOf(written: string | undefined): string | number | undefined {
  if (written === undefined) return undefined;
  try {
    const id: unknown = JSON.parse(written);
    return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : undefined;
  } catch {
    return undefined;
  }
}

/** The id of what was meant as a request, when it has one JSON-RPC allows; else null. */
function leadingIdOf(value: unknown): string | number | null {
  const id = (value as { id?: unknown } | null)?.id;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
}

function invalidRequest(id: string | number | null, message: string): JSONRPCMessage {
  return { jsonrpc: '2.0', id, error: { code: INVALID_REQUEST, message } } as unknown as JSONRPCMessage;
}
