import { spawn } from 'node:child_process';
import { REPO_ROOT } from './cli.ts';

// biome-ignore lint/suspicious/noExplicitAny: a JSON-RPC line as parsed, read by the tests' expectations.
type Line = any;

/**
 * `booking mcp` spawned as an MCP host does, written to and read line by line without the SDK's
 * client: for what a client would never send (malformed lines, batches, a request cut at stdin's end).
 */
export interface RawStdioHost {
  /** Every line it has answered, parsed, in order. */
  readonly lines: Line[];
  /** Its exit code, once it has exited and every line it wrote has been read. */
  readonly exited: Promise<number | null>;
  /** What it has written to stderr so far. */
  stderr(): string;
  /** The answer to request `id`, waited for up to 15 s. */
  answer(id: number): Promise<Line>;
  /** Its `count`th line (1-based), waited for up to 15 s. */
  nextLine(count: number): Promise<Line>;
  /** One message as a line. */
  send(message: unknown): void;
  /** Text written as it is (no newline added): a line cut, or written in pieces. */
  write(text: string): void;
  /** The 2025-11-25 handshake (request id 1, then `notifications/initialized`), as a legacy host does. */
  initialize(): Promise<void>;
  /** Closes stdin; resolves with the exit code. */
  end(): Promise<number | null>;
}

export function spawnRawStdioHost(databaseUrl: string, apiKey: string): RawStdioHost {
  const child = spawn(process.execPath, ['bin/booking.js', 'mcp'], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: databaseUrl, BOOKING_API_KEY: apiKey },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: Line[] = [];
  let buffered = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
      lines.push(JSON.parse(buffered.slice(0, newline)));
      buffered = buffered.slice(newline + 1);
    }
  });
  // 'close': the answers written before the exit have all been read by then ('exit' may come first).
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const waitFor = async (found: () => Line | undefined, what: string): Promise<Line> => {
    for (let waited = 0; waited < 15_000; waited += 20) {
      const line = found();
      if (line !== undefined) return line;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`no ${what} (got ${JSON.stringify(lines)})`);
  };
  const answer = (id: number) =>
    waitFor(() => lines.find((line) => line.id === id), `answer to request ${id}`);
  const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
  return {
    lines,
    exited,
    stderr: () => stderr,
    answer,
    nextLine: (count) => waitFor(() => lines[count - 1], `line ${count}`),
    send,
    async initialize() {
      send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'raw-host', version: '1.0.0' },
        },
      });
      await answer(1);
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    },
    write: (text) => child.stdin.write(text),
    end() {
      child.stdin.end();
      return exited;
    },
  };
}
