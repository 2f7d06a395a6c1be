import type { Command } from 'commander';
import { createApiKey, listApiKeys, MAX_KEY_RATE_LIMIT, revokeApiKey } from '../app/api-key-service.ts';
import type { Clock } from '../app/clock.ts';
import type { Db } from '../data/database.ts';
import { API_KEY_SCOPES, type ApiKeyScope } from '../domain/api-key.ts';
import { CommandError, formatTime, out } from './output.ts';

type WithDb = <T>(work: (db: Db, clock: Clock) => Promise<T>) => Promise<T>;

/** `booking keys create|list|revoke`. */
export function addKeysCommands(program: Command, withDb: WithDb): void {
  const keys = program.command('keys').description('Issue, list and revoke API keys');

  keys
    .command('create')
    .description('Issue a key; the plaintext is printed once and never stored')
    .requiredOption('--org <slug>', 'organisation slug')
    .requiredOption('--label <text>', 'what the key is for')
    .requiredOption('--scope <scope>', 'read or read_write')
    .option('--rate-limit <per-minute>', 'requests per minute for this key (default 120)')
    .option('--json', 'print {"id","label","scope","key","created_at"} as JSON')
    .action(
      async (options: { org: string; label: string; scope: string; rateLimit?: string; json?: boolean }) => {
        if (!API_KEY_SCOPES.includes(options.scope as ApiKeyScope)) {
          throw new CommandError(`--scope must be read or read_write, not "${options.scope}".`);
        }
        // Digits only: Number() would also read 1e3, 0x10 and " 5 ".
        const rateLimit = options.rateLimit === undefined ? null : Number(options.rateLimit);
        if (
          rateLimit !== null &&
          (!/^\d+$/.test(options.rateLimit!) || rateLimit < 1 || rateLimit > MAX_KEY_RATE_LIMIT)
        ) {
          throw new CommandError(
            `--rate-limit must be a whole number of requests per minute, from 1 to ${MAX_KEY_RATE_LIMIT}.`,
          );
        }
        const created = await withDb((db, clock) =>
          createApiKey(
            db,
            {
              organisationSlug: options.org,
              label: options.label,
              scope: options.scope as ApiKeyScope,
              rateLimitPerMinute: rateLimit,
            },
            clock.nowMs(),
          ),
        );
        if (options.json) {
          const { id, label, scope, key } = created;
          out(JSON.stringify({ id, label, scope, key, created_at: formatTime(created.created_at) }));
        } else {
          out(`Created key ${created.id} (${created.scope}) "${created.label}".`);
          out(`Key (shown only once): ${created.key}`);
        }
      },
    );

  keys
    .command('list')
    .description('List the keys of an organisation (never the keys themselves)')
    .requiredOption('--org <slug>', 'organisation slug')
    .option('--json', 'print JSON')
    .action(async (options: { org: string; json?: boolean }) => {
      const list = await withDb((db) => listApiKeys(db, options.org));
      if (options.json) {
        out(
          JSON.stringify(
            list.map((k) => ({
              ...k,
              created_at: formatTime(k.created_at),
              last_used_at: k.last_used_at && formatTime(k.last_used_at),
              revoked_at: k.revoked_at && formatTime(k.revoked_at),
            })),
          ),
        );
        return;
      }
      if (list.length === 0) out('No keys.');
      for (const k of list) {
        const state = k.revoked_at === null ? 'active' : `revoked ${formatTime(k.revoked_at)}`;
        out(
          `${k.id}  ${k.hint}  ${k.scope.padEnd(10)}  ${state}  created ${formatTime(k.created_at)}  last used ${formatTime(k.last_used_at)}  ${k.label}`,
        );
      }
    });

  keys
    .command('revoke')
    .description('Revoke a key; requests with it fail at once')
    .argument('<id>', 'key id (from keys list)')
    .action(async (id: string) => {
      const revoked = await withDb((db, clock) => revokeApiKey(db, id, clock.nowMs()));
      out(
        revoked.alreadyRevokedAt === null
          ? `Revoked key ${revoked.id}.`
          : `Key ${revoked.id} was already revoked at ${formatTime(revoked.alreadyRevokedAt)}.`,
      );
    });
}
