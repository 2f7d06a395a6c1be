import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/data/database.ts';
import { smallCatalogue } from '../helpers/catalogue-fixtures.ts';
import { outcomeOf, REPO_ROOT, runCli, runCliAsync, startServer } from '../helpers/cli.ts';
import { freshDatabasePerTest, onPostgres } from '../helpers/temp-database.ts';

const EXAMPLE = path.resolve('..', 'shared', 'catalogue-example.json');

const fresh = freshDatabasePerTest('booking-cli-');

const demoKeyIn = (text: string) => /(bk_[0-9A-Za-z]{40})/.exec(text)?.[1];

describe('booking (the operator command)', () => {
  // Help touches no database, so the sqlite project's run covers it.
  it.skipIf(onPostgres)(
    'has --help on every command, and the top-level help lists them all',
    async () => {
      const commands = [
        ['serve'],
        ['migrate'],
        ['import'],
        ['demo'],
        ['mcp'],
        ['keys'],
        ['keys', 'create'],
        ['keys', 'list'],
        ['keys', 'revoke'],
        ['bookings'],
        ['messages'],
        ['messages', 'list'],
        ['messages', 'done'],
        ['users'],
        ['users', 'create'],
        ['users', 'list'],
        ['users', 'disable'],
        ['outbox'],
        ['outbox', 'list'],
        ['outbox', 'deliver'],
        ['webhooks'],
        ['webhooks', 'create'],
        ['webhooks', 'list'],
        ['webhooks', 'delete'],
        ['calendars'],
        ['calendars', 'create'],
        ['calendars', 'list'],
        ['calendars', 'revoke'],
        ['backup'],
        ['restore'],
        ['check'],
      ];
      // Four processes at a time: each loads the whole command (and its providers' packages); two dozen
      // at once only measure the machine's cores against the test's time limit.
      const runs = [[], ...commands];
      const results: Awaited<ReturnType<typeof runCliAsync>>[] = [];
      for (let i = 0; i < runs.length; i += 4) {
        results.push(
          ...(await Promise.all(
            runs.slice(i, i + 4).map((args) => runCliAsync([...args, '--help'], fresh.env)),
          )),
        );
      }
      const [top, ...each] = results;
      expect(top!.status).toBe(0);
      const listed = [...top!.stdout.matchAll(/^ {2}([a-z]+)\b/gm)]
        .map((m) => m[1])
        .filter((c) => c !== 'help');
      expect(listed.sort()).toEqual([...new Set(commands.map((c) => c[0]))].sort());
      for (const [i, result] of each.entries()) {
        expect(result.status, commands[i]!.join(' ')).toBe(0);
        expect(result.stdout).toMatch(/Usage: booking/);
      }
    },
    120_000,
  );

  // docs/cli.md sends readers to Operating for configuration; the help's short list must too, since it
  // names only the common settings (STRIPE_*, WEBHOOK_*, CALENDAR_*... are there alone).
  it.skipIf(onPostgres)('says in its top-level help where every setting is described', () => {
    const help = runCli(['--help'], fresh.env);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('docs/operating.md');
    expect(help.stdout).toContain('.env.example');
  });

  // design.md calls `booking` the operator CLI and README "the operator command line"; the console is
  // the staff console at /console, a web page, not this command.
  it.skipIf(onPostgres)('calls itself the operator command line in its top-level help', () => {
    const help = runCli(['--help'], fresh.env);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('operator command line');
    expect(help.stdout).not.toContain('operator console');
  });

  // design.md section 4: serve answers REST, MCP Streamable HTTP and legacy SSE on one port.
  it.skipIf(onPostgres)("says in serve's help that it serves MCP at /mcp and /sse beside REST", () => {
    for (const args of [['--help'], ['serve', '--help']]) {
      const help = runCli(args, fresh.env);
      expect(help.status).toBe(0);
      expect(help.stdout.replace(/\s+/g, ' ')).toContain('Serve REST under /v1, MCP at /mcp and /sse');
    }
  });

  // Two lists of "messages": an operator must tell from the help which one is which.
  it.skipIf(onPostgres)("says in each list's help whose messages it lists", () => {
    const outbox = runCli(['outbox', 'list', '--help'], fresh.env);
    const messages = runCli(['messages', 'list', '--help'], fresh.env);
    expect(outbox.stdout).toContain('List the messages to customers of an organisation');
    expect(messages.stdout).toContain('List the messages callers left for the staff of an organisation');
  });

  // Nine CLI processes one after another: under load on PostgreSQL they took more than the minute.
  it('migrates, imports idempotently and manages keys', () => {
    expect(runCli(['migrate'], fresh.env)).toMatchObject({
      status: 0,
      stdout: expect.stringContaining('up to date'),
    });
    const first = runCli(['import', 'db/demo-catalogue.json'], fresh.env);
    expect(first.status).toBe(0);
    expect(first.stdout).toContain('services: 4 created, 0 updated, 0 unchanged');
    const again = runCli(['import', 'db/demo-catalogue.json'], fresh.env);
    expect(again.stdout).toContain('services: 0 created, 0 updated, 4 unchanged');

    const created = runCli(
      [
        'keys',
        'create',
        '--org',
        'northside-hair',
        '--label',
        'Voice agent',
        '--scope',
        'read',
        '--rate-limit',
        '300',
        '--json',
      ],
      fresh.env,
    );
    expect(created.status).toBe(0);
    const key = JSON.parse(created.stdout);
    expect(Object.keys(key).sort()).toEqual(['created_at', 'id', 'key', 'label', 'scope']);
    expect(key).toMatchObject({
      label: 'Voice agent',
      scope: 'read',
      key: expect.stringMatching(/^bk_[0-9A-Za-z]{40}$/),
    });
    expect(key.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    const listed = runCli(['keys', 'list', '--org', 'northside-hair'], fresh.env);
    expect(listed.stdout).toContain(key.id);
    expect(listed.stdout).toContain('Voice agent');
    expect(listed.stdout).not.toContain(key.key);

    expect(runCli(['keys', 'revoke', key.id], fresh.env).status).toBe(0);
    expect(runCli(['keys', 'list', '--org', 'northside-hair'], fresh.env).stdout).toMatch(/revoked/);
    expect(runCli(['keys', 'revoke', '00000000-0000-4000-8000-000000000000'], fresh.env).status).toBe(1);
  }, 180_000);

  // An organisation line that said "updated" on every re-import told the operator nothing; busy
  // calendars have no count line, so that line alone says whether one was added or removed.
  it('says the organisation is unchanged when a re-import changed nothing, busy calendars included', () => {
    const organisationLine = (stdout: string) =>
      /^organisation northside-hair \([0-9a-f-]+\) (\w+)$/m.exec(stdout)?.[1];
    const demo = JSON.parse(readFileSync('db/demo-catalogue.json', 'utf8'));
    const importing = (catalogue: unknown) => {
      const file = path.join(fresh.dir, 'catalogue.json');
      writeFileSync(file, JSON.stringify(catalogue));
      const result = runCli(['import', file], fresh.env);
      expect(result.status, result.stderr).toBe(0);
      return result.stdout;
    };
    expect(organisationLine(importing(demo))).toBe('created');
    const again = importing(demo);
    expect(organisationLine(again)).toBe('unchanged');
    expect(again).toContain('services: 0 created, 0 updated, 4 unchanged');

    demo.staff[0].busy_calendars = ['https://calendar.example.com/busy.ics'];
    const withCalendar = importing(demo);
    expect(organisationLine(withCalendar)).toBe('updated');
    // A calendar added is an edit of its staff member, counted as one.
    expect(withCalendar).toMatch(/staff: 0 created, 1 updated, \d+ unchanged/);
    expect(organisationLine(importing(demo))).toBe('unchanged');
    demo.staff[0].busy_calendars = [];
    expect(organisationLine(importing(demo))).toBe('updated');

    demo.organisation.name = `${demo.organisation.name} & Co`;
    expect(organisationLine(importing(demo))).toBe('updated');
  });

  // Prices are amounts of the organisation's currency: a new currency left every service "unchanged"
  // though each price in the file differed from the one stored.
  it('counts every service updated when the currency changes, and only then', () => {
    const importing = (text: string) => {
      const file = path.join(fresh.dir, 'catalogue.json');
      writeFileSync(file, text);
      const result = runCli(['import', file], fresh.env);
      expect(result.status, result.stderr).toBe(0);
      return result.stdout;
    };
    const inPounds = JSON.stringify(smallCatalogue());
    importing(inPounds);
    const inEuros = importing(inPounds.replaceAll('"GBP"', '"EUR"'));
    expect(inEuros).toMatch(/^organisation acme-hair \([0-9a-f-]+\) updated$/m);
    expect(inEuros).toContain('services: 0 created, 3 updated, 0 unchanged');
    expect(inEuros).toContain('locations: 0 created, 0 updated, 3 unchanged');
    expect(importing(inPounds.replaceAll('"GBP"', '"EUR"'))).toContain(
      'services: 0 created, 0 updated, 3 unchanged',
    );
  });

  it('refuses a database a newer version migrated, saying so', async () => {
    expect(runCli(['migrate'], fresh.env).status).toBe(0);
    const handle = openDatabase(fresh.env.DATABASE_URL!);
    try {
      await sql`INSERT INTO kysely_migration (name, timestamp) VALUES ('9999-01-01-0001-future', '2099-01-01')`.execute(
        handle.db,
      );
    } finally {
      await handle.close();
    }
    const result = runCli(['migrate'], fresh.env);
    expect(result.status).toBe(1);
    expect(result.stderr.trim()).toBe(
      'error: The database was migrated by a newer version of booking (it has the migration 9999-01-01-0001-future this version lacks); run that version, or restore a backup this version wrote.',
    );
  });

  // As `messages done`, `webhooks delete` and `calendars revoke` take them: an id is a UUID, whatever
  // the case it was copied in (a spreadsheet, a ticket that capitalised it).
  it('revokes a key by its id in capitals or with spaces around it', () => {
    runCli(['import', 'db/demo-catalogue.json'], fresh.env);
    const created = runCli(
      ['keys', 'create', '--org', 'northside-hair', '--label', 'Till', '--scope', 'read', '--json'],
      fresh.env,
    );
    const { id } = JSON.parse(created.stdout) as { id: string };
    const revoked = runCli(['keys', 'revoke', ` ${id.toUpperCase()} `], fresh.env);
    expect(revoked.stderr).toBe('');
    expect(revoked).toMatchObject({ status: 0, stdout: `Revoked key ${id}.\n` });
    const listed = runCli(['keys', 'list', '--org', 'northside-hair', '--json'], fresh.env);
    const revokedAt = (JSON.parse(listed.stdout) as { revoked_at: string }[])[0]!.revoked_at;
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({ id, revoked_at: expect.stringMatching(/Z$/) }),
    ]);
    // Revoked again (an old id from a ticket): said as it is, not as a revocation made now.
    const again = runCli(['keys', 'revoke', id], fresh.env);
    expect(again).toMatchObject({
      status: 0,
      stdout: `Key ${id} was already revoked at ${revokedAt}.\n`,
      stderr: '',
    });
  });

  it('refuses bad key options and unknown organisations', () => {
    runCli(['import', 'db/demo-catalogue.json'], fresh.env);
    const badScope = runCli(
      ['keys', 'create', '--org', 'northside-hair', '--label', 'x', '--scope', 'admin'],
      fresh.env,
    );
    expect(badScope.status).toBe(1);
    expect(badScope.stderr).toMatch(/read or read_write/);
    const noOrg = runCli(['keys', 'create', '--org', 'nobody', '--label', 'x', '--scope', 'read'], fresh.env);
    expect(noOrg.status).toBe(1);
    expect(noOrg.stderr).toMatch(/No organisation/);
    // Digits only, and a bound the counters and headers carry exactly (1e20 was stored as a real).
    for (const rate of ['1e3', '0x10', '-1', '1.5', '1000001', '100000000000000000000']) {
      const refused = runCli(
        [
          'keys',
          'create',
          '--org',
          'northside-hair',
          '--label',
          'x',
          '--scope',
          'read',
          '--rate-limit',
          rate,
        ],
        fresh.env,
      );
      expect(refused.status, rate).toBe(1);
      expect(refused.stderr, rate).toContain(
        '--rate-limit must be a whole number of requests per minute, from 1 to 1000000.',
      );
    }
  });

  // Settings are read before any database is opened, so the sqlite project's run covers them.
  it.skipIf(onPostgres)('names a malformed URL setting in one line, never echoing its password', async () => {
    const cases: [Record<string, string>, string][] = [
      [
        { SMTP_URL: 'smtp://mailer:hunter2-secret@mail.example:notaport', MAIL_FROM: 'a@b.example' },
        'error: SMTP_URL is not a valid URL, got "smtp://mailer:***@mail.example:notaport"',
      ],
      [
        { PUBLIC_BASE_URL: 'https://admin:hunter2-secret@book.example' },
        'error: PUBLIC_BASE_URL must be an http(s) URL without query, fragment or credentials, got "https://admin:***@book.example"',
      ],
      [
        {
          PAYMENT_PROVIDER: 'stripe',
          STRIPE_SECRET_KEY: 'sk_test_x',
          STRIPE_WEBHOOK_SECRET: 'whsec_x',
          STRIPE_API_BASE: 'https://proxy:hunter2-secret@stripe.example',
        },
        'error: STRIPE_API_BASE must be an http(s) origin without path, query or credentials, got "https://proxy:***@stripe.example"',
      ],
    ];
    const runs = await Promise.all(
      cases.map(([env]) => runCliAsync(['outbox', 'deliver'], { ...fresh.env, ...env })),
    );
    for (const [i, run] of runs.entries()) {
      const [env, said] = cases[i]!;
      expect(run.status, JSON.stringify(env)).toBe(1);
      expect(run.stderr.split('\n')[0], JSON.stringify(env)).toContain(said);
      expect(run.stderr.trimEnd().split('\n'), run.stderr).toHaveLength(1);
      expect(run.stderr + run.stdout).not.toContain('hunter2');
    }
  });

  // pino's own refusal ("default level:loud must be included in custom levels") came from serve and mcp
  // only; every other command ran on as if the setting were fine.
  it.skipIf(onPostgres)('refuses an unknown LOG_LEVEL by name, on every command', async () => {
    const [serve, list] = await Promise.all([
      runCliAsync(['serve', '--port', '0'], { ...fresh.env, LOG_LEVEL: 'loud' }),
      runCliAsync(['outbox', 'deliver'], { ...fresh.env, LOG_LEVEL: 'loud' }),
    ]);
    for (const run of [serve, list]) {
      expect(run.status, run.stderr).toBe(1);
      expect(run.stderr).toBe(
        'error: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud".\n',
      );
    }
    // outbox deliver needs a database there (only the commands that set one up make it).
    expect((await runCliAsync(['migrate'], fresh.env)).status).toBe(0);
    const upperCase = await runCliAsync(['outbox', 'deliver'], { ...fresh.env, LOG_LEVEL: 'WARN' });
    expect(upperCase.status, upperCase.stderr).toBe(0);
  });

  it.skipIf(onPostgres)('names a DATABASE_URL that is no URL, without echoing its password', async () => {
    const runs = await Promise.all(
      [
        'postgres://booking:hunter2@db host/booking',
        'postgres://booking:hunter2@db.example:port/booking',
      ].map((url) =>
        runCliAsync(['keys', 'list', '--org', 'northside-hair'], { ...fresh.env, DATABASE_URL: url }),
      ),
    );
    for (const run of runs) {
      expect(run.status, run.stderr).toBe(1);
      expect(run.stderr).toBe(
        'error: DATABASE_URL is not a valid URL: postgres://user:password@host:5432/database, with a port of digits and the user name and password percent-encoded.\n',
      );
    }
  });

  // The driver's own words ("connect ECONNREFUSED 127.0.0.1:5999", `database "x" does not exist`) named
  // neither the setting nor what to do; nor did serve's or mcp's.
  it('names a PostgreSQL DATABASE_URL it cannot use, and what to do, without its password', async () => {
    const closed = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const refused = { DATABASE_URL: `postgres://booking:hunter2@127.0.0.1:${closed}/booking` };
    const runs = await Promise.all([
      runCliAsync(['keys', 'list', '--org', 'northside-hair'], refused),
      runCliAsync(['migrate'], refused),
      runCliAsync(['serve', '--port', '0'], refused),
      outcomeOf(
        spawn(process.execPath, [path.join(REPO_ROOT, 'bin/booking.js'), 'mcp'], {
          cwd: REPO_ROOT,
          env: { ...process.env, ...refused, BOOKING_API_KEY: 'bk_x', LOG_LEVEL: 'error' },
          stdio: ['ignore', 'pipe', 'pipe'],
        }),
      ),
    ]);
    for (const run of runs) {
      expect(run.status, run.stderr).toBe(1);
      expect(run.stderr).toBe(
        `error: Cannot reach PostgreSQL at 127.0.0.1:${closed} (DATABASE_URL): the connection was refused. Start PostgreSQL there, or correct DATABASE_URL.\n`,
      );
    }
    if (!onPostgres) return;
    // A server that answers, but has no such database, or no such user.
    const url = new URL(fresh.env.DATABASE_URL!);
    const absent = new URL(url);
    absent.pathname = '/booking_test_absent';
    const stranger = new URL(url);
    stranger.username = 'nobody_here';
    stranger.password = 'hunter2';
    const [noDatabase, noUser] = await Promise.all([
      runCliAsync(['keys', 'list', '--org', 'northside-hair'], { DATABASE_URL: absent.href }),
      runCliAsync(['keys', 'list', '--org', 'northside-hair'], { DATABASE_URL: stranger.href }),
    ]);
    const where = `PostgreSQL at ${url.hostname}:${url.port || 5432} (DATABASE_URL)`;
    expect(noDatabase.stderr).toBe(
      `error: ${where} has no database "booking_test_absent". Create it (createdb booking_test_absent), or correct the database name in DATABASE_URL.\n`,
    );
    expect(noUser.stderr).toMatch(
      new RegExp(
        `^error: ${where.replace(/[.()]/g, '\\$&')} refused user "nobody_here": .*\\. Check the user and password in DATABASE_URL\\.\n$`,
      ),
    );
    for (const run of [noDatabase, noUser]) {
      expect(run.status).toBe(1);
      expect(run.stderr + run.stdout).not.toContain('hunter2');
    }
  });

  // SQLite's own words ("file is not a database", "unable to open database file") name no file: an
  // operator whose DATABASE_URL points at the wrong file or a folder could not tell which.
  it.skipIf(onPostgres)(
    'names a DATABASE_URL file that is no SQLite database, or a folder, leaving it as it was',
    async () => {
      const notes = path.join(fresh.dir, 'notes.txt');
      writeFileSync(notes, 'not a database, but a long enough text file: '.repeat(20));
      const before = readFileSync(notes);
      const runs = await Promise.all([
        runCliAsync(['keys', 'list', '--org', 'northside-hair'], { DATABASE_URL: `sqlite:${notes}` }),
        runCliAsync(['check'], { DATABASE_URL: `sqlite:${notes}` }),
        runCliAsync(['migrate'], { DATABASE_URL: `sqlite:${fresh.dir}` }),
      ]);
      const [list, check, folder] = runs;
      for (const run of [list, check]) {
        expect(run!.status, run!.stderr).toBe(1);
        expect(run!.stderr).toBe(`error: ${notes} (DATABASE_URL) is not a SQLite database.\n`);
      }
      expect(folder!.status, folder!.stderr).toBe(1);
      expect(folder!.stderr).toBe(
        `error: ${fresh.dir} (DATABASE_URL) cannot be opened as a SQLite database: unable to open database file.\n`,
      );
      expect(readFileSync(notes).equals(before)).toBe(true);
    },
  );

  // mkdir's own words ("EEXIST: file already exists, mkdir '/srv/booking/db'") named neither the setting
  // nor which part of the path was a file.
  it.skipIf(onPostgres)(
    'names the file in the way of a DATABASE_URL path the commands that set one up would make',
    async () => {
      const notes = path.join(fresh.dir, 'notes.txt');
      writeFileSync(notes, 'a file where a folder was meant');
      const runs = await Promise.all(
        [['migrate'], ['import', 'db/demo-catalogue.json'], ['serve', '--port', '0']].map((args) =>
          runCliAsync(args, { DATABASE_URL: `sqlite:${notes}/db/booking.sqlite` }),
        ),
      );
      for (const run of runs) {
        expect(run.status, run.stderr).toBe(1);
        expect(run.stderr).toBe(
          `error: Cannot make the database file ${notes}/db/booking.sqlite (DATABASE_URL): ${notes} is a file, not a folder.\n`,
        );
      }
      expect(readFileSync(notes, 'utf8')).toBe('a file where a folder was meant');
    },
  );

  // A typo in DATABASE_URL's path made a new, empty database (and its folder) there: the command then said
  // the organisation did not exist, or listed nothing, as if the data were gone. Only the commands that
  // set a database up (migrate, import, demo, serve; restore writes it) may make one.
  it.skipIf(onPostgres)(
    'says there is no database at a path with no file, on every command but those that set one up, making none',
    async () => {
      const missing = path.join(fresh.dir, 'typo', 'bookng.sqlite');
      const env = { DATABASE_URL: `sqlite:${missing}` };
      const commands = [
        ['keys', 'list', '--org', 'northside-hair'],
        ['users', 'list', '--org', 'northside-hair'],
        ['bookings', 'NHC-7K3M9P', '--org', 'northside-hair'],
        ['messages', 'list', '--org', 'northside-hair'],
        ['outbox', 'list', '--org', 'northside-hair'],
        ['outbox', 'deliver'],
        ['webhooks', 'list', '--org', 'northside-hair'],
        ['calendars', 'list', '--org', 'northside-hair'],
      ];
      // Four processes at a time, as the help test runs them.
      for (let i = 0; i < commands.length; i += 4) {
        const runs = await Promise.all(commands.slice(i, i + 4).map((args) => runCliAsync(args, env)));
        for (const [j, run] of runs.entries()) {
          const command = commands[i + j]!.join(' ');
          expect(run.status, command).toBe(1);
          expect(run.stdout, command).toBe('');
          expect(run.stderr, command).toBe(
            `error: There is no booking database at ${missing}. Check DATABASE_URL, or make one there with \`booking migrate\`.\n`,
          );
        }
      }
      expect(existsSync(path.dirname(missing))).toBe(false);

      const migrated = await runCliAsync(['migrate'], env);
      expect(migrated.status, migrated.stderr).toBe(0);
      expect(existsSync(missing)).toBe(true);
    },
    120_000,
  );

  // On PostgreSQL, only the schema the engine's tables go in tells another application's database: a
  // shared database's other schemas (an extension's, another team's) do not make it one.
  it.runIf(onPostgres)(
    "tells another application's PostgreSQL database by the tables of its own schema, not of others",
    async () => {
      const env = fresh.env;
      const run = async (statement: string) => {
        const handle = openDatabase(env.DATABASE_URL!);
        try {
          await sql.raw(statement).execute(handle.db);
        } finally {
          await handle.close();
        }
      };
      await run(
        'CREATE SCHEMA elsewhere; CREATE TABLE elsewhere.notes (body TEXT); CREATE TABLE notes (body TEXT)',
      );
      const refused = await runCliAsync(['keys', 'list', '--org', 'northside-hair'], env);
      expect(refused.stderr).toContain('holds tables of another kind, not a booking database');
      await run('DROP TABLE public.notes');
      const taken = await runCliAsync(['keys', 'list', '--org', 'northside-hair'], env);
      expect(taken.stderr).toContain('No organisation has the slug');
    },
    120_000,
  );

  // DATABASE_URL set to another application's SQLite file (a path one letter off, a neighbour's
  // database) was taken for a booking database not migrated yet: `keys list` added the engine's tables
  // to it and said the organisation did not exist.
  it.skipIf(onPostgres)(
    "refuses another application's database on every command but those that set one up, changing nothing",
    async () => {
      const foreign = path.join(fresh.dir, 'notes.sqlite');
      const made = openDatabase(`sqlite:${foreign}`);
      await sql`CREATE TABLE notes (body TEXT)`.execute(made.db);
      await made.close();
      const env = { DATABASE_URL: `sqlite:${foreign}` };
      const commands = [
        ['keys', 'list', '--org', 'northside-hair'],
        ['bookings', 'NHC-7K3M9P'],
        ['outbox', 'deliver'],
      ];
      const runs = await Promise.all(commands.map((args) => runCliAsync(args, env)));
      for (const [i, run] of runs.entries()) {
        const command = commands[i]!.join(' ');
        expect(run.status, command).toBe(1);
        expect(run.stdout, command).toBe('');
        expect(run.stderr, command).toBe(
          `error: SQLite ${foreign} (DATABASE_URL) holds tables of another kind, not a booking database. Check DATABASE_URL (\`booking migrate\` would add the booking tables to it).\n`,
        );
      }
      const after = openDatabase(`sqlite:${foreign}`);
      try {
        const tables = await sql<{
          name: string;
        }>`SELECT name FROM sqlite_master WHERE type = 'table'`.execute(after.db);
        expect(tables.rows.map((row) => row.name)).toEqual(['notes']);
      } finally {
        await after.close();
      }
    },
    120_000,
  );

  // A negative size made a pool that never hands out a connection: every command waited for ever.
  it.skipIf(onPostgres)(
    'refuses a PG_POOL_SIZE that is no size, before waiting on the database',
    async () => {
      const runs = await Promise.all(
        ['-1', '0', 'ten', '2.5'].map((size) =>
          runCliAsync(['keys', 'list', '--org', 'northside-hair'], {
            ...fresh.env,
            DATABASE_URL: 'postgres://booking@127.0.0.1:9/booking',
            PG_POOL_SIZE: size,
          }),
        ),
      );
      for (const [i, run] of runs.entries()) {
        expect(run.status, run.stderr).toBe(1);
        expect(run.stderr).toBe(
          `error: PG_POOL_SIZE must be a whole number from 1 to 1000, got "${['-1', '0', 'ten', '2.5'][i]}".\n`,
        );
      }
    },
  );

  it.skipIf(onPostgres)('refuses a TRUST_PROXY entry that is no address by name', async () => {
    const serve = await runCliAsync(['serve', '--port', '0'], {
      ...fresh.env,
      TRUST_PROXY: '10.0.0.0/8, proxy.internal',
    });
    expect(serve.status, serve.stderr).toBe(1);
    expect(serve.stderr).toBe(
      'error: TRUST_PROXY must be true, a hop count, or comma-separated addresses and CIDRs (or loopback, linklocal, uniquelocal), got "proxy.internal".\n',
    );
  });

  // Node's own refusal ("ENOENT: no such file or directory, open '/nope'") named no setting: an operator
  // could not tell whether the certificate, the key or something else was missing.
  it.skipIf(onPostgres)('names an unreadable TLS_CERT or TLS_KEY by its setting', async () => {
    const readable = path.join(fresh.dir, 'readable.pem');
    writeFileSync(readable, 'not checked before both are read');
    const missing = path.join(fresh.dir, 'nope.pem');
    const [cert, key, folder] = await Promise.all([
      runCliAsync(['serve', '--port', '0'], { ...fresh.env, TLS_CERT: missing, TLS_KEY: readable }),
      runCliAsync(['serve', '--port', '0'], { ...fresh.env, TLS_CERT: readable, TLS_KEY: missing }),
      runCliAsync(['serve', '--port', '0'], { ...fresh.env, TLS_CERT: readable, TLS_KEY: fresh.dir }),
    ]);
    expect(cert.status, cert.stderr).toBe(1);
    expect(cert.stderr).toBe(`error: TLS_CERT names ${missing}, which cannot be read (ENOENT).\n`);
    expect(key.status, key.stderr).toBe(1);
    expect(key.stderr).toBe(`error: TLS_KEY names ${missing}, which cannot be read (ENOENT).\n`);
    expect(folder.status, folder.stderr).toBe(1);
    expect(folder.stderr).toBe(`error: TLS_KEY names ${fresh.dir}, which cannot be read (EISDIR).\n`);
  });

  it.skipIf(!existsSync(EXAMPLE))('imports the shared catalogue example unchanged', () => {
    const result = runCli(['import', EXAMPLE], fresh.env);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('locations: 2 created');
  });

  it('rejects an invalid catalogue whole, listing every problem by path', () => {
    const file = path.join(fresh.dir, 'bad.json');
    writeFileSync(
      file,
      JSON.stringify({
        organisation: {
          slug: 'x',
          name: 'X',
          currency: 'GBP',
          booking_reference_prefix: 'X',
          locale: 'en-GB',
        },
        locations: [{ ref: 'a', slug: 'a', name: 'A', timezone: 'Mars/Olympus' }],
        services: [
          {
            ref: 's',
            name: 'S',
            duration_minutes: 0,
            price: { amount: 100, currency: 'GBP' },
            locations: ['a'],
          },
          {
            ref: 't',
            name: 'T',
            duration_minutes: 10,
            price: { amount: 100, currency: 'EUR' },
            locations: ['zz'],
          },
        ],
      }),
    );
    const result = runCli(['import', file], fresh.env);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('nothing was changed');
    expect(result.stderr).toContain('$.locations[0].timezone');
    expect(result.stderr).toContain('$.services[0].duration_minutes');
    expect(result.stderr).toContain('$.services[1].price.currency');
    expect(result.stderr).toContain('$.services[1].locations[0]');
    expect(result.stderr).toContain('4 problem(s)');
    expect(runCli(['keys', 'list', '--org', 'x'], fresh.env).stderr).toMatch(/No organisation/);
    const demo = runCli(['demo'], fresh.env);
    expect(demo.stdout).toContain('Demo organisation "northside-hair"');
  });

  it('reports a file that is not JSON', () => {
    const file = path.join(fresh.dir, 'broken.json');
    writeFileSync(file, '{ "organisation": ');
    const result = runCli(['import', file], fresh.env);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('$:');
  });

  it('serves the demo with a printed key on an empty database, and stops on SIGTERM', async () => {
    const server = await startServer(['--demo', '--port', '0'], fresh.env);
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const key = demoKeyIn(server.stdout());
      expect(key).toBeDefined();
      const response = await fetch(`${server.url}/v1/locations/camden/services`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { data: { name: string }[] };
      expect(body.data.map((s) => s.name)).toContain('Cut & blow-dry');
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${server.url}/v1/openapi.json`)).status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    // A second start finds data and prints no new key, but the command that issues one for the
    // organisation there, named (it said `--org <slug>`), and its public page again.
    const again = await startServer(['--demo', '--port', '0'], fresh.env);
    try {
      expect(demoKeyIn(again.stdout())).toBeUndefined();
      expect(again.stdout()).toBe(
        'The database already holds data, so no demo key is printed; issue one with\n' +
          '  npx booking keys create --org northside-hair --label <text> --scope read_write\n' +
          `Public booking page: ${again.url}/p/northside-hair\n` +
          `listening on ${again.url}\n`,
      );
    } finally {
      await again.stop();
    }
    // With several organisations, the slugs to choose from.
    const second = path.join(fresh.dir, 'acme.json');
    writeFileSync(second, JSON.stringify(smallCatalogue()));
    expect(runCli(['import', second], fresh.env).status).toBe(0);
    const third = await startServer(['--demo', '--port', '0'], fresh.env);
    try {
      expect(third.stdout()).toBe(
        'The database already holds data, so no demo key is printed; issue one with\n' +
          '  npx booking keys create --org <slug> --label <text> --scope read_write\n' +
          '  (--org one of: acme-hair, northside-hair)\n' +
          `listening on ${third.url}\n`,
      );
    } finally {
      await third.stop();
    }
  });

  // A server that cannot start must end, for a service manager to see it fail and restart it: on
  // PostgreSQL the database it had opened (its pool, its in-use lock) kept the process alive for ever.
  // A newcomer whose 8080 is taken is told the setting that picks another port, and that the demo key
  // just printed (the next start prints none) is kept.
  it('exits with status 1 when its port is taken, saying why and how to choose another', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    const child = spawn(process.execPath, ['bin/booking.js', 'serve', '--demo', '--port', String(port)], {
      cwd: REPO_ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn', ...fresh.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const outcome = await Promise.race([outcomeOf(child), sleep(40_000).then(() => null)]);
      expect(outcome, 'booking serve was still running 40 s after its port was refused').not.toBeNull();
      expect(outcome!.status).toBe(1);
      expect(outcome!.stdout).not.toContain('listening on');
      const key = /API key \(scope read_write, shown only once\): (bk_\w+)/.exec(outcome!.stdout)?.[1];
      expect(key, outcome!.stdout).toBeDefined();
      // Beside the log's JSON lines (the demo's test-mode payments warning).
      const said = outcome!.stderr.split('\n').filter((line) => line !== '' && !line.startsWith('{'));
      expect(said.join('\n')).toBe(
        `error: Port ${port} is already in use (127.0.0.1:${port}): stop what holds it, or choose another port, as in PORT=8081 npm start (or booking serve --port 8081).\n` +
          '  The API key printed above is kept: it works once the server is up.',
      );
      const listed = runCli(['keys', 'list', '--org', 'northside-hair'], fresh.env);
      expect(listed.stdout).toMatch(new RegExp(`bk_…${key!.slice(-4)}\\s+read_write\\s+active`));
    } finally {
      child.kill('SIGKILL');
      taken.close();
    }
  }, 60_000);
});
