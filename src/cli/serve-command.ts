import { readFileSync } from 'node:fs';
import type pino from 'pino';
import { CalendarFetcher } from '../app/calendars/busy-fetch.ts';
import { startCalendarRefresher } from '../app/calendars/refresher.ts';
import { type Config, LOOPBACK_HOSTS } from '../app/config.ts';
import { startHoldSweeper } from '../app/hold-sweeper.ts';
import { startOauthSweeper } from '../app/oauth-records.ts';
import { startOutboxWorker } from '../app/outbox-delivery.ts';
import { callsWaitingForTheirProvider } from '../app/settle-payment-calls.ts';
import { startWaitlistWorker } from '../app/waitlist/offers.ts';
import { startWebhookWorker } from '../app/webhooks/delivery.ts';
import { httpSender } from '../app/webhooks/sender.ts';
import { isDatabaseEmpty, organisationSlugs } from '../data/organisation-repository.ts';
import { buildApp } from '../http/build-app.ts';
import { openRuntime } from '../runtime.ts';
import { installDemo, printDemoKey } from './catalogue-commands.ts';
import { createLogger, serverLogDestination } from './logger.ts';
import { outboxDeliveryFor } from './outbox-commands.ts';
import { CommandError, out } from './output.ts';

/**
 * Says at start what an operator must know about deposits and links: the local provider takes no
 * money; without a provider, bookings that need a deposit are refused; a server reachable from other
 * machines needs PUBLIC_BASE_URL (or ALLOWED_HOSTS) for its payment links to name it.
 */
function warnAboutPayments(logger: pino.Logger, config: Config): void {
  if (config.paymentProvider === 'local') {
    logger.warn(
      'PAYMENT_PROVIDER=local: the built-in checkout takes no money (test mode); do not use it for real customers',
    );
  } else if (config.paymentProvider === null) {
    logger.info(
      'no PAYMENT_PROVIDER: bookings that need a deposit are refused with 503 payments_unavailable',
    );
  }
  if (!config.email) logger.info('no SMTP_URL: e-mails to customers are kept in the outbox as logged');
  if (!config.sms) logger.info('no TWILIO_ACCOUNT_SID: SMS to customers are kept in the outbox as logged');
  if (!config.publicBaseUrlSet && !LOOPBACK_HOSTS.includes(config.host as (typeof LOOPBACK_HOSTS)[number])) {
    logger.warn('PUBLIC_BASE_URL is not set: payment links name this server only for hosts in ALLOWED_HOSTS');
  }
}

/** The file a setting names, or a refusal naming the setting (Node's own names only the file). */
function readSetting(setting: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new CommandError(`${setting} names ${file}, which cannot be read (${code}).`);
  }
}

/** How long a shutdown waits for requests in flight before it cuts their connections. */
const SHUTDOWN_GRACE_MS = 10_000;

/**
 * What a newcomer is told when the port cannot be had (another server on 8080, a port below 1024
 * without the right): the setting that chooses another, instead of Node's `listen EADDRINUSE`. The
 * demo key just printed is in the database, and the next start prints none: said so, or it is lost.
 * Null for any other failure.
 */
function portRefusal(error: unknown, config: Config, demoKeyPrinted: boolean): CommandError | null {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code !== 'EADDRINUSE' && code !== 'EACCES') return null;
  const where = `${config.host}:${config.port}`;
  const why =
    code === 'EADDRINUSE'
      ? `Port ${config.port} is already in use (${where}): stop what holds it, or choose another port`
      : `This user may not listen on ${where}: choose a port above 1023`;
  const otherPort = config.port === 8081 ? 8082 : 8081;
  const keyKept = demoKeyPrinted
    ? ['The API key printed above is kept: it works once the server is up.']
    : [];
  return new CommandError(
    `${why}, as in PORT=${otherPort} npm start (or booking serve --port ${otherPort}).`,
    keyKept,
  );
}

/**
 * `booking serve`: REST under /v1 and the MCP endpoints (/mcp, /sse) on one port. On SIGTERM or
 * SIGINT it stops accepting connections, lets requests in flight finish, answered with Connection:
 * close (keep-alive connections are closed as they fall idle: silent-connections.ts), ends MCP SSE
 * streams, waits for a running hold sweep, and closes the database (SQLite checkpoints its WAL).
 */
