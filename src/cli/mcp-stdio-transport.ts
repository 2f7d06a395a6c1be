import type { Readable, Writable } from 'node:stream';
import {
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  ReadBuffer,
  serializeMessage,
  type Transport,
} from '@modelcontextprotocol/server';

/**
 * MCP over stdio that answers what it was asked before it closes. The SDK's StdioServerTransport
 * closes the moment stdin ends and drops requests still being served; a host that writes a `book`
 * and closes the pipe would then never hear that the booking was made (design.md 8.1). This one
 * closes once stdin has ended and every request it read has been answered. The framing (one JSON
 * message per line) is the SDK's own ReadBuffer and serializeMessage.
 */
export class DrainingStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #stdin: Readable;
  readonly #stdout: Writable;
  readonly #buffer = new ReadBuffer();
  /** Requests read and not yet answered. */
  readonly #pending = new Set<string | number>();
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
    await new Promise<void>((resolve, reject) => {
      this.#stdout.write(serializeMessage(message), (error) => (error ? reject(error) : resolve()));
    });
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
      if (message.id !== undefined) this.#pending.delete(message.id);
      this.#closeWhenDrained();
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stdin.off('data', this.#onData);
    this.#stdin.off('error', this.#onError);
    this.#stdin.off('end', this.#onEnd);
    this.#stdin.off('close', this.#onEnd);
    this.#stdin.pause();
    this.#buffer.clear();
    this.onclose?.();
    this.#markClosed();
  }

  readonly #onData = (chunk: Buffer): void => {
    this.#buffer.append(chunk);
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.#buffer.readMessage();
      } catch (error) {
        this.onerror?.(error as Error);
        continue;
      }
      if (message === null) return;
      if (isJSONRPCRequest(message)) this.#pending.add(message.id);
      this.onmessage?.(message);
    }
  };

  readonly #onError = (error: Error): void => {
    this.onerror?.(error);
  };

  readonly #onEnd = (): void => {
    this.#inputEnded = true;
    this.#closeWhenDrained();
  };

  #closeWhenDrained(): void {
    if (this.#inputEnded && this.#pending.size === 0) void this.close();
  }
}
