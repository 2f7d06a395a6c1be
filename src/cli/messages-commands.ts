import { type Command, Option } from 'commander';
import type { Clock } from '../app/clock.ts';
import { requireOrganisationId } from '../app/directory-service.ts';
import { listMessages, markMessageDone } from '../app/message-service.ts';
import type { Db } from '../data/database.ts';
import type { StaffMessage } from '../domain/message.ts';
import { formatTime, out } from './output.ts';

type WithDb = <T>(work: (db: Db, clock: Clock) => Promise<T>) => Promise<T>;

/** `booking messages list|done`: the messages callers left for staff (MCP take_message). */
export function addMessagesCommands(program: Command, withDb: WithDb): void {
  const messages = program
    .command('messages')
    .description('List the messages callers left for staff, mark them done');

  messages
    .command('list')
    .description('List the messages callers left for the staff of an organisation, oldest first')
    .requiredOption('--org <slug>', 'organisation slug')
    .addOption(new Option('--status <status>', 'only open or only done messages').choices(['open', 'done']))
    .option(
      '--json',
      'print an array of {"id","caller_name","phone","message","reference","status","created_at"}',
    )
    .action(async (options: { org: string; status?: StaffMessage['status']; json?: boolean }) => {
      const list = await withDb(async (db) =>
        listMessages(db, await requireOrganisationId(db, options.org), { status: options.status }),
      );
      if (options.json) {
        out(
          JSON.stringify(
            list.map((m) => ({
              id: m.id,
              caller_name: m.callerName,
              phone: m.phone,
              message: m.message,
              reference: m.reference,
              status: m.status,
              created_at: formatTime(m.createdAt),
            })),
          ),
        );
        return;
      }
      if (list.length === 0) out('No messages.');
      for (const m of list) {
        const about = [m.phone, m.reference].filter((part) => part !== null).join('  ');
        out(
          `${m.id}  ${m.status.padEnd(4)}  ${formatTime(m.createdAt)}  ${m.callerName}${about ? `  ${about}` : ''}`,
        );
        for (const line of m.message.split('\n')) out(`    ${line}`);
      }
    });

  messages
    .command('done')
    .description('Mark a message done')
    .argument('<id>', 'message id (from messages list)')
    .action(async (id: string) => {
      const message = await withDb((db, clock) => markMessageDone(db, id, clock.nowMs()));
      out(`Message ${message.id} is done.`);
    });
}