export async function serve(config: Config, options: { demo: boolean }): Promise<void> {
  const logger = createLogger(config.logLevel, serverLogDestination());
  // The demo takes deposits in the built-in test mode unless another provider was chosen.
  if (options.demo && config.paymentProvider === null) config.paymentProvider = 'local';
  // Read before the database is opened: a certificate that cannot be read stops the start there.
  const https = config.tls
    ? { cert: readSetting('TLS_CERT', config.tls.certFile), key: readSetting('TLS_KEY', config.tls.keyFile) }
    : null;
  const runtime = await openRuntime(config);
  const { db, clock } = runtime.deps;
  let demoSlug: string | null = null;
  let demoKeyPrinted = false;
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  let address: string;
  try {
    warnAboutPayments(logger, config);
    if (options.demo) {
      if (await isDatabaseEmpty(db)) {
        const { report, key } = await installDemo(db, clock);
        printDemoKey(report.organisation.slug, key);
        demoSlug = report.organisation.slug;
        demoKeyPrinted = true;
      } else {
        // Named, when it is one (`npm start` again, its key not kept): the command to copy, and its page.
        const slugs = await organisationSlugs(db, 6);
        const one = slugs.length === 1 ? slugs[0]! : null;
        out('The database already holds data, so no demo key is printed; issue one with');
        out(`  npx booking keys create --org ${one ?? '<slug>'} --label <text> --scope read_write`);
        if (one === null)
          out(`  (--org one of: ${slugs.slice(0, 5).join(', ')}${slugs.length > 5 ? ', ...' : ''})`);
        demoSlug = one;
      }
    }
    app = await buildApp(runtime.deps, {
      trustProxy: config.trustProxy,
      https,
      logger,
      allowedHosts: config.allowedHosts,
      publicBaseUrl: config.publicBaseUrlSet ? config.publicBaseUrl : null,
      oauthClientMetadataAllowLoopback: config.oauthClientMetadataAllowLoopback,
    });
    address = await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    // A start that fails (its port taken, say) closes what it opened, so that the process ends with
    // the error: PostgreSQL's pool and in-use lock would keep it alive for ever.
    await app?.close();
    await runtime.close();
    throw portRefusal(error, config, demoKeyPrinted) ?? error;
  }
  const listening = app;
  for (const waiting of await callsWaitingForTheirProvider(db, runtime.deps.payments)) {
    logger.warn(
      { provider: waiting.provider, calls: waiting.calls, payment_provider: config.paymentProvider },
      'refunds or fee charges in doubt wait for the payment provider they were asked of; their bookings cannot be moved or checked out until PAYMENT_PROVIDER names it again',
    );
  }
  const stopSweeper = startHoldSweeper(
    db,
    clock,
    (error) => logger.error({ err: error }, 'hold sweep failed'),
    undefined,
    runtime.deps.payments,
  );
  if (demoSlug) {
    // Beside the key: where a customer books (a wildcard address is reached on this machine's loopback).
    // Printed before "listening on", the line scripts wait for.
    const base = config.publicBaseUrlSet ? config.publicBaseUrl : address.replace('//0.0.0.0', '//127.0.0.1');
    out(`Public booking page: ${base}/p/${encodeURIComponent(demoSlug)}`);
  }
  // Links in messages name PUBLIC_BASE_URL, or the address this server is reached at.
  const delivery = await outboxDeliveryFor(
    runtime.deps,
    config,
    config.publicBaseUrlSet ? config.publicBaseUrl : address,
    // The id and the provider's reason only: never the recipient or the text.
    (event) =>
      logger.warn(
        {
          outbox_id: event.id,
          channel: event.channel,
          attempts: event.attempts,
          final: event.final,
          reason: event.reason,
        },
        'message delivery failed',
      ),
  );
  const stopOutbox = startOutboxWorker(delivery, (error) =>
    logger.error({ err: error }, 'outbox delivery failed'),
  );
  const stopWebhooks = startWebhookWorker(
    {
      db,
      clock,
      sender: httpSender(config.webhookDestinations),
      unitMs: config.webhookRetryUnitMs,
      // The endpoint and the event's id only: never the URL (it may carry a token) or the data.
      onAttemptFailed: (event) =>
        logger.warn(
          {
            webhook_endpoint_id: event.endpointId,
            event_id: event.eventId,
            attempt: event.attempt,
            final: event.final,
            reason: event.reason,
          },
          'webhook delivery failed',
        ),
    },
    (error) => logger.error({ err: error }, 'webhook delivery failed'),
  );
  const stopWaitlist = startWaitlistWorker(
    {
      db,
      clock,
      payments: runtime.deps.payments,
      publicBaseUrl: config.publicBaseUrlSet ? config.publicBaseUrl : address,
    },
    (error) => logger.error({ err: error }, 'waitlist offer failed'),
  );
  // External busy calendars (design.md 9.6): fetched here in the background, never on a request.
  // The calendar's id and why only: never its URL (a private calendar's address is its secret).
  const stopCalendars = startCalendarRefresher(
    {
      db,
      clock,
      fetcher: new CalendarFetcher(config.calendarAllowLoopback),
      refreshMs: config.calendarRefreshMs,
    },
    (error) => logger.error({ err: error }, 'calendar refresh failed'),
  );
  // The OAuth server's records past their end, and registered clients nobody uses (oauth-records.ts).
  const stopOauthSweeper = startOauthSweeper(db, clock, (error) =>
    logger.error({ err: error }, 'OAuth record sweep failed'),
  );
  out(`listening on ${address}`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      // A second signal while stopping: stop now, as the default action would, but through the
      // exit event, where pino writes the lines still gathered (the default action would drop them).
      logger.warn({ signal }, 'stopping at once: a second signal came while shutting down');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down: no new connections, finishing requests in flight');
    // A client that keeps a connection busy past the grace period (a stalled upload, say) must not
    // keep the process alive: its connection is cut, and the database is still closed cleanly.
    const deadline = setTimeout(() => {
      logger.warn({ grace_ms: SHUTDOWN_GRACE_MS }, 'closing connections still open after the grace period');
      listening.server.closeAllConnections();
    }, SHUTDOWN_GRACE_MS);
    deadline.unref();
    await stopSweeper();
    await stopOutbox();
    await stopWebhooks();
    await stopWaitlist();
    await stopCalendars();
    await stopOauthSweeper();
    await listening.close();
    clearTimeout(deadline);
    await runtime.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}
