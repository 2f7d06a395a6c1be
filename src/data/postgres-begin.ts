import type pg from 'pg';

/**
 * BEGIN sent in the same round trip as the first statement of its transaction (issue 47).
 *
 * Kysely opens a transaction with a statement of its own, `begin`, and node-postgres sends a statement
 * only once the one before has been answered: on every transaction a round trip that carries nothing,
 * and on this kind of machine a round trip is most of what a statement costs (the process's `writev`
 * and the backend woken to read it: a booking's statements were a third of its CPU on both sides,
 * docs/decisions/postgres-booking-cost.md). Here `begin` is held back and goes out with the next
 * statement, as the extended protocol allows: BEGIN's Parse, Bind and Execute, then the statement's,
 * then one Sync. PostgreSQL runs them in order, so the statement runs inside the transaction exactly
 * as if BEGIN had been answered first, and nothing could be seen in between: a transaction takes its
 * snapshot at its first statement, not at BEGIN. Should BEGIN fail, the statement is not run (the
 * server skips to the Sync) and its caller gets BEGIN's error.
 *
 * A transaction that ends before any statement sends nothing. A first statement without parameters
 * (a migration's DDL, a savepoint) is a simple query, which cannot share a round trip this way: BEGIN
 * then goes alone before it, as before.
 */
export function deferringBegin(
  client: pg.PoolClient,
  Query: typeof pg.Query,
): (config: pg.QueryConfig) => Promise<pg.QueryResult> {
  let held = false;
  return (config) => {
    const text = config.text;
    if (!held) {
      if (text !== 'begin') return client.query(config);
      held = true;
      return Promise.resolve(notSent('BEGIN'));
    }
    held = false;
    if (text === 'commit' || text === 'rollback') return Promise.resolve(notSent(text.toUpperCase()));
    if (!config.values?.length) return client.query('begin').then(() => client.query(config));
    return withBegin(client, Query, config);
  };
}

/** A statement Kysely asked for that went nowhere: what node-postgres answers for one without rows. */
function notSent(command: string): pg.QueryResult {
  return { command, rowCount: null, oid: 0, rows: [], fields: [] };
}

/** The parts of node-postgres's protocol writer that BEGIN needs (lib/connection.js). */
interface ProtocolWriter {
  parse(message: { text: string; name: string; types: unknown[] }): void;
  bind(message: { portal: string; statement: string; values: unknown[] }): void;
  execute(message: { portal: string }): void;
}

type QueryCallback = (error: Error | null, result: pg.QueryResult | pg.QueryResult[]) => void;

/** node-postgres's Query as its subclasses see it: prepare writes the extended protocol's messages. */
type PreparingQuery = new (
  config: pg.QueryConfig,
  values: undefined,
  callback: QueryCallback,
) => pg.Submittable & { prepare(connection: ProtocolWriter): void };

const beginningQueries = new WeakMap<typeof pg.Query, PreparingQuery>();

/**
 * A Query that writes BEGIN's messages before its own (submit corks the socket around prepare, so all
 * of them leave in one write). Its answer is then two results, BEGIN's and the statement's: the
 * statement's is the last.
 */
function beginningQuery(Query: typeof pg.Query): PreparingQuery {
  let Beginning = beginningQueries.get(Query);
  if (!Beginning) {
    const Base = Query as unknown as PreparingQuery;
    Beginning = class extends Base {
      override prepare(connection: ProtocolWriter): void {
        connection.parse({ text: 'BEGIN', name: '', types: [] });
        connection.bind({ portal: '', statement: '', values: [] });
        connection.execute({ portal: '' });
        super.prepare(connection);
      }
    };
    beginningQueries.set(Query, Beginning);
  }
  return Beginning;
}

function withBegin(
  client: pg.PoolClient,
  Query: typeof pg.Query,
  config: pg.QueryConfig,
): Promise<pg.QueryResult> {
  const Beginning = beginningQuery(Query);
  return new Promise((resolve, reject) => {
    client.query(
      new Beginning(config, undefined, (error, result) => {
        if (error) reject(error);
        else resolve(Array.isArray(result) ? result[result.length - 1]! : result);
      }),
    );
  });
}
