import type pg from 'pg';

/**
 * A transaction's BEGIN, and where its caller says so its COMMIT, sent in the same round trip as a
 * statement of it (issue 47).
 *
 * Kysely opens a transaction with a statement of its own, `begin`, and ends it with `commit`, and
 * node-postgres sends a statement only once the one before has been answered: two round trips per
 * transaction that carry nothing, which the caller waits for (a network's round trip where PostgreSQL
 * is on another machine; docs/decisions/postgres-booking-cost.md), and which a transaction holding a
 * lock holds it through.
 *
 * BEGIN: `begin` is held back and goes out with the next statement, as the extended protocol allows:
 * BEGIN's Parse, Bind and Execute, then the statement's, then one Sync. PostgreSQL runs them in order,
 * so the statement runs inside the transaction as if BEGIN had been answered first, and nothing could
 * be seen in between: a transaction takes its snapshot at its first statement, not at BEGIN. Should
 * BEGIN fail, the statement is not run (the server skips to the Sync) and its caller gets BEGIN's
 * error. A transaction that ends before any statement sends nothing. A first statement without
 * parameters (a migration's DDL, a savepoint) is a simple query, which cannot share a round trip this
 * way: BEGIN then goes alone before it, as before.
 *
 * COMMIT: a statement whose text ends with THEN_COMMIT, inside a transaction, goes out with COMMIT's
 * Parse, Bind and Execute after its own, under the same Sync. Once it is sent, the transaction takes
 * no other statement (one sent meanwhile would queue behind it and run after the COMMIT, outside the
 * transaction): any is refused, StatementAfterCommit, until Kysely's `commit` or `rollback`. Should the
 * statement succeed, the transaction has committed: that `commit` (or `rollback`, if the caller failed
 * afterwards: the writes stand) is answered here and sends nothing. Should it fail, the server skips
 * COMMIT and the transaction is open and failed; should COMMIT itself fail, it has ended; either way
 * a ROLLBACK goes out when Kysely ends the transaction (a notice only, if nothing is left to roll
 * back), and a `commit` then fails with the statement's error, as it would have had COMMIT gone
 * alone. The caller marks a statement so only when it is the last its transaction runs. Outside a
 * transaction, without parameters, or read a page at a time, the mark changes nothing.
 *
 * `onSent` hears of each round trip as it goes: its statements' texts, BEGIN and COMMIT among them
 * (what Kysely's own log cannot tell: which of its statements went, and with what).
 */
export function transactionEdges(
  client: pg.PoolClient,
  Query: typeof pg.Query,
  onSent?: (statements: readonly string[]) => void,
): (config: pg.QueryConfig) => Promise<pg.QueryResult> {
  /** Kysely's `begin` came, and no `commit` or `rollback` since. */
  let inTransaction = false;
  /** That `begin` is still held, to go with the next statement. */
  let beginHeld = false;
  /**
   * The statement that carries the transaction's COMMIT, from when it is sent (whether it succeeds or
   * fails) until Kysely's `commit` or `rollback`: no other statement is sent meanwhile.
   */
  let carrying: Promise<CarriedOutcome> | undefined;
  const send = (config: pg.QueryConfig, begin = false, commit = false) => {
    onSent?.([...(begin ? ['BEGIN'] : []), config.text, ...(commit ? ['COMMIT'] : [])]);
    return begin || commit ? withEdges(client, Query, config, begin, commit) : client.query(config);
  };
  /**
   * Kysely's `commit` or `rollback` after a statement that carried the COMMIT, once its answer is in:
   * nothing to send after a success (the writes stand either way); after a failure a ROLLBACK (a notice
   * only, where COMMIT itself failed and nothing is left to roll back), and a `commit` still fails
   * with the statement's error, as it would have had COMMIT gone alone.
   */
  const endAfterCarried = async (text: 'commit' | 'rollback', carried: Promise<CarriedOutcome>) => {
    const outcome = await carried;
    if (outcome.committed) return notSent(text.toUpperCase());
    const rolledBack = await send({ text: 'rollback' });
    if (text === 'commit') throw outcome.failure;
    return rolledBack;
  };
  return (config) => {
    const text = config.text;
    const ends = text === 'commit' || text === 'rollback';
    if (carrying) {
      if (!ends) return Promise.reject(new StatementAfterCommit());
      const carried = carrying;
      inTransaction = false;
      carrying = undefined;
      return endAfterCarried(text, carried);
    }
    if (text === 'begin' && !inTransaction) {
      inTransaction = beginHeld = true;
      return Promise.resolve(notSent('BEGIN'));
    }
    const begin = beginHeld;
    beginHeld = false;
    if (ends) {
      inTransaction = false;
      return begin ? Promise.resolve(notSent(text.toUpperCase())) : send(config);
    }
    // A simple query (no parameters) shares no round trip; nor does one read a page at a time, whose
    // round trip ends with a Flush where BEGIN and COMMIT need the Sync.
    if (!(config.values?.length ?? 0) || (config as { rows?: number }).rows) {
      return begin ? send({ text: 'begin' }).then(() => send(config)) : send(config);
    }
    if (!(inTransaction && text.endsWith(THEN_COMMIT))) return send(config, begin);
    const answer = send(config, begin, true);
    carrying = answer.then(
      (): CarriedOutcome => ({ committed: true }),
      (failure: unknown): CarriedOutcome => ({ committed: false, failure }),
    );
    return answer;
  };
}

