import nodemailer, { type SendMailOptions } from 'nodemailer';
import { DeliveryError, type MessageSender, withoutPersonalData } from './message-sender.ts';

/** How long one delivery may take, all of it, well inside the worker's lease. */
const SMTP_TIMEOUT_MS = 20_000;

/** The pool's connections: a message beyond them waits in nodemailer's queue, not on the server. */
const SMTP_CONNECTIONS = 4;

/**
 * The replies that refuse our login rather than the message: 530 authentication required, 534 the
 * mechanism too weak, 535 the credentials invalid (RFC 4954).
 */
const CREDENTIAL_REPLIES: ReadonlySet<number> = new Set([530, 534, 535]);

/** The reason kept for a refused login: what to mend, without the server's words (they may name the user). */
const CREDENTIALS_REFUSED = "the credentials were refused at login (SMTP_URL's user and password)";

/**
 * E-mail over SMTP with nodemailer: SMTP_URL (`smtp://` or `smtps://user:pass@host:port`) and
 * MAIL_FROM. The outbox id is the Message-ID, so a message retried after a crash between the server's
 * acceptance and our record of it is the same message to every mail system that de-duplicates.
 */
export function smtpSender(
  settings: { smtpUrl: string; mailFrom: string },
  options: { timeoutMs?: number } = {},
): MessageSender {
  const timeoutMs = options.timeoutMs ?? SMTP_TIMEOUT_MS;
  // Pooled: a worker's batch reuses a few connections instead of a handshake per message.
  const transport = nodemailer.createTransport({
    url: settings.smtpUrl,
    pool: true,
    maxConnections: SMTP_CONNECTIONS,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  const fromAddress = addressOf(settings.mailFrom);
  return {
    async send({ id, to, rendered }) {
      // The timeouts above notice only a server that goes quiet: one that trickles its replies a byte
      // at a time would keep a send going past the worker's lease, and another worker would send the
      // message again meanwhile. The deadline ends the whole send (nodemailer closes its connection),
      // so nothing of it is still out once its outcome is recorded; the retry comes after the backoff.
      const deadline = AbortSignal.timeout(timeoutMs);
      const mail: SendMailOptions & { signal: AbortSignal } = {
        // MAIL_FROM's address, with the organisation's name: one server sends for every business.
        from: rendered.fromName ? { name: rendered.fromName, address: fromAddress } : settings.mailFrom,
        to,
        subject: rendered.subject,
        text: rendered.text,
        html: rendered.html,
        messageId: `<${id}@booking-engine.outbox>`,
        signal: deadline,
      };
      try {
        const info = await transport.sendMail(mail);
        if (info.rejected.length > 0) throw new DeliveryError('the SMTP server rejected the recipient', true);
        return { providerId: info.messageId };
      } catch (error) {
        if (error instanceof DeliveryError) throw error;
        // Temporary: the server may have had the whole message before it stalled (then the retry,
        // with the same Message-ID, is the at-least-once of a crash); failing it would lose a message
        // the server may never have taken, and counting it sent would claim what nobody knows.
        if (deadline.aborted) {
          throw new DeliveryError(
            `SMTP: no answer within ${timeoutMs / 1000} s; the connection was closed`,
            false,
          );
        }
        const smtp = error as { responseCode?: number; code?: string; message?: string };
        // A login refused is the server's word on our settings, not on the message: mended by the
        // operator (a mistyped or expired password), it passes, so it is tried again like an outage.
        if (smtp.code === 'EAUTH' || CREDENTIAL_REPLIES.has(smtp.responseCode ?? 0)) {
          throw new DeliveryError(`SMTP ${smtp.responseCode ?? smtp.code}: ${CREDENTIALS_REFUSED}`, false);
        }
        // 5xx is the server's final word; anything else (4xx, a dropped connection) may pass later.
        const permanent = typeof smtp.responseCode === 'number' && smtp.responseCode >= 500;
        throw new DeliveryError(withoutPersonalData(`SMTP: ${smtp.message ?? String(error)}`, to), permanent);
      }
    },
    close: () => transport.close(),
    concurrency: SMTP_CONNECTIONS,
    timeoutMs,
  };
}

/** The address of MAIL_FROM: "Salon <bookings@salon.example>" or "bookings@salon.example". */
function addressOf(mailFrom: string): string {
  const bracketed = /<([^<>]+)>\s*$/.exec(mailFrom);
  return (bracketed ? bracketed[1]! : mailFrom).trim();
}
