import { Command, InvalidArgumentError } from 'commander';
import { type Clock, systemClock } from './app/clock.ts';
import { readConfig } from './app/config.ts';
import type { AppDeps } from './app/deps.ts';
import { addBookingCommands } from './cli/booking-commands.ts';
import { addCalendarsCommands } from './cli/calendars-commands.ts';
import {
  importCatalogueFile,
  installDemo,
  printDemoKey,
  printImportReport,
} from './cli/catalogue-commands.ts';
import { addKeysCommands } from './cli/keys-commands.ts';
import { addMcpCommand, runProgram } from './cli/mcp-program.ts';
import { addMessagesCommands } from './cli/messages-commands.ts';
import { addOperationsCommands } from './cli/operations-commands.ts';
import { addOutboxCommands } from './cli/outbox-commands.ts';
import { out } from './cli/output.ts';
import { postgresTrouble } from './cli/postgres-trouble.ts';
import { addUsersCommands } from './cli/users-commands.ts';
import { addWebhooksCommands } from './cli/webhooks-commands.ts';
import { type DatabaseOptions, type Db, sqliteFileOf } from './data/database.ts';
import { isDatabaseEmpty } from './data/organisation-repository.ts';
import { openRuntime } from './runtime.ts';

/**
 * The `booking` command: the operator's console for what the REST contract leaves to staff. Every
 * command goes through the same service layer as the API. The two long-running faces, `serve` (the
 * HTTP server) and `mcp` (stdio), are loaded only by the command that runs them: every other command
 * starts without Fastify or the MCP SDK, and a server without the stdio entry.
 */
async function withDb<T>(work: (db: Db, clock: Clock, deps: AppDeps) => Promise<T>): Promise<T> {
  return onDatabase(work, { mustExist: true });
}

/**
 * withDb for the commands that set a database up (migrate, import, demo; serve opens its own): a
 * SQLite file that is not there yet is made. Every other command refuses a path with no file ("There is
 * no booking database at ..."), so that a typo in DATABASE_URL makes no new, empty database.
 */
async function withNewOrExistingDb<T>(work: (db: Db, clock: Clock, deps: AppDeps) => Promise<T>): Promise<T> {
  return onDatabase(work, {});
}

async function onDatabase<T>(
  work: (db: Db, clock: Clock, deps: AppDeps) => Promise<T>,
  options: DatabaseOptions,
): Promise<T> {
  const runtime = await openRuntime(readConfig(), systemClock, options);
  try {
    return await work(runtime.deps.db, runtime.deps.clock, runtime.deps);
  } finally {
    await runtime.close();
  }
}

function portNumber(value: string): string {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('a port is 0..65535');
  return value;
}

const program = new Command('booking')
  .description(
    'booking, the operator command line of the booking engine for salons and shops: serve its REST API, ' +
      'MCP tools, hosted pages and staff console, and manage its keys, bookings, messages and data.',
  )
  .showHelpAfterError()
  .addHelpText(
    'after',
    '\nConfiguration comes from the environment: DATABASE_URL (default sqlite:db/booking.sqlite), PORT, HOST,\n' +
      'TLS_CERT/TLS_KEY, TRUST_PROXY, ALLOWED_HOSTS, PUBLIC_BASE_URL, PAYMENT_PROVIDER, BOOKING_SECRET,\n' +
      'LOG_LEVEL, SMTP_URL/MAIL_FROM, TWILIO_ACCOUNT_SID/TWILIO_AUTH_TOKEN/TWILIO_FROM/TWILIO_API_BASE and\n' +
      'more: .env.example lists every setting with its default, docs/operating.md says what each does.',
  );

program
  .command('serve')
  .description(
    'Serve REST under /v1, MCP at /mcp and /sse, the hosted pages and the staff console, all on one port; ' +
      'prints "listening on <url>" when ready',
  )
  .option('--port <port>', 'port to listen on (default $PORT or 8080)', portNumber)
  .option('--host <host>', 'address to bind (default $HOST or 127.0.0.1)')
  .option(
    '--demo',
    'on an empty database, import the demo catalogue and print a read_write key first; deposits in the local test mode',
  )
  .action(async (options: { port?: string; host?: string; demo?: boolean }) => {
    const config = readConfig();
    if (options.port !== undefined) config.port = Number(options.port);
    if (options.host !== undefined) config.host = options.host;
    const { serve } = await import('./cli/serve-command.ts');
    await serve(config, { demo: options.demo ?? false });
  });

program
  .command('migrate')
  .description('Bring the database schema up to date')
  .action(async () => {
    await withNewOrExistingDb(async () => undefined);
    out('Database schema is up to date.');
  });

program
  .command('import')
  .description('Import (idempotently upsert) a catalogue file; an invalid file changes nothing')
  .argument('<catalogue.json>', 'catalogue file (see docs/catalogue.md)')
  .action(async (file: string) => {
    printImportReport(await withNewOrExistingDb((db, clock) => importCatalogueFile(db, file, clock)));
  });

program
  .command('demo')
  .description('Import the demo catalogue and print a read_write API key')
  .action(async () => {
    await withNewOrExistingDb(async (db, clock) => {
      const empty = await isDatabaseEmpty(db);
      const { report, key } = await installDemo(db, clock);
      if (!empty) out('(The demo catalogue was re-imported over existing data.)');
      printDemoKey(report.organisation.slug, key);
    });
  });

addMcpCommand(program);
addKeysCommands(program, withDb);
addBookingCommands(program, withDb);
addMessagesCommands(program, withDb);
addOutboxCommands(program, withDb);
addUsersCommands(program, withDb);
addWebhooksCommands(program, withDb);
addCalendarsCommands(program, withDb);
addOperationsCommands(program);

/**
 * Runs the command `argv` names (process.argv's shape). Loading this module runs nothing: bin/booking.js
 * loads it (bundled) and then calls this.
 */
export async function runCli(argv: string[]): Promise<void> {
  await runProgram(
    program,
    argv,
    // DATABASE_URL as it is set (a PostgreSQL one always is): readConfig would throw again for a setting
    // that is the error being said (PORT=abc, LOG_LEVEL=loud).
    (error) => unusableDatabaseFile(error) ?? postgresTrouble(error, process.env.DATABASE_URL?.trim()),
  );
}

/**
 * SQLite's refusal of DATABASE_URL's file ("file is not a database", "unable to open database file")
 * names no file: said with the file, so that an operator sees which setting points where.
 */
function unusableDatabaseFile(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'SQLITE_NOTADB' && code !== 'SQLITE_CANTOPEN') return null;
  let file: string | null;
  try {
    file = sqliteFileOf(readConfig().databaseUrl);
  } catch {
    return null;
  }
  if (file === null) return null;
  return code === 'SQLITE_NOTADB'
    ? `${file} (DATABASE_URL) is not a SQLite database.`
    : `${file} (DATABASE_URL) cannot be opened as a SQLite database: ${(error as Error).message}.`;
}
