import net from 'node:net';

/** What the slow clients saw while they ran. */
export interface SlowClientFigures {
  /** Connections opened over the whole run. */
  opened: number;
  /** Answers the server gave them, by status (a request refused or cut short). */
  answers: Record<string, number>;
  /** Connections the server closed without an answer. */
  closedSilently: number;
  /** Bytes of body they sent, one at a time. */
  bytesSent: number;
}

export interface SlowClients {
  /** Connections open right now. */
  open(): number;
  figures(): SlowClientFigures;
  stop(): void;
}

/**
 * `count` connections from `localAddress` (a loopback address of their own, so they come from one
 * address the server can tell apart), each sending the headers of a POST with a 1,000-byte body and
 * then the body one byte every `byteEveryMs`, as a slow-loris attacker does; `authorization` is sent
 * when given. A connection the server closes is opened again at its next byte's time, so each keeps
 * to one packet per interval: a slow attack, not a flood. The first connections are spread over
 * `rampMs`.
 */
export function startSlowClients(options: {
  port: number;
  localAddress: string;
  count: number;
  byteEveryMs: number;
  rampMs: number;
  authorization?: string;
}): SlowClients {
  const open = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const figures: SlowClientFigures = { opened: 0, answers: {}, closedSilently: 0, bytesSent: 0 };
  let stopped = false;
  const head =
    'POST /v1/clients HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n' +
    (options.authorization ? `Authorization: ${options.authorization}\r\n` : '') +
    '\r\n';

  const later = (run: () => void, ms: number) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!stopped) run();
    }, ms);
    timers.add(timer);
  };

  const connect = () => {
    figures.opened += 1;
    const socket = net.connect({ port: options.port, host: '127.0.0.1', localAddress: options.localAddress });
    let answer = '';
    open.add(socket);
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      open.delete(socket);
      const status = /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1];
      if (status) figures.answers[status] = (figures.answers[status] ?? 0) + 1;
      else if (!stopped) figures.closedSilently += 1;
      later(connect, options.byteEveryMs);
    });
    socket.once('connect', () => {
      socket.write(head);
      const trickle = () => {
        if (socket.destroyed) return;
        socket.write(figures.bytesSent % 2 === 0 ? '{' : ' ');
        figures.bytesSent += 1;
        later(trickle, options.byteEveryMs);
      };
      later(trickle, options.byteEveryMs);
    });
  };

  for (let i = 0; i < options.count; i++) later(connect, (i * options.rampMs) / options.count);
  return {
    open: () => open.size,
    figures: () => structuredClone(figures),
    stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      for (const socket of open) socket.destroy();
    },
  };
}
