import { type Compilable, CompiledQuery } from 'kysely';
import { type Db, type DialectName, dialectOf } from './db.ts';

/**
 * A query of the booking's hot path that Kysely builds and compiles once per dialect, its values
 * bound by name at every run.
 *
 * Building a Kysely query (a tree of immutable nodes, one copy per method called) and compiling it
 * to SQL costs more than SQLite takes to answer an indexed lookup: for the client's live booking at
 * an instant, asked on every `book`, it was four fifths of the lookup's time (profile of the
 * in-process `book` of bench `mcp-round-trips`). The query is written once, as usual, with
 * `param('name')` where a value of the call goes (one plain value: a string, number, bigint or null;
 * a list for `in` stays a constant of the query); the SQL and the positions of those values are kept.
 */
export interface PreparedQuery<P, R> {
  /** The rows the query answers, with `params` bound. */
  rows(db: Db, params: P): Promise<R[]>;
  /** The first row, if any. */
  first(db: Db, params: P): Promise<R | undefined>;
}

type Param<P> = <K extends keyof P & string>(name: K) => P[K];

interface Compiled<P> {
  sql: string;
  parameters: readonly unknown[];
  /** Where each named value goes in `parameters`. */
  slots: [index: number, name: keyof P][];
}

/**
 * What a named value is while the query is compiled: a string none of the query's own constants can be.
 * Only that first compilation looks for it; later calls bind by position, whatever their values hold.
 */
const mark = (name: string) => `\u0000param:${name}\u0000`;

export function preparedQuery<P extends Record<string, unknown>, R>(
  build: (db: Db, param: Param<P>) => Compilable<R>,
): PreparedQuery<P, R> {
  const byDialect = new Map<DialectName, Compiled<P>>();

  const compiledFor = (db: Db): Compiled<P> => {
    const dialect = dialectOf(db);
    let compiled = byDialect.get(dialect);
    if (compiled === undefined) {
      const names = new Map<string, keyof P>();
      const query = build(db, (name) => {
        names.set(mark(name), name);
        return mark(name) as never;
      }).compile();
      const slots: Compiled<P>['slots'] = [];
      query.parameters.forEach((value, index) => {
        const name = typeof value === 'string' ? names.get(value) : undefined;
        if (name !== undefined) slots.push([index, name]);
      });
      // A value Kysely wrote into the SQL rather than bound (sql.lit, a LIMIT) cannot be rebound.
      for (const [text, name] of names) {
        if (!query.parameters.includes(text) || query.sql.includes(text)) {
          throw new Error(`${String(name)} is not bound by the query.`);
        }
      }
      compiled = { sql: query.sql, parameters: query.parameters, slots };
      byDialect.set(dialect, compiled);
    }
    return compiled;
  };

  const rows = async (db: Db, params: P): Promise<R[]> => {
    const compiled = compiledFor(db);
    const parameters = [...compiled.parameters];
    for (const [index, name] of compiled.slots) {
      const value = params[name];
      // Kysely would have made a list of an array (`in`): a kept statement binds one value per name.
      if (Array.isArray(value)) throw new Error(`${String(name)} must be one value, not a list.`);
      parameters[index] = value;
    }
    return (await db.executeQuery(CompiledQuery.raw(compiled.sql, parameters))).rows as R[];
  };

  return {
    rows,
    first: async (db, params) => (await rows(db, params))[0],
  };
}
