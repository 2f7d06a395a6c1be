import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import { SMTPServer } from 'smtp-server';

/**
 * Real servers on this machine standing in for the providers: an SMTP server (the smtp-server package)
 * that keeps what it receives, and an HTTP server answering as Twilio's Messages API does, checking the
 * form and the basic auth. Each de-duplicates by the message's idempotency key (the e-mail's Message-ID,
 * the SMS request's I-Twilio-Idempotency-Token), as a provider that honours one does, and counts every
 * request, so a test can tell "delivered at least once" from "accepted once".
 */

export interface ReceivedEmail {
  messageId: string;
  from: string;
  to: string[];
  raw: string;
}

export interface SmtpSink {
  url: string;
  /** Every DATA received, in order (a repeated Message-ID appears again). */
  received: ReceivedEmail[];
  /** Accepted messages by Message-ID (the first of each). */
  accepted: Map<string, ReceivedEmail>;
  /**
   * Receives messages but answers none until `release` (a server slow to say 250 after the data, as
   * one scanning every message is); with `on` false, new messages are answered at once again while
   * those held stay held.
   */
  hold(on: boolean): void;
  /** How many received messages wait for their answer. */
  readonly held: number;
  /** Answers the held messages: accepted. */
  release(): void;
  close(): Promise<void>;
}

