import { type Command, Option } from 'commander';
import type { Clock } from '../app/clock.ts';
import type { Config } from '../app/config.ts';
import { readConfig } from '../app/config.ts';
import { customerLinks } from '../app/customer-links.ts';
import type { AppDeps } from '../app/deps.ts';
import { requireOrganisationId } from '../app/directory-service.ts';
import { deliverAllDue, type OutboxDelivery, sendersFor } from '../app/outbox-delivery.ts';
import { listOutbox } from '../app/outbox-service.ts';
import type { Db } from '../data/database.ts';
import { OUTBOX_STATUSES, type OutboxStatus } from '../domain/outbox.ts';
import { openRuntime } from '../runtime.ts';
import { formatTime, out } from './output.ts';

type WithDb = <T>(work: (db: Db, clock: Clock) => Promise<T>) => Promise<T>;

/**
 * The delivery of the outbox as the configuration sets it up: the providers (SMTP_URL, TWILIO_*), the
 * links under `publicBaseUrl`, the lease. Failed attempts are reported through `onAttemptFailed`
 * with the message id and the provider's reason only.
 */
export async function outboxDeliveryFor(
  deps: AppDeps,
  config: Config,
  publicBaseUrl: string,
  onAttemptFailed?: OutboxDelivery['onAttemptFailed'],
): Promise<OutboxDelivery> {
  return {
    db: deps.db,
    clock: deps.clock,
    senders: await sendersFor(config),
    links: customerLinks(deps.payments, publicBaseUrl),
    leaseMs: config.outboxLeaseMs,
    onAttemptFailed,
  };
}

/** `booking outbox list|deliver`: what customers were told, and delivering what is due now. */
export function addOutboxCommands(program: Command, withDb: WithDb): void {
  const outbox = program
    .command('outbox')
    .description(
      'The messages to customers (confirmations, links, reminders): list them, deliver what is due',
    );

  outbox
    .command('list')
    .description('List the messages to customers of an organisation, oldest first')
    .requiredOption('--org <slug>', 'organisation slug')
    .addOption(new Option('--status <status>', 'only messages of this status').choices([...OUTBOX_STATUSES]))
    .option(
      '--json',
      'print an array of {"id","channel","to","kind","reference","status","attempts","created_at","sent_at"}',
    )
    .action(async (options: { org: string; status?: OutboxStatus; json?: boolean }) => {
      const list = await withDb(async (db) =>
        listOutbox(db, await requireOrganisationId(db, options.org), options.status),
      );
      if (options.json) {
        out(
          JSON.stringify(
            list.map((m) => ({
              id: m.id,
              channel: m.channel,
              to: m.to,
              kind: m.kind,
              reference: m.reference,
              status: m.status,
              attempts: m.attempts,
              created_at: formatTime(m.createdAt),
              sent_at: m.sentAt === null ? null : formatTime(m.sentAt),
            })),
          ),
        );
        return;
      }
      if (list.length === 0) out('No messages.');
      for (const m of list) {
        // Why it failed, or why a retry is waiting (a provider refusing its credentials, say).
        const note = !m.lastError
          ? ''
          : m.status === 'failed'
            ? `  (${m.lastError})`
            : m.status === 'pending'
              ? `  (last try: ${m.lastError})`
              : '';
        out(
          `${m.id}  ${m.status.padEnd(7)}  ${m.channel.padEnd(5)}  ${m.kind.padEnd(17)}  ${m.reference}  ${m.to}  ${formatTime(m.createdAt)}  attempts ${m.attempts}${note}`,
        );
        // With no provider set up (the demo), what a message would have said is only here: a public
        // booking's code included.
        if (m.status === 'logged') out(`    says: ${loggedWords(m.body)}`);
      }
    });

  outbox
    .command('deliver')
    .description(
      'Deliver every message due now (what `booking serve` does continuously), with SMTP_URL/TWILIO_* as configured',
    )
    .action(async () => {
      const config = readConfig();
      const runtime = await openRuntime(config, undefined, { mustExist: true });
      try {
        const delivery = await outboxDeliveryFor(runtime.deps, config, config.publicBaseUrl);
        const counts = await deliverAllDue(delivery);
        for (const sender of Object.values(delivery.senders)) sender?.close?.();
        out(
          `sent ${counts.sent}, logged ${counts.logged}, to retry ${counts.retried}, failed ${counts.failed}, dropped ${counts.dropped}`,
        );
      } finally {
        await runtime.close();
      }
    });
}

/** A logged message's words on one line: the SMS, or the e-mail's text. */
function loggedWords(body: string | null): string {
  try {
    const words = JSON.parse(body ?? '') as { subject?: string; text?: string };
    return (words.text ?? '').replace(/\s+/g, ' ').trim();
  } catch {
    return '';
  }
}
