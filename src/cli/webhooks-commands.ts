import type { Command } from 'commander';
import type { Clock } from '../app/clock.ts';
import type { AppDeps } from '../app/deps.ts';
import { requireOrganisationId } from '../app/directory-service.ts';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookEndpoints,
} from '../app/webhooks/endpoints.ts';
import { presentWebhookEndpoint, type WebhookEndpoint } from '../contract/webhook.ts';
import type { Db } from '../data/database.ts';
import { AppError } from '../domain/errors.ts';
import { CommandError, formatTime, out } from './output.ts';

type WithDb = <T>(work: (db: Db, clock: Clock, deps: AppDeps) => Promise<T>) => Promise<T>;

/**
 * `booking webhooks create|list|delete` (design.md 9.2, docs/webhooks.md): the same service layer as
 * REST's /v1/webhook-endpoints, with the URL policy `booking serve` applies (WEBHOOK_ALLOW_INSECURE,
 * WEBHOOK_ALLOW_PRIVATE_NETWORKS), so that an endpoint saved here is one the server will send to.
 */
export function addWebhooksCommands(program: Command, withDb: WithDb): void {
  const webhooks = program
    .command('webhooks')
    .description("Subscribe, list and delete an organisation's webhook endpoints (docs/webhooks.md)");

  webhooks
    .command('create')
    .description('Subscribe a URL to events; its signing secret is printed once and cannot be shown again')
    .requiredOption('--org <slug>', 'organisation slug')
    .requiredOption('--url <url>', 'where events are POSTed: https (see WEBHOOK_ALLOW_INSECURE below)')
    .requiredOption(
      '--events <list...>',
      'event types, comma- or space-separated, e.g. booking.created,booking.cancelled (may be given more than once)',
      // Each value adds to the list (`--events a,b`, `--events a b`, `--events a --events b`): one
      // replacing another, or a second word refused as an argument, would drop events unsaid.
      (value: string, previous: string[] | undefined) => [...(previous ?? []), ...value.split(',')],
    )
    .option('--description <text>', 'what the endpoint is for (at most 200 characters)')
    .option('--json', 'print the endpoint as the REST API answers it, its "secret" included')
    .addHelpText(
      'after',
      '\nThe URL must be https. WEBHOOK_ALLOW_INSECURE=1 also allows plain http to this machine (tests,\n' +
        'local development); WEBHOOK_ALLOW_PRIVATE_NETWORKS=1 allows private and link-local addresses.\n' +
        'Set them as for `booking serve`: the server checks every send against its own settings.',
    )
    .action(
      async (options: {
        org: string;
        url: string;
        events: string[];
        description?: string;
        json?: boolean;
      }) => {
        // The list as typed, blanks dropped: the service names any event it does not know.
        const events = options.events.map((event) => event.trim()).filter((event) => event !== '');
        const { endpoint, secret } = await withDb(async (db, clock, deps) =>
          createWebhookEndpoint(
            db,
            await requireOrganisationId(db, options.org),
            { url: options.url, events, description: options.description },
            deps.webhookDestinations,
            clock.nowMs(),
          ),
        );
        if (options.json) {
          out(JSON.stringify({ ...presentWebhookEndpoint(endpoint), secret }));
          return;
        }
        out(`Created webhook endpoint ${endpoint.id} for ${endpoint.url}.`);
        out(`Events: ${endpoint.events.join(', ')}`);
        out(`Signing secret (shown only once; it cannot be shown again): ${secret}`);
      },
    );

  webhooks
    .command('list')
    .description("List an organisation's webhook endpoints, newest first (never their secrets)")
    .requiredOption('--org <slug>', 'organisation slug')
    .option(
      '--json',
      'print an array of {"id","url","description","events","status","disabled_reason","disabled_at","failing_since","created_at","updated_at"}',
    )
    .action(async (options: { org: string; json?: boolean }) => {
      const list = await withDb(async (db) =>
        listWebhookEndpoints(db, await requireOrganisationId(db, options.org)),
      );
      if (options.json) {
        out(JSON.stringify(list.map(presentWebhookEndpoint)));
        return;
      }
      if (list.length === 0) out('No webhook endpoints.');
      for (const e of list) {
        const failing = e.failingSince === null ? '' : `  failing since ${formatTime(e.failingSince)}`;
        const description = e.description === null ? '' : `  ${e.description}`;
        out(`${e.id}  ${statusOf(e)}  ${e.url}  ${e.events.join(',')}${failing}${description}`);
      }
    });

  webhooks
    .command('delete')
    .description('Delete an endpoint: nothing more is sent to it, and its delivery log goes with it')
    .requiredOption('--org <slug>', 'organisation slug')
    .argument('<id>', 'endpoint id (from webhooks list)')
    .action(async (id: string, options: { org: string }) => {
      await withDb(async (db) => {
        const organisationId = await requireOrganisationId(db, options.org);
        try {
          await deleteWebhookEndpoint(db, organisationId, id);
        } catch (error) {
          // The service's "has this id" names no id; a terminal line should.
          if (error instanceof AppError && error.code === 'not_found') {
            throw new CommandError(`No webhook endpoint of ${options.org} has the id "${id}".`);
          }
          throw error;
        }
      });
      out(`Deleted webhook endpoint ${id.toLowerCase()}.`);
    });
}

/** enabled, or disabled with why and when (the reasons of delivery.ts). */
function statusOf(endpoint: WebhookEndpoint): string {
  if (endpoint.status === 'enabled') return 'enabled';
  const why =
    endpoint.disabledReason === 'gone'
      ? 'it answered 410 Gone'
      : endpoint.disabledReason === 'failing'
        ? 'failing for 3 days'
        : (endpoint.disabledReason ?? 'no reason recorded');
  return `disabled ${formatTime(endpoint.disabledAt)} (${why})`;
}
