import nodemailer from 'nodemailer';
import { DeliveryError, type MessageSender, withoutPersonalData } from './message-sender.ts';

/** How long one delivery may wait on the SMTP server, well inside the worker's lease. */
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
export function smtpSender(settings: { smtpUrl: string; mailFrom: string }): MessageSender {
  // Pooled: a worker's batch reuses a few connections instead of a handshake per message.
  const transport = nodemailer.createTransport({
    url: settings.smtpUrl,
    pool: true,
    maxConnections: SMTP_CONNECTIONS,
    connectionTimeout: SMTP_TIMEOUT_MS,
    greetingTimeout: SMTP_TIMEOUT_MS,
    socketTimeout: SMTP_TIMEOUT_MS,
  });
  const fromAddress = addressOf(settings.mailFrom);
  return {
    async send({ id, to, rendered }) {
      try {
        const info = await transport.sendMail({
          // MAIL_FROM's address, with the organisation's name: one server sends for every business.
          from: rendered.fromName ? { name: rendered.fromName, address: fromAddress } : settings.mailFrom,
          to,
          subject: rendered.subject,
          text: rendered.text,
          html: rendered.html,
          messageId: `<${id}@booking-engine.outbox>`,
        });
        if (info.rejected.length > 0) throw new DeliveryError('the SMTP server rejected the recipient', true);
        return { providerId: info.messageId };
      } catch (error) {
        if (error instanceof DeliveryError) throw error;
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
    timeoutMs: SMTP_TIMEOUT_MS,
  };
}

/** The address of MAIL_FROM: "Salon <bookings@salon.example>" or "bookings@salon.example". */
function addressOf(mailFrom: string): string {
  const bracketed = /<([^<>]+)>\s*$/.exec(mailFrom);
  return (bracketed ? bracketed[1]! : mailFrom).trim();
}
