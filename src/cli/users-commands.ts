import { type Command, Option } from 'commander';
import type { Clock } from '../app/clock.ts';
import { createUser, disableUser, listUsers, setPassword, USER_ROLES } from '../app/staff-account-service.ts';
import type { Db } from '../data/database.ts';
import { CommandError, formatTime, out } from './output.ts';

type WithDb = <T>(work: (db: Db, clock: Clock) => Promise<T>) => Promise<T>;

/** `booking users create|list|set-password|disable`: the staff accounts that sign in at /console. */
export function addUsersCommands(program: Command, withDb: WithDb): void {
  const users = program
    .command('users')
    .description('Create, list, change the password of and disable staff accounts of the console');

  users
    .command('create')
    .description('Create a staff account; the password is read from stdin (one line), never from arguments')
    .requiredOption('--org <slug>', 'organisation slug')
    .requiredOption('--email <email>', 'the e-mail address the person signs in with')
    .addOption(new Option('--role <role>', 'owner, admin or staff').choices(USER_ROLES).makeOptionMandatory())
    .action(async (options: { org: string; email: string; role: string }) => {
      const password = await passwordFromStdin('create');
      const user = await withDb((db, clock) =>
        createUser(
          db,
          { organisationSlug: options.org, email: options.email, role: options.role, password },
          clock.nowMs(),
        ),
      );
      out(`Created ${user.role} ${user.email} (${user.id}).`);
    });

  users
    .command('list')
    .description('List the staff accounts of an organisation')
    .requiredOption('--org <slug>', 'organisation slug')
    .option('--json', 'print an array of {"id","email","role","created_at","disabled_at"}')
    .action(async (options: { org: string; json?: boolean }) => {
      const list = await withDb((db) => listUsers(db, options.org));
      if (options.json) {
        out(
          JSON.stringify(
            list.map((u) => ({
              id: u.id,
              email: u.email,
              role: u.role,
              created_at: formatTime(u.createdAt),
              disabled_at: u.disabledAt === null ? null : formatTime(u.disabledAt),
            })),
          ),
        );
        return;
      }
      if (list.length === 0) out('No users.');
      for (const u of list) {
        const state = u.disabledAt === null ? 'active' : `disabled ${formatTime(u.disabledAt)}`;
        out(`${u.email}  ${u.role.padEnd(5)}  ${state}  created ${formatTime(u.createdAt)}`);
      }
    });

  users
    .command('set-password')
    .description(
      'Give an account a new password, read from stdin (one line); its console sessions and the apps it connected end at once',
    )
    .requiredOption('--org <slug>', 'organisation slug')
    .requiredOption('--email <email>', 'the account whose password changes')
    .action(async (options: { org: string; email: string }) => {
      const password = await passwordFromStdin('set-password');
      const user = await withDb((db, clock) =>
        setPassword(db, { organisationSlug: options.org, email: options.email, password }, clock.nowMs()),
      );
      out(
        `Changed the password of ${user.email}; its console sessions and the apps it connected were ended.`,
      );
    });

  users
    .command('disable')
    .description('Disable a staff account; its sessions end at once')
    .requiredOption('--org <slug>', 'organisation slug')
    .requiredOption('--email <email>', 'the account to disable')
    .action(async (options: { org: string; email: string }) => {
      await withDb((db, clock) => disableUser(db, options.org, options.email, clock.nowMs()));
      out(`Disabled ${options.email.trim().toLowerCase()}.`);
    });
}

/** The password piped to `users create` or `users set-password`: one line, not blank. */
async function passwordFromStdin(command: string): Promise<string> {
  // Arguments show in `ps` and shell history; stdin does not.
  const password = (await readStdin()).replace(/\r?\n$/, '');
  if (password.trim() === '')
    throw new CommandError(
      `Give the password on stdin, e.g. \`read -s pw; echo "$pw" | booking users ${command} ...\`.`,
    );
  // One line: the console's sign-in field cannot type a line break, so such an account could never sign in.
  if (/[\r\n]/.test(password)) throw new CommandError('The password is one line; it holds a line break.');
  return password;
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new CommandError('The password is read from stdin: pipe it in.');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
