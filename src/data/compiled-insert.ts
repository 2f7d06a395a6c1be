import { CompiledQuery, type Insertable } from 'kysely';
import { type Db, dialectOf } from './db.ts';
import type { Database } from './tables.ts';

/**
 * INSERTs on the booking's hot path, built and compiled by Kysely once per shape and then only bound.
 *
 * Kysely builds a query tree from the rows and compiles it to SQL on every call: for a new booking's
 * rows on SQLite (five INSERTs of some forty values) that was about a third of the time the INSERTs
 * took (bench `mcp-round-trips`, profile of the in-process `book`). The SQL depends only on the
 * dialect, the table, the columns, the number of rows and the conflict clause, so it is kept by that
 * shape, and each call binds its own values, in the order Kysely bound them the first time (checked
 * then: a shape whose values Kysely would not bind one for one, an expression or a DEFAULT, is never
 * kept and goes through Kysely every time).
 */

type Table = keyof Database;
type Row<T extends Table> = Insertable<Database[T]>;

/** The SQL by shape. Shapes come from the code, not from data: a few dozen at most, capped anyway. */
const statements = new Map<string, string>();
const MAX_SHAPES = 256;

/**
 * Inserts `rows` into `table` (on a conflict on `ignoreConflictOn`, that row is not inserted) and
 * answers how many rows were inserted. Every row must name the same columns (undefined is "not named").
 */
export async function insertRows<T extends Table>(
  trx: Db,
  table: T,
  rows: readonly Row<T>[],
  ignoreConflictOn?: readonly string[],
): Promise<bigint> {
  if (rows.length === 0) return 0n;
  const build = () => {
    const insert = trx.insertInto(table).values(rows as never);
    return ignoreConflictOn
      ? insert.onConflict((oc) => oc.columns(ignoreConflictOn as never).doNothing())
      : insert;
  };
  const throughKysely = async () => (await build().executeTakeFirst()).numInsertedOrUpdatedRows ?? 0n;
  const columns = namedColumns(rows[0]!);
  const parameters = boundInOrder(rows, columns);
  if (!parameters) return throughKysely();

  const shape = `${dialectOf(trx)} ${table} ${rows.length} ${columns.join(',')} ${ignoreConflictOn?.join(',') ?? ''}`;
  let text = statements.get(shape);
  if (text === undefined) {
    const compiled = build().compile();
    const sameBinding =
      compiled.parameters.length === parameters.length &&
      compiled.parameters.every((value, i) => value === parameters[i]);
    if (!sameBinding) return throughKysely();
    text = compiled.sql;
    if (statements.size < MAX_SHAPES) statements.set(shape, text);
  }
  const result = await trx.executeQuery(CompiledQuery.raw(text, parameters));
  return result.numAffectedRows ?? 0n;
}

/** The columns a row names with a value, in its order. */
function namedColumns(row: object): string[] {
  return Object.keys(row).filter((column) => (row as Record<string, unknown>)[column] !== undefined);
}

/**
 * The values of every row in `columns` order, or undefined when a row names other columns or leaves
 * one out (Kysely would then write DEFAULT in its place, a different statement), or holds an expression.
 */
function boundInOrder(rows: readonly object[], columns: readonly string[]): unknown[] | undefined {
  const parameters: unknown[] = [];
  for (const row of rows) {
    const values = row as Record<string, unknown>;
    if (namedColumns(row).length !== columns.length) return undefined;
    for (const column of columns) {
      const value = values[column];
      // Kysely writes an expression (sql`…`, a function of the expression builder) or DEFAULT into
      // the SQL: not a value to bind to a kept statement.
      if (value === undefined || typeof value === 'function' || isExpression(value)) return undefined;
      parameters.push(value);
    }
  }
  return parameters;
}

function isExpression(value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'toOperationNode' in value;
}
