import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.ts';

/**
 * Aliases: the everyday words a caller uses for a service ("haircut", "blow dry") or a staff member
 * (a nickname), given by the catalogue (`aliases[]`) and matched by the MCP tools. One table per
 * kind, each alias a row owned by its service or staff member, in the file's order (`position`).
 *
 * Organisation data like the rest: every key contains organisation_id on both databases (see 0004),
 * the owner is a composite foreign key inside the organisation, and an alias is unique among the
 * organisation's aliases of its kind, as written (the import also refuses two that differ only in
 * case, accents or spacing, which a unique index cannot see). Aliases are what the listings show,
 * so a change to them bumps the organisation's catalogue_version like any other catalogue table.
 */

// biome-ignore lint/suspicious/noExplicitAny: migrations are frozen in time and must not depend on today's types.
type AnyDb = Kysely<any>;

/** The alias tables, each with the column naming its owner and the owner's table. */
const ALIAS_TABLES = [
  { table: 'service_aliases', owner: 'service_id', owners: 'services' },
  { table: 'staff_aliases', owner: 'staff_id', owners: 'staff' },
] as const;

export async function up(db: AnyDb): Promise<void> {
  for (const { table, owner, owners } of ALIAS_TABLES) {
    await db.schema
      .createTable(table)
      .addColumn('organisation_id', 'text', (c) => c.notNull())
      .addColumn(owner, 'text', (c) => c.notNull())
      .addColumn('position', 'integer', (c) => c.notNull().check(sql`position between 0 and 19`))
      .addColumn('alias', 'text', (c) => c.notNull().check(sql`length(alias) between 1 and 60`))
      .addPrimaryKeyConstraint(`${table}_pk`, [owner, 'position', 'organisation_id'])
      .addUniqueConstraint(`${table}_org_alias`, ['organisation_id', 'alias'])
      .addForeignKeyConstraint(`${table}_owner`, ['organisation_id', owner], owners, [
        'organisation_id',
        'id',
      ])
      .execute();
    if (isPostgres(db)) {
      // bump_catalogue_version() is the initial migration's trigger function.
      await sql
        .raw(
          `CREATE TRIGGER ${table}_bumps_catalogue AFTER INSERT OR UPDATE OR DELETE ON ${table}
           FOR EACH ROW EXECUTE FUNCTION bump_catalogue_version()`,
        )
        .execute(db);
    } else {
      for (const [operation, row] of [
        ['INSERT', 'NEW'],
        ['UPDATE', 'NEW'],
        ['DELETE', 'OLD'],
      ] as const) {
        await sql
          .raw(
            `CREATE TRIGGER ${table}_bumps_catalogue_${operation.toLowerCase()} AFTER ${operation} ON ${table}
             BEGIN UPDATE organisations SET catalogue_version = catalogue_version + 1 WHERE id = ${row}.organisation_id; END`,
          )
          .execute(db);
      }
    }
  }
}

export async function down(): Promise<void> {
  throw new Error('Migrations are not reverted; restore a backup instead.');
}