/** Recipients starting with "reject" are refused with 550, as a mailbox that does not exist. */
export async function startSmtpSink(options: { user?: string; pass?: string } = {}): Promise<SmtpSink> {
  const received: ReceivedEmail[] = [];
  const accepted = new Map<string, ReceivedEmail>();
  let holding = false;
  let held: (() => void)[] = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    authOptional: options.user === undefined,
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === options.user && auth.password === options.pass)
        callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onRcptTo(address, _session, callback) {
      if (address.address.startsWith('reject')) {
        const error = new Error(`5.1.1 <${address.address}>: Recipient address rejected`) as Error & {
          responseCode: number;
        };
        error.responseCode = 550;
        callback(error);
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      let raw = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        raw += chunk;
      });
      stream.on('end', () => {
        const messageId = /^Message-ID:\s*(\S+)/im.exec(raw)?.[1] ?? '';
        const email = {
          messageId,
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
        };
        received.push(email);
        if (!accepted.has(messageId)) accepted.set(messageId, email);
        if (holding) held.push(() => callback());
        else callback();
      });
    },
  });
  // A client killed mid-message resets its connection; smtp-server reports that as the server's
  // 'error' (inside a transaction), which unheard would end the test run. Anything else stays loud.
  server.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') throw error;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  const credentials = options.user === undefined ? '' : `${options.user}:${options.pass}@`;
  return {
    url: `smtp://${credentials}127.0.0.1:${port}`,
    received,
    accepted,
    hold: (on) => {
      holding = on;
    },
    get held() {
      return held.length;
    },
    release: () => {
      const answers = held;
      held = [];
      for (const answer of answers) answer();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface SmsRequest {
  token: string;
  to: string;
  from: string;
  body: string;
}

export interface TwilioStandIn {
  /** TWILIO_API_BASE for the service. */
  base: string;
  accountSid: string;
  authToken: string;
  /** Every well-formed request, in order. */
  requests: SmsRequest[];
  /** Accepted messages by idempotency token. */
  accepted: Map<string, SmsRequest>;
  /** Requests refused for their form or auth (each with why), which a correct client never causes. */
  malformed: string[];
  /** Answers the next `n` requests with 503 (an outage), before anything is accepted. */
  failNext(n: number): void;
  /**
   * Accepts requests but answers none until released (a provider slow to confirm); released with
   * `outage`, the held requests are answered 503 instead and count as never accepted.
   */
  hold(on: boolean, release?: 'accept' | 'outage'): void;
  close(): Promise<void>;
}

/** To numbers ending 0000 are refused with 400 (code 21211, an invalid number), as Twilio does. */
export async function startTwilioStandIn(): Promise<TwilioStandIn> {
  const accountSid = 'AC00000000000000000000000000000001';
  const authToken = 'stand-in-auth-token';
  const requests: SmsRequest[] = [];
  const accepted = new Map<string, SmsRequest & { sid: string }>();
  const malformed: string[] = [];
  let failures = 0;
  let holding = false;
  const held = new Set<{ reply: () => void; refuse: () => void }>();
  const server: Server = createServer(async (request, response) => {
    const answer = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    let body: string;
    try {
      body = await bodyOf(request);
    } catch {
      return; // the sender went away mid-request (an instance killed): there is no one to answer
    }
    const problem = check(request, body, accountSid, authToken);
    if (typeof problem === 'string') {
      malformed.push(problem);
      answer(problem.startsWith('auth') ? 401 : 400, { code: 20003, message: problem, status: 401 });
      return;
    }
    if (failures > 0) {
      failures -= 1;
      answer(503, { code: 20500, message: 'Service unavailable', status: 503 });
      return;
    }
    if (problem.to.endsWith('0000')) {
      answer(400, {
        code: 21211,
        message: `The 'To' number ${problem.to} is not a valid phone number.`,
        status: 400,
      });
      return;
    }
    requests.push(problem);
    const known = accepted.get(problem.token);
    const sid = known?.sid ?? `SM${accepted.size.toString(16).padStart(32, '0')}`;
    if (!known) accepted.set(problem.token, { ...problem, sid });
    const reply = () =>
      answer(201, {
        sid,
        account_sid: accountSid,
        to: problem.to,
        from: problem.from,
        body: problem.body,
        status: 'queued',
        num_segments: '1',
        date_created: new Date().toUTCString(),
        uri: `/2010-04-01/Accounts/${accountSid}/Messages/${sid}.json`,
      });
    if (holding) {
      held.add({
        reply,
        refuse: () => {
          if (!known) accepted.delete(problem.token);
          answer(503, { code: 20500, message: 'Service unavailable', status: 503 });
        },
      });
    } else reply();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    accountSid,
    authToken,
    requests,
    accepted,
    malformed,
    failNext: (n) => {
      failures = n;
    },
    hold: (on, release = 'accept') => {
      holding = on;
      if (!on) {
        for (const answer of held) (release === 'accept' ? answer.reply : answer.refuse)();
        held.clear();
      }
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of request) body += chunk;
  return body;
}

/** The request as Twilio's Messages API requires it, or what is wrong with it. */
function check(
  request: IncomingMessage,
  body: string,
  accountSid: string,
  authToken: string,
): SmsRequest | string {
  if (request.method !== 'POST' || request.url !== `/2010-04-01/Accounts/${accountSid}/Messages.json`) {
    return `path: ${request.method} ${request.url}`;
  }
  const expected = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;
  if (request.headers.authorization !== expected) return 'auth: wrong or missing basic auth';
  if (!String(request.headers['content-type']).startsWith('application/x-www-form-urlencoded')) {
    return `form: content-type ${request.headers['content-type']}`;
  }
  const form = new URLSearchParams(body);
  const to = form.get('To');
  const from = form.get('From');
  const text = form.get('Body');
  if (!to || !from || !text) return 'form: To, From and Body are required';
  const token = request.headers['i-twilio-idempotency-token'];
  if (typeof token !== 'string' || token === '') return 'form: no idempotency token';
  return { token, to, from, body: text };
}

/** The settings that point `booking serve` (or `booking outbox deliver`) at these two stand-ins. */
export function providerEnv(smtp: SmtpSink, twilio: TwilioStandIn): Record<string, string> {
  return {
    SMTP_URL: smtp.url,
    MAIL_FROM: 'bookings@acme.example',
    TWILIO_ACCOUNT_SID: twilio.accountSid,
    TWILIO_AUTH_TOKEN: twilio.authToken,
    TWILIO_FROM: '+447700900000',
    TWILIO_API_BASE: twilio.base,
  };
}

export interface TricklingSmtp {
  url: string;
  /** The Message-IDs of the messages whose data reached the server, in order (a repeat appears again). */
  received: string[];
  /** Connections the client closed while a reply was still being trickled to it. */
  readonly cutMidReply: number;
  /**
   * With `on`, the reply to MAIL FROM goes out one byte every `byteEveryMs`, never silent long enough
   * for an inactivity timeout (a tarpit, or a server in trouble); otherwise every reply goes at once.
   */
  trickle(on: boolean, byteEveryMs?: number): void;
  close(): Promise<void>;
}

/** Replies that a trickle spells out: long enough to take seconds at one byte a time. */
const TRICKLED_REPLY = '250 2.1.0 Sender OK, thinking it over slowly, one byte at a time\r\n';

/**
 * A bare SMTP server (no authentication) that can trickle a reply: nodemailer's timeouts
 * (connection, greeting, socket inactivity) never fire on it, so only an overall deadline ends a
 * send it stalls.
 */
export async function startTricklingSmtp(): Promise<TricklingSmtp> {
  const received: string[] = [];
  let trickling = false;
  let byteEvery = 100;
  let cutMidReply = 0;
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.setEncoding('utf8');
    let inData = false;
    let data = '';
    let buffered = '';
    let trickleTimer: NodeJS.Timeout | null = null;
    socket.on('close', () => {
      sockets.delete(socket);
      if (trickleTimer) {
        clearInterval(trickleTimer);
        cutMidReply += 1;
      }
    });
    socket.on('error', () => {});
    const reply = (line: string) => {
      if (!socket.destroyed) socket.write(`${line}\r\n`);
    };
    const trickled = () => {
      let sent = 0;
      trickleTimer = setInterval(() => {
        if (socket.destroyed) return;
        socket.write(TRICKLED_REPLY[sent]!);
        sent += 1;
        if (sent === TRICKLED_REPLY.length) {
          clearInterval(trickleTimer!);
          trickleTimer = null;
        }
      }, byteEvery);
    };
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      for (;;) {
        if (inData) {
          const end = buffered.indexOf('\r\n.\r\n');
          if (end === -1) return;
          data += buffered.slice(0, end + 2);
          buffered = buffered.slice(end + 5);
          inData = false;
          received.push(/^Message-ID:\s*(\S+)/im.exec(data)?.[1] ?? '');
          data = '';
          reply('250 2.0.0 Queued');
          continue;
        }
        const eol = buffered.indexOf('\r\n');
        if (eol === -1) return;
        const line = buffered.slice(0, eol);
        buffered = buffered.slice(eol + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') reply('250 trickling.example');
        else if (verb === 'MAIL') trickling ? trickled() : reply('250 2.1.0 Sender OK');
        else if (verb === 'RCPT') reply('250 2.1.5 Recipient OK');
        else if (verb === 'DATA') {
          inData = true;
          reply('354 Go ahead');
        } else if (verb === 'RSET' || verb === 'NOOP') reply('250 OK');
        else if (verb === 'QUIT') {
          reply('221 Bye');
          socket.end();
        } else reply('502 5.5.1 Not implemented');
      }
    });
    reply('220 trickling.example ESMTP');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    get cutMidReply() {
      return cutMidReply;
    },
    trickle: (on, byteEveryMs = 100) => {
      trickling = on;
      byteEvery = byteEveryMs;
    },
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
