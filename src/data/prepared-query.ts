import { type Compilable, CompiledQuery } from 'kysely';
import { type Db, dialectOf } from './db.ts';

/**
 * A query of the booking's hot path that Kysely builds and compiles once per dialect (and per length
 * of each of its lists), its values bound by name at every run.
 *
 * Building a Kysely query (a tree of immutable nodes, one copy per method called) and compiling it
 * to SQL costs more than SQLite takes to answer an indexed lookup: for the client's live booking at
 * an instant, asked on every `book`, it was four fifths of the lookup's time (profile of the
 * in-process `book` of bench `mcp-round-trips`). The query is written once, as usual, with
 * `param('name')` where a value of the call goes (one plain value: a string, number, bigint or null)
 * and `list('name')` where a list of such values goes (`in`: never empty, which is no SQL PostgreSQL
 * takes); the SQL and the positions of those values are kept, per length of each list, since an `in`
 * of two values is other SQL than one of three. A list the query does not take through `list` (a
 * constant of the query) stays as written.
 */
export interface PreparedQuery<P, R> {
  /** The rows the query answers, with `params` bound. */
  rows(db: Db, params: P): Promise<R[]>;
  /** The first row, if any. */
  first(db: Db, params: P): Promise<R | undefined>;
}

type Param<P> = <K extends keyof P & string>(name: K) => P[K];
type List<P> = <K extends ListName<P>>(name: K) => P[K];
type ListName<P> = { [K in keyof P & string]: P[K] extends readonly unknown[] ? K : never }[keyof P & string];

interface Compiled<P> {
  sql: string;
  parameters: readonly unknown[];
  /** Where each named value goes in `parameters`: a param's value, or a list's item at `item`. */
  slots: [index: number, name: keyof P, item?: number][];
}

/** Shapes (dialect and lengths of the lists) kept per query; past these, a new shape compiles per call. */
const MAX_SHAPES = 64;

/**
 * What a named value is while the query is compiled: a string none of the query's own constants can be.
 * Only the first compilation of a shape looks for it; later calls bind by position, whatever their
 * values hold.
 */
const mark = (name: string) => `\u0000param:${name}\u0000`;

export function preparedQuery<P extends Record<string, unknown>, R>(
  build: (db: Db, param: Param<P>, list: List<P>) => Compilable<R>,
): PreparedQuery<P, R> {
  const byShape = new Map<string, Compiled<P>>();

  const compile = (db: Db, params: P): Compiled<P> => {
    const names = new Map<string, [name: keyof P, item?: number]>();
    const query = build(
      db,
      (name) => {
        names.set(mark(name), [name]);
        return mark(name) as never;
      },
      (name) => {
        const values = params[name];
        if (!Array.isArray(values) || values.length === 0) {
          throw new Error(`${name} must be a list of at least one value.`);
        }
        return values.map((_, item) => {
          names.set(mark(`${name}[${item}]`), [name, item]);
          return mark(`${name}[${item}]`);
        }) as never;
      },
    ).compile();
    const slots: Compiled<P>['slots'] = [];
    query.parameters.forEach((value, index) => {
      const named = typeof value === 'string' ? names.get(value) : undefined;
      if (named !== undefined) slots.push([index, ...named]);
    });
    // A value Kysely wrote into the SQL rather than bound (sql.lit, a LIMIT) cannot be rebound.
    for (const [text, [name]] of names) {
      if (!query.parameters.includes(text) || query.sql.includes(text)) {
        throw new Error(`${String(name)} is not bound by the query.`);
      }
    }
    return { sql: query.sql, parameters: query.parameters, slots };
  };

  const compiledFor = (db: Db, params: P): Compiled<P> => {
    let shape: string = dialectOf(db);
    for (const name in params) {
      const value = params[name];
      if (Array.isArray(value)) shape += ` ${name}:${value.length}`;
    }
    let compiled = byShape.get(shape);
    if (compiled === undefined) {
      compiled = compile(db, params);
      if (byShape.size < MAX_SHAPES) byShape.set(shape, compiled);
    }
    return compiled;
  };

  const rows = async (db: Db, params: P): Promise<R[]> => {
    const compiled = compiledFor(db, params);
    const parameters = [...compiled.parameters];
    for (const [index, name, item] of compiled.slots) {
      const value = params[name];
      if (item === undefined) {
        // Kysely would have made a list of an array (`in`): a param binds one value, a list a list.
        if (Array.isArray(value)) throw new Error(`${String(name)} must be one value, not a list.`);
        parameters[index] = value;
      } else {
        if (!Array.isArray(value)) throw new Error(`${String(name)} must be a list.`);
        parameters[index] = value[item];
      }
    }
    return (await db.executeQuery(CompiledQuery.raw(compiled.sql, parameters))).rows as R[];
  };

  return {
    rows,
    first: async (db, params) => (await rows(db, params))[0],
  };
}
