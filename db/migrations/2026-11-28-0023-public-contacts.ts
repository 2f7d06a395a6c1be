import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.ts';

/**
 * A booking made on the public page (no key) belongs to nobody until its customer proves the contact
 * they typed (design.md 9.1):
 *
 * - `clients.contact_proven`: 1 for a client on file (imported, registered through the API, MCP or the
 *   console, or a public customer who proved the contact); 0 for the client record a public booking
 *   gets before (or, under `public_verification: none`, without) proof. Only clients on file are found
 *   by phone or e-mail, so the unique phone and e-mail keys hold among them only: an unproven booking
 *   gets a record of its own even when it typed someone else's number. SQLite cannot change a table's
 *   unique constraints in place: the table is made anew (rebuildSqliteClients).
 * - `contact_proofs`: one row per public booking: the phone and e-mail it gave, where the proof went,
 *   the hashes of the code and of the link token sent there, the tries, and when it was proven. The
 *   per-contact caps count these rows.
 * - `outbox.kind` gains `verification_code`, the message that carries them (SQLite: the table anew).
 * - `organisations` gains the public page's policies (the catalogue's `policies`).
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

const KINDS = `('confirmed', 'payment_link', 'booking_page_link', 'rescheduled', 'cancelled', 'reminder', 'verification_code')`;

const CLIENT_COLUMNS = [
  'id',
  'organisation_id',
  'ref',
  'first_name',
  'last_name',
  'phone',
  'email',
  'marketing_consent',
  'created_at',
  'updated_at',
].join(', ');

const OUTBOX_COLUMNS = [
  'seq',
  'id',
  'organisation_id',
  'booking_id',
  'reference',
  'channel',
  'recipient',
  'kind',
  'status',
  'attempts',
  'due_at',
  'claimed_by',
  'lease_until',
  'provider_id',
  'last_error',
  'body',
  'created_at',
  'sent_at',
].join(', ');

export async function up(db: AnyDb): Promise<void> {
  await addOrganisationPolicies(db);
  if (isPostgres(db)) {
    await sql`ALTER TABLE clients ADD COLUMN contact_proven integer NOT NULL DEFAULT 1
      CHECK (contact_proven in (0, 1))`.execute(db);
    await sql`ALTER TABLE clients DROP CONSTRAINT clients_org_phone, DROP CONSTRAINT clients_org_email`.execute(
      db,
    );
    await sql`ALTER TABLE outbox DROP CONSTRAINT outbox_kind_check,
      ADD CONSTRAINT outbox_kind_check CHECK (kind in ${sql.raw(KINDS)})`.execute(db);
  } else {
    await rebuildSqliteClients(db);
    await rebuildSqliteOutbox(db);
  }
  for (const column of ['phone', 'email']) {
    await db.schema
      .createIndex(`clients_org_${column}`)
      .on('clients')
      .columns(['organisation_id', column])
      .unique()
      .where(sql.ref('contact_proven'), '=', 1)
      .execute();
  }

  await db.schema
    .createTable('contact_proofs')
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('booking_id', 'text', (c) => c.notNull())
    /** What the customer typed, normalised: the phone (E.164) and e-mail address, either or both. */
    .addColumn('phone', 'text', (c) => c.check(sql`phone is null or phone like '+%'`))
    .addColumn('email', 'text', (c) => c.check(sql`email is null or length(email) between 3 and 320`))
    /** Where the proof went: the phone by SMS or the e-mail address. */
    .addColumn('channel', 'text', (c) => c.notNull().check(sql`channel in ('sms', 'email')`))
    /** SHA-256 of the code and of the link token; null when no proof is asked (policy none). */
    .addColumn('code_hash', 'text')
    .addColumn('token_hash', 'text')
    .addColumn('code_expires_at', 'bigint')
    .addColumn('tries', 'integer', (c) => c.notNull().defaultTo(0).check(sql`tries >= 0`))
    .addColumn('proven_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('contact_proofs_pk', ['booking_id', 'organisation_id'])
    .addCheckConstraint(
      'contact_proofs_channel',
      sql`(channel = 'sms' and phone is not null) or (channel = 'email' and email is not null)`,
    )
    .addForeignKeyConstraint('contact_proofs_booking', ['organisation_id', 'booking_id'], 'bookings', [
      'organisation_id',
      'id',
    ])
    .execute();
  for (const column of ['phone', 'email']) {
    await db.schema
      .createIndex(`contact_proofs_${column}`)
      .on('contact_proofs')
      .columns(['organisation_id', column, 'created_at'])
      .where(sql.ref(column), 'is not', null)
      .execute();
  }
  await db.schema
    .createIndex('contact_proofs_token')
    .on('contact_proofs')
    // Found by the token alone (the link names no organisation); every key holds organisation_id (0004).
    .columns(['token_hash', 'organisation_id'])
    .unique()
    .execute();
}

