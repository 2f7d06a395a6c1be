import type { Command } from 'commander';
import {
  busyCalendarStatuses,
  createFeed,
  feedPath,
  listCalendarFeeds,
  requireStaffMember,
  revokeCalendarFeed,
} from '../app/calendars/feeds.ts';
import type { Clock } from '../app/clock.ts';
import { readConfig } from '../app/config.ts';
import type { AppDeps } from '../app/deps.ts';
import { requireOrganisationId } from '../app/directory-service.ts';
import type { Db } from '../data/database.ts';
import { AppError } from '../domain/errors.ts';
import { CommandError, err, formatTime, out } from './output.ts';

type WithDb = <T>(work: (db: Db, clock: Clock, deps: AppDeps) => Promise<T>) => Promise<T>;

/**
 * `booking calendars create|list|revoke` (design.md 9.6, docs/calendar-feeds.md): staff members'
 * private calendar feeds, through the same use cases as the console's Calendars page. `create` prints
 * the feed's address once (only its hash is kept); `list` also says how each external busy calendar
 * of the catalogue fares.
 */
export function addCalendarsCommands(program: Command, withDb: WithDb): void {
  const calendars = program
    .command('calendars')
    .description("Make, list and revoke staff members' calendar feeds (docs/calendar-feeds.md)");

  calendars
    .command('create')
    .description("Make a staff member's calendar feed; its address is printed once and cannot be shown again")
    .requiredOption('--org <slug>', 'organisation slug')
    .requiredOption(
      '--staff <staff>',
      "the staff member's id, catalogue ref, name, or first name if one active member has it",
    )
    .option('--json', 'print {"id","staff_id","staff_name","url","created_at"}')
    .addHelpText(
      'after',
      '\nThe address starts with PUBLIC_BASE_URL (set it as for `booking serve`). Subscribe to it in Google\n' +
        'Calendar ("From URL"), Apple Calendar or Outlook. Anyone with the address can read the feed.',
    )
    .action(async (options: { org: string; staff: string; json?: boolean }) => {
      const config = readConfig();
      const base = config.publicBaseUrl;
      const { feed, token } = await withDb(async (db, clock) =>
        createFeed(db, await requireOrganisationId(db, options.org), options.staff, clock.nowMs()),
      ).catch(withCommandWords(options.org));
      const url = `${base}${feedPath(token)}`;
      // This command cannot see where the server listens: without PUBLIC_BASE_URL the address is a guess.
      if (!config.publicBaseUrlSet) {
        err(
          `PUBLIC_BASE_URL is not set: the address assumes the server at ${base} (HOST and PORT); ` +
            'if it is reached elsewhere, revoke this feed and make it again with PUBLIC_BASE_URL set to that address',
        );
      }
      if (options.json) {
        out(
          JSON.stringify({
            id: feed.id,
            staff_id: feed.staffId,
            staff_name: feed.staffName,
            url,
            created_at: formatTime(feed.createdAt),
          }),
        );
        return;
      }
      out(`Made calendar feed ${feed.id} for ${feed.staffName}.`);
      out(`Address (shown only once; it cannot be shown again): ${url}`);
    });

  calendars
    .command('list')
    .description("List the organisation's calendar feeds (never their addresses) and its busy calendars")
    .requiredOption('--org <slug>', 'organisation slug')
    .option(
      '--staff <staff>',
      "only this staff member's (id, catalogue ref, name, or first name if one active member has it)",
    )
    .option(
      '--json',
      'print {"feeds":[{"id","staff_id","staff_name","created_at","revoked_at","last_used_at"}],"busy_calendars":[{"id","staff_id","staff_name","address","busy_count","last_success_at","last_error","last_error_at"}]}',
    )
    .action(async (options: { org: string; staff?: string; json?: boolean }) => {
      const { feeds, busy } = await withDb(async (db) => {
        const organisationId = await requireOrganisationId(db, options.org);
        const staffId =
          options.staff === undefined
            ? undefined
            : (await requireStaffMember(db, organisationId, options.staff)).id;
        const busy = await busyCalendarStatuses(db, organisationId);
        return {
          feeds: await listCalendarFeeds(db, organisationId, staffId),
          busy: staffId === undefined ? busy : busy.filter((c) => c.staffId === staffId),
        };
      }).catch(withCommandWords(options.org));
      if (options.json) {
        out(
          JSON.stringify({
            feeds: feeds.map((f) => ({
              id: f.id,
              staff_id: f.staffId,
              staff_name: f.staffName,
              created_at: formatTime(f.createdAt),
              revoked_at: f.revokedAt === null ? null : formatTime(f.revokedAt),
              last_used_at: f.lastUsedAt === null ? null : formatTime(f.lastUsedAt),
            })),
            busy_calendars: busy.map((c) => ({
              id: c.id,
              staff_id: c.staffId,
              staff_name: c.staffName,
              address: c.address,
              busy_count: c.busyCount,
              last_success_at: c.lastSuccessAt === null ? null : formatTime(c.lastSuccessAt),
              last_error: c.lastError,
              last_error_at: c.lastErrorAt === null ? null : formatTime(c.lastErrorAt),
            })),
          }),
        );
        return;
      }
      out(feeds.length === 0 ? 'No calendar feeds.' : 'Calendar feeds:');
      for (const f of feeds) {
        const state = f.revokedAt === null ? 'live' : `revoked ${formatTime(f.revokedAt)}`;
        out(
          `  ${f.id}  ${f.staffName}  made ${formatTime(f.createdAt)}  last read ${formatTime(f.lastUsedAt)}  ${state}`,
        );
      }
      out(busy.length === 0 ? 'No busy calendars.' : 'Busy calendars:');
      for (const c of busy) {
        const error = c.lastError === null ? '' : `  last error ${formatTime(c.lastErrorAt)}: ${c.lastError}`;
        out(
          `  ${c.staffName}  ${c.address}  ${c.busyCount} busy  last fetched ${formatTime(c.lastSuccessAt)}${error}`,
        );
      }
    });

  calendars
    .command('revoke')
    .description('Revoke a calendar feed: its address answers 404 from now on')
    .requiredOption('--org <slug>', 'organisation slug')
    .argument('<id>', 'feed id (from calendars list)')
    .action(async (id: string, options: { org: string }) => {
      await withDb(async (db, clock) =>
        revokeCalendarFeed(db, await requireOrganisationId(db, options.org), id, clock.nowMs()),
      ).catch((error: unknown) => {
        if (error instanceof AppError && error.code === 'not_found' && error.param === 'id') {
          throw new CommandError(`No live calendar feed of ${options.org} has the id "${id}".`);
        }
        throw error;
      });
      out(`Revoked calendar feed ${id.toLowerCase()}.`);
    });
}

/** A refusal of the use cases as a terminal line. */
function withCommandWords(org: string) {
  return (error: unknown): never => {
    if (error instanceof AppError && (error.code === 'not_found' || error.code === 'invalid_request')) {
      throw new CommandError(
        error.param === 'org' ? `No organisation has the slug "${org}".` : error.message,
      );
    }
    throw error;
  };
}
