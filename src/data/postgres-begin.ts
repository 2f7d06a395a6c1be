import type pg from 'pg';

/**
 * BEGIN sent in the same round trip as the first statement of its transaction (issue 47).
 *
 * Kysely opens a transaction with a statement of its own, `begin`, and node-postgres sends a statement
 * only once the one before has been answered: on every transaction a round trip that carries nothing,
 * which the caller waits for (a network's round trip where PostgreSQL is on another machine;
 * docs/decisions/postgres-booking-cost.md). Here `begin` is held back and goes out with the next
 * statement, as the extended protocol allows: BEGIN's Parse, Bind and Execute, then the statement's,
 * then one Sync. PostgreSQL runs them in order, so the statement runs inside the transaction as if
 * BEGIN had been answered first, and nothing could be seen in between: a transaction takes its
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

/** The answers made up for statements held back and never sent (see wasSent). */
const unsent = new WeakSet<pg.QueryResult>();

/** A statement Kysely asked for that went nowhere: what node-postgres answers for one without rows. */
function notSent(command: string): pg.QueryResult {
  const result = { command, rowCount: null, oid: 0, rows: [], fields: [] };
  unsent.add(result);
  return result;
}

/** Whether the server saw this statement: false for a BEGIN held back, or the end of an empty transaction. */
export function wasSent(result: pg.QueryResult): boolean {
  return !unsent.has(result);
}

/**
 * The parts of node-postgres's Query and protocol writer this uses (lib/query.js, lib/connection.js).
 * They are not its public API: test/integration/postgres-begin.test.ts is what tells if they change.
 */
interface ProtocolWriter {
  parse(message: { text: string; name: string; types: unknown[] }): void;
  bind(message: { portal: string; statement: string; values: unknown[] }): void;
  execute(message: { portal: string }): void;
  /** Named statements whose Parse is on its way, by name: the Query then sends no Parse of its own. */
  submittedNamedStatements: Record<string, string>;
}

type QueryCallback = (error: Error | null, result: pg.QueryResult | pg.QueryResult[]) => void;

type PreparingQuery = new (
  config: pg.QueryConfig,
  values: undefined,
  callback: QueryCallback,
) => pg.Submittable & {
  readonly name?: string;
  readonly text: string;
  readonly types?: unknown[];
  hasBeenParsed(connection: ProtocolWriter): boolean;
  prepare(connection: ProtocolWriter): void;
};

const beginningQueries = new WeakMap<typeof pg.Query, PreparingQuery>();

/**
 * A Query that writes BEGIN's messages before its own Bind and Execute (submit corks the socket around
 * prepare, so all of them leave in one write). Its answer is then two results, BEGIN's and the
 * statement's.
 *
 * A named statement not yet parsed on the connection has its Parse written first, before BEGIN's:
 * node-postgres takes the first ParseComplete of a query for its statement's, so BEGIN's, arriving
 * first, would mark the statement parsed even if its own Parse then failed (a lock timeout, a table
 * not there yet), and the connection would never parse it again. Parse first, nothing is marked
 * unless it succeeded; should it fail, the server skips BEGIN and the rest up to the Sync, and no
 * transaction has begun.
 */
function beginningQuery(Query: typeof pg.Query): PreparingQuery {
  let Beginning = beginningQueries.get(Query);
  if (!Beginning) {
    const Base = Query as unknown as PreparingQuery;
    Beginning = class extends Base {
      override prepare(connection: ProtocolWriter): void {
        if (this.name && !this.hasBeenParsed(connection)) {
          connection.parse({ text: this.text, name: this.name, types: this.types ?? [] });
          connection.submittedNamedStatements[this.name] = this.text;
        }
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
        const own = Array.isArray(result) ? result[1] : undefined;
        if (error) reject(error);
        else if (own) resolve(own);
        else reject(new Error('PostgreSQL answered BEGIN but not the statement sent with it.'));
      }),
    );
  });
}
