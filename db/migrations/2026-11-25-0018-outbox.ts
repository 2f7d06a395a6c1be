import { type Kysely, sql } from 'kysely';

/**
 * The outbox: every message a customer should get about their booking (confirmed, a payment or
 * booking-page link, rescheduled, cancelled, the reminder) is a row written in the same transaction as
 * the change it reports, and a worker delivers the rows afterwards. A crash can therefore lose neither
 * the change's message nor the change; the row's id is the provider's idempotency key, so a delivery
 * retried after a crash is recognised as the same message.
 *
 * Organisation data like the rest (see 0004): the key contains organisation_id, the booking is a
 * composite foreign key inside the organisation. The recipient is copied from the client when the
 * message is written (a later change of number does not redirect a message already decided), and the
 * text is rendered at delivery (kept in `body` once sent or logged, for the salon to see what was said).
 *
 * Locations gain `reminder_hours_before` (default 24; 0: no reminders).
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .alterTable('locations')
    .addColumn('reminder_hours_before', 'integer', (c) =>
      c.notNull().defaultTo(24).check(sql`reminder_hours_before between 0 and 8784`),
    )
    .execute();
  await db.schema
    .createTable('outbox')
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('booking_id', 'text', (c) => c.notNull())
    .addColumn('reference', 'text', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull().check(sql`channel in ('sms', 'email')`))
    .addColumn('recipient', 'text', (c) => c.notNull().check(sql`length(recipient) between 3 and 320`))
    .addColumn('kind', 'text', (c) =>
      c
        .notNull()
        .check(
          sql`kind in ('confirmed', 'payment_link', 'booking_page_link', 'rescheduled', 'cancelled', 'reminder')`,
        ),
    )
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status in ('pending', 'sent', 'failed', 'logged')`),
    )
    .addColumn('attempts', 'integer', (c) => c.notNull().check(sql`attempts >= 0`))
    /** Not before this instant: the reminder's time, or the next try after a failure. */
    .addColumn('due_at', 'bigint', (c) => c.notNull())
    /** The instance delivering it, until lease_until; another may take it over after that. */
    .addColumn('claimed_by', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('provider_id', 'text')
    .addColumn('last_error', 'text', (c) => c.check(sql`last_error is null or length(last_error) <= 500`))
    .addColumn('body', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('sent_at', 'bigint')
    .addPrimaryKeyConstraint('outbox_pk', ['id', 'organisation_id'])
    .addForeignKeyConstraint('outbox_booking', ['organisation_id', 'booking_id'], 'bookings', [
      'organisation_id',
      'id',
    ])
    .addCheckConstraint(
      'outbox_done',
      sql`(status = 'pending' and sent_at is null) or (status in ('sent', 'logged') and sent_at is not null) or status = 'failed'`,
    )
    .execute();
  // The worker's question: what is pending and due (a partial index keeps it small once most is sent).
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
  await db.schema
    .createIndex('outbox_organisation')
    .on('outbox')
    .columns(['organisation_id', 'created_at'])
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}