async function addOrganisationPolicies(db: AnyDb): Promise<void> {
  const columns: [string, (c: AnyColumn) => AnyColumn][] = [
    [
      'public_verification',
      (c) => c.notNull().defaultTo('code').check(sql`public_verification in ('code', 'none')`),
    ],
    [
      'public_holds_per_contact',
      (c) => c.notNull().defaultTo(2).check(sql`public_holds_per_contact between 0 and 1000`),
    ],
    [
      'public_bookings_per_contact_per_day',
      (c) => c.notNull().defaultTo(3).check(sql`public_bookings_per_contact_per_day between 0 and 1000`),
    ],
    [
      'public_attempts_per_address_per_hour',
      (c) => c.notNull().defaultTo(10).check(sql`public_attempts_per_address_per_hour between 0 and 100000`),
    ],
    /** ISO 3166-1 codes, comma-separated: countries texted besides those of the locations. */
    ['sms_countries', (c) => c.notNull().defaultTo('').check(sql`length(sms_countries) <= 1000`)],
  ];
  for (const [name, build] of columns) {
    const type = name === 'public_verification' || name === 'sms_countries' ? 'text' : 'integer';
    await db.schema.alterTable('organisations').addColumn(name, type, build).execute();
  }
}

// biome-ignore lint/suspicious/noExplicitAny: the schema builder's column builder, whatever its version.
type AnyColumn = any;

/**
 * The clients table anew, inside the migration's transaction (this project's SQLite migrations are
 * transactional: database.ts), where `PRAGMA foreign_keys` cannot change. Bookings point at clients,
 * so dropping the table counts each of their rows as a broken foreign key; with the checks deferred to
 * COMMIT, putting every client back into the new table (same ids) takes each count back, as SQLite
 * counts an inserted parent's orphans. A rename would not: the count stays and COMMIT fails.
 */
async function rebuildSqliteClients(db: AnyDb): Promise<void> {
  const flag = (column: string) => sql.raw(`${column} in (0, 1)`);
  await sql`PRAGMA defer_foreign_keys = ON`.execute(db);
  await sql.raw(`CREATE TEMP TABLE clients_copy AS SELECT ${CLIENT_COLUMNS} FROM clients`).execute(db);
  await db.schema.dropTable('clients').execute();
  await db.schema
    .createTable('clients')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('ref', 'text')
    .addColumn('first_name', 'text', (c) => c.notNull().check(sql`length(first_name) between 1 and 60`))
    .addColumn('last_name', 'text', (c) => c.notNull().check(sql`length(last_name) between 1 and 60`))
    .addColumn('phone', 'text', (c) => c.check(sql`phone is null or phone like '+%'`))
    .addColumn('email', 'text', (c) => c.check(sql`email is null or email = lower(email)`))
    .addColumn('marketing_consent', 'integer', (c) => c.notNull().check(flag('marketing_consent')))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('contact_proven', 'integer', (c) => c.notNull().defaultTo(1).check(flag('contact_proven')))
    .addCheckConstraint('clients_contact', sql`phone is not null or email is not null`)
    .addUniqueConstraint('clients_org_id', ['organisation_id', 'id'])
    .addUniqueConstraint('clients_org_ref', ['organisation_id', 'ref'])
    .execute();
  await sql
    .raw(`INSERT INTO clients (${CLIENT_COLUMNS}) SELECT ${CLIENT_COLUMNS} FROM temp.clients_copy`)
    .execute(db);
  await sql`DROP TABLE temp.clients_copy`.execute(db);
}

/** As 0022 made it, with the new kind. */
async function rebuildSqliteOutbox(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('outbox_next')
    .addColumn('seq', 'integer', (c) => c.primaryKey())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull())
    .addColumn('booking_id', 'text', (c) => c.notNull())
    .addColumn('reference', 'text', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull().check(sql`channel in ('sms', 'email')`))
    .addColumn('recipient', 'text', (c) => c.notNull().check(sql`length(recipient) between 3 and 320`))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql.raw(`kind in ${KINDS}`)))
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status in ('pending', 'sent', 'failed', 'logged')`),
    )
    .addColumn('attempts', 'integer', (c) => c.notNull().check(sql`attempts >= 0`))
    .addColumn('due_at', 'bigint', (c) => c.notNull())
    .addColumn('claimed_by', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('provider_id', 'text')
    .addColumn('last_error', 'text', (c) => c.check(sql`last_error is null or length(last_error) <= 500`))
    .addColumn('body', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('sent_at', 'bigint')
    .addForeignKeyConstraint('outbox_booking', ['organisation_id', 'booking_id'], 'bookings', [
      'organisation_id',
      'id',
    ])
    .addCheckConstraint(
      'outbox_done',
      sql`(status = 'pending' and sent_at is null) or (status in ('sent', 'logged') and sent_at is not null) or status = 'failed'`,
    )
    .execute();
  await sql
    .raw(`INSERT INTO outbox_next (${OUTBOX_COLUMNS}) SELECT ${OUTBOX_COLUMNS} FROM outbox ORDER BY seq`)
    .execute(db);
  await db.schema.dropTable('outbox').execute();
  await db.schema.alterTable('outbox_next').renameTo('outbox').execute();
  await db.schema
    .createIndex('outbox_due')
    .on('outbox')
    .columns(['due_at'])
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  await db.schema
    .createIndex('outbox_booking')
    .on('outbox')
    .columns(['organisation_id', 'booking_id'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}
