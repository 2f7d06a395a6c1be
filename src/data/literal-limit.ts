import { type RawBuilder, sql } from 'kysely';

/**
 * A LIMIT written into the SQL rather than bound. PostgreSQL runs every named statement with one
 * generic plan per connection (postgres.ts), and a generic plan that does not know its limit plans to
 * read every matching row: the outbox worker's claim (`order by due_at limit $n`) became a sequential
 * scan of the whole outbox and a hash join. Each distinct limit is a statement of its own; limits are a
 * few constants and the four sizes a page reads (page-query.ts).
 */
export function literalLimit(rows: number): RawBuilder<number> {
  if (!Number.isSafeInteger(rows) || rows < 0) throw new Error(`Not a number of rows: ${rows}`);
  return sql.lit(rows);
}