/** How the statement that carried its transaction's COMMIT went (see transactionEdges). */
type CarriedOutcome = { committed: true } | { committed: false; failure: unknown };

/**
 * The end of a statement's text (an SQL comment) that asks for the transaction's COMMIT to go with
 * it: see transactionEdges. The statement must be the last its transaction runs.
 */
export const THEN_COMMIT = ' /* then COMMIT */';

/**
 * A statement asked for in a transaction whose COMMIT went with a statement before it (THEN_COMMIT),
 * whether that one is still on its way, succeeded or failed.
 */
export class StatementAfterCommit extends Error {
  constructor() {
    super(
      'A statement came after the one that carries its transaction’s COMMIT: it would run outside the transaction, so it was not sent.',
    );
  }
}

/** The answers made up for statements held back and never sent (see wasSent). */
const unsent = new WeakSet<pg.QueryResult>();

/** A statement Kysely asked for that went nowhere: what node-postgres answers for one without rows. */
function notSent(command: string): pg.QueryResult {
  const result = { command, rowCount: null, oid: 0, rows: [], fields: [] };
  unsent.add(result);
  return result;
}

/**
 * Whether the server saw this statement: false for a BEGIN held back, the end of an empty transaction,
 * or a COMMIT that went with the statement before it.
 */
export function wasSent(result: pg.QueryResult): boolean {
  return !unsent.has(result);
}

/**
 * The parts of node-postgres's Query and protocol writer this uses (lib/query.js, lib/connection.js).
 * They are not its public API: test/integration/postgres-transaction-edges.test.ts is what tells if
 * they change.
 */
interface ProtocolWriter {
  parse(message: { text: string; name: string; types: unknown[] }): void;
  bind(message: { portal: string; statement: string; values: unknown[] }): void;
  execute(message: { portal: string; rows?: number | undefined }): void;
  sync(): void;
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
  readonly portal: string;
  hasBeenParsed(connection: ProtocolWriter): boolean;
  prepare(connection: ProtocolWriter): void;
  /** Executes the portal and, with no row limit, ends the round trip with Sync. */
  _getRows(connection: ProtocolWriter, rows: number | undefined): void;
};

/** An unnamed statement without parameters, run: its Parse, Bind and Execute, no Sync. */
function writeBare(connection: ProtocolWriter, text: 'BEGIN' | 'COMMIT'): void {
  connection.parse({ text, name: '', types: [] });
  connection.bind({ portal: '', statement: '', values: [] });
  connection.execute({ portal: '' });
}

const edgedQueries = new WeakMap<typeof pg.Query, EdgedQuery>();

type EdgedQuery = new (
  config: pg.QueryConfig,
  callback: QueryCallback,
  edges: { begin: boolean; commit: boolean },
) => pg.Submittable;

/**
 * A Query that writes BEGIN's messages before its own Bind and Execute, and or COMMIT's after its
 * Execute, before the Sync (submit corks the socket around prepare, so all of them leave in one
 * write). Its answer is then a result for each, in that order.
 *
 * A named statement not yet parsed on the connection has its Parse written first, before BEGIN's:
 * node-postgres takes the first ParseComplete of a query for its statement's, so BEGIN's, arriving
 * first, would mark the statement parsed even if its own Parse then failed (a lock timeout, a table
 * not there yet), and the connection would never parse it again. Parse first, nothing is marked
 * unless it succeeded; should it fail, the server skips BEGIN and the rest up to the Sync, and no
 * transaction has begun. COMMIT's ParseComplete comes after the statement's own.
 */
function edgedQuery(Query: typeof pg.Query): EdgedQuery {
  let Edged = edgedQueries.get(Query);
  if (!Edged) {
    const Base = Query as unknown as PreparingQuery;
    Edged = class extends Base {
      readonly #edges: { begin: boolean; commit: boolean };

      constructor(
        config: pg.QueryConfig,
        callback: QueryCallback,
        edges: { begin: boolean; commit: boolean },
      ) {
        super(config, undefined, callback);
        this.#edges = edges;
      }

      override prepare(connection: ProtocolWriter): void {
        if (this.#edges.begin) {
          if (this.name && !this.hasBeenParsed(connection)) {
            connection.parse({ text: this.text, name: this.name, types: this.types ?? [] });
            connection.submittedNamedStatements[this.name] = this.text;
          }
          writeBare(connection, 'BEGIN');
        }
        super.prepare(connection);
      }

      override _getRows(connection: ProtocolWriter, rows: number | undefined): void {
        if (!this.#edges.commit) {
          super._getRows(connection, rows);
          return;
        }
        connection.execute({ portal: this.portal });
        writeBare(connection, 'COMMIT');
        connection.sync();
      }
    };
    edgedQueries.set(Query, Edged);
  }
  return Edged;
}

function withEdges(
  client: pg.PoolClient,
  Query: typeof pg.Query,
  config: pg.QueryConfig,
  begin: boolean,
  commit: boolean,
): Promise<pg.QueryResult> {
  const Edged = edgedQuery(Query);
  const expected = 1 + Number(begin) + Number(commit);
  return new Promise((resolve, reject) => {
    const answered: QueryCallback = (error, result) => {
      const own = Array.isArray(result) && result.length === expected ? result[Number(begin)] : undefined;
      if (error) reject(error);
      else if (own) resolve(own);
      else reject(new Error('PostgreSQL did not answer every statement sent with BEGIN or COMMIT.'));
    };
    client.query(new Edged(config, answered, { begin, commit }));
  });
}
