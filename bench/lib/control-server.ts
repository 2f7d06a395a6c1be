import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A benchmark child's control endpoint: where the runner asks it for a run or its state. */
export interface ControlServer {
  origin: string;
  close(): Promise<void>;
}

/**
 * Listens on a free loopback port for the runner's requests: each POST body (JSON, or none) goes to
 * `handle`, whose result is answered as JSON; a failure is answered 500 with its stack, which the
 * runner reports. Separate from the server under test, so asking never queues behind the load.
 */
export async function listenForControl(
  handle: (body: unknown) => unknown | Promise<unknown>,
): Promise<ControlServer> {
  const server = createServer((request, response) => {
    readJson(request)
      .then(handle)
      .then((result) => {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result));
      })
      .catch((error: unknown) => {
        response
          .writeHead(500, { 'content-type': 'text/plain' })
          .end(error instanceof Error ? (error.stack ?? error.message) : String(error));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}
