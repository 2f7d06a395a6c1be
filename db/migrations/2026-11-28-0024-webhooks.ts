import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.ts';

/**
 * Webhooks (design.md 9.2): the organisation's endpoints, the events written in the transaction of
 * their change, and one delivery per event and subscribed endpoint, claimed by the delivery worker
 * like the outbox's messages (a lease, FOR UPDATE SKIP LOCKED on PostgreSQL).
 *
 * - `webhook_endpoints`: changes to what decides whether an event is written (the url, events and
 *   status) bump the organisation's catalogue_version, which keys the endpoint list every process
 *   keeps beside the catalogue (webhook-events.ts): whoever changes it, no process writes events for
 *   an endpoint it no longer has, nor misses one it has. failing_since changes on every failure and
 *   bumps nothing.
 * - `webhook_events`: the body as delivered (`payload`, the exact bytes signed), written once.
 * - `webhook_deliveries`: `ordering_key` (a booking's id) keeps one booking's events in order per
 *   endpoint: a delivery is claimed only when no earlier one of its key and endpoint is pending.
 * Both keyed by a sequence in the order they were written, as the outbox is (0022).
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

export async function up(db: AnyDb): Promise<void> {
  const postgres = isPostgres(db);
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('organisation_id', 'text', (c) => c.notNull().references('organisations.id'))
    .addColumn('url', 'text', (c) => c.notNull().check(sql`length(url) between 8 and 2000`))
    .addColumn('description', 'text', (c) => c.check(sql`description is null or length(description) <= 200`))
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('enabled', 'disabled')`))
    .addColumn('disabled_reason', 'text')
    .addColumn('failing_since', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('disabled_at', 'bigint')
    .addPrimaryKeyConstraint('webhook_endpoints_pk', ['id', 'organisation_id'])
    .execute();
  await db.schema
    .createIndex('webhook_endpoints_organisation')
    .on('webhook_endpoints')
    .columns(['organisation_id', 'created_at'])
    .execute();

  const seq = (table: string) => {
    const keyed = db.schema.createTable(table);
    return postgres
      ? keyed
          .addColumn('seq', 'bigint', (c) => c.generatedAlwaysAsIdentity().notNull())
          .addColumn('organisation_id', 'text', (c) => c.notNull())
          .addPrimaryKeyConstraint(`${table}_pk`, ['seq', 'organisation_id'])
      : keyed
          .addColumn('seq', 'integer', (c) => c.primaryKey())
          .addColumn('organisation_id', 'text', (c) => c.notNull());
  };
  await seq('webhook_events')
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await seq('webhook_deliveries')
    .addColumn('endpoint_id', 'text', (c) => c.notNull())
    .addColumn('event_seq', 'bigint', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('ordering_key', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'succeeded', 'failed')`))
    .addColumn('attempts', 'integer', (c) => c.notNull().check(sql`attempts >= 0`))
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('claimed_by', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('response_code', 'integer')
    .addColumn('last_error', 'text', (c) => c.check(sql`last_error is null or length(last_error) <= 500`))
    .addColumn('last_attempt_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('delivered_at', 'bigint')
    .addForeignKeyConstraint(
      'webhook_deliveries_endpoint',
      ['endpoint_id', 'organisation_id'],
      'webhook_endpoints',
      ['id', 'organisation_id'],
      (fk) => fk.onDelete('cascade'),
    )
    .execute();
  // What the worker asks: what is due (the partial index keeps only what is still to go).
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['next_attempt_at'])
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  // Whether an earlier delivery of the same booking to the same endpoint is still to go.
  await db.schema
    .createIndex('webhook_deliveries_order')
    .on('webhook_deliveries')
    .columns(['endpoint_id', 'ordering_key', 'seq'])
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  // An endpoint's log, latest first (and the cascade of its deletion).
  await db.schema
    .createIndex('webhook_deliveries_endpoint')
    .on('webhook_deliveries')
    .columns(['organisation_id', 'endpoint_id', 'seq'])
    .execute();

  if (postgres) {
    // bump_catalogue_version() is the initial migration's trigger function.
    await sql`CREATE TRIGGER webhook_endpoints_bump_catalogue
      AFTER INSERT OR DELETE OR UPDATE OF url, events, status ON webhook_endpoints
      FOR EACH ROW EXECUTE FUNCTION bump_catalogue_version()`.execute(db);
    return;
  }
  for (const [operation, row] of [
    ['INSERT', 'NEW'],
    ['UPDATE OF url, events, status', 'NEW'],
    ['DELETE', 'OLD'],
  ] as const) {
    await sql
      .raw(
        `CREATE TRIGGER webhook_endpoints_bump_catalogue_${operation.split(' ')[0]!.toLowerCase()} AFTER ${operation} ON webhook_endpoints
         BEGIN UPDATE organisations SET catalogue_version = catalogue_version + 1 WHERE id = ${row}.organisation_id; END`,
      )
      .execute(db);
  }
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}
