import type { Command } from 'commander';
import { systemClock } from '../app/clock.ts';
import { readConfig } from '../app/config.ts';
import { BackupError, type BackupOutcome } from '../data/backup-files.ts';
import { isPostgresUrl, openDatabase, sqliteFileOf } from '../data/database.ts';
import { checkIntegrity, type IntegrityReport } from '../data/integrity-check.ts';
import { pendingMigrations } from '../data/migrate.ts';
import { backupPostgres, restorePostgres } from '../data/postgres-backup.ts';
import { backupSqliteFile, restoreSqliteFile } from '../data/sqlite-backup.ts';
import { CommandError, out } from './output.ts';

/** `booking backup`, `booking restore` and `booking check`: keeping the data safe and proving it is. */
export function addOperationsCommands(program: Command): void {
  program
    .command('backup')
    .description(
      'Copy the database to <file> while the server keeps serving (SQLite online backup, or pg_dump)',
    )
    .argument(
      '<file>',
      'a new file for the backup, readable by its owner only (an existing file is never overwritten)',
    )
    .action(async (file: string) => {
      const url = readConfig().databaseUrl;
      const outcome = await withBackupErrors(() =>
        isPostgresUrl(url) ? backupPostgres(url, file) : backupSqliteFile(configuredSqliteFile(url), file),
      );
      out(`Backed up to ${outcome.file}: ${describe(outcome)}, ${outcome.checked}.`);
    });

  program
    .command('restore')
    .description('Replace the database with a backup; refused while a server or another command uses it')
    .argument('<file>', 'a file written by `booking backup`')
    .action(async (file: string) => {
      const url = readConfig().databaseUrl;
      const outcome = await withBackupErrors(() =>
        isPostgresUrl(url) ? restorePostgres(file, url) : restoreSqliteFile(file, configuredSqliteFile(url)),
      );
      out(`Restored ${outcome.file} from ${file}: ${describe(outcome)}.`);
      out('Start the server again; it applies any newer migrations first.');
    });

  program
    .command('check')
    .description('Check every invariant of the stored data (no double booking, whole bookings, event log)')
    .option('--json', 'print the report as JSON')
    .action(async (options: { json?: boolean }) => {
      const report = await checkConfiguredDatabase();
      if (options.json) {
        out(JSON.stringify(report, null, 2));
      } else {
        out(`${report.bookings} bookings, ${report.liveBookings} live.`);
        for (const finding of report.findings) {
          const verdict = finding.violations === 0 ? 'ok  ' : 'FAIL';
          out(`${verdict} ${finding.check}: ${finding.description}`);
          for (const example of finding.examples) out(`       ${example}`);
        }
      }
      if (!report.ok) throw new CommandError('The database breaks the invariants listed above.');
    });
}

/**
 * Opens the database read-only and as it is, so that checking a backup file leaves it byte for byte
 * unchanged: no migrations, no journal-mode switch. A schema older than this version is refused
 * rather than misjudged, and a path with no file there is named, not created.
 */
async function checkConfiguredDatabase(): Promise<IntegrityReport> {
  // A file that is not there is said so (SQLite's read-only open would only say it cannot open one).
  const database = openDatabase(readConfig().databaseUrl, { readonly: true, mustExist: true });
  try {
    const pending = await pendingMigrations(database.db);
    if (pending === null) throw new CommandError(`${database.description} is not a booking database.`);
    if (pending.length > 0) {
      throw new CommandError(
        `${database.description} lacks ${pending.length} migration(s) of this version; run booking migrate first.`,
      );
    }
    return await checkIntegrity(database.db, systemClock.nowMs());
  } finally {
    await database.close();
  }
}

function configuredSqliteFile(url: string): string {
  const file = sqliteFileOf(url);
  if (file === null) throw new CommandError('An in-memory database has nothing to back up or restore.');
  return file;
}

async function withBackupErrors<T extends BackupOutcome>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof BackupError) throw new CommandError(error.message);
    throw error;
  }
}

function describe(outcome: BackupOutcome): string {
  return `${outcome.contents}, ${(outcome.bytes / 1024).toFixed(0)} KiB`;
}
