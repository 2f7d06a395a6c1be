import { createRequire } from 'node:module';
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely';
import type pg from 'pg';
import type { DatabaseHandle, DatabaseOptions } from './db.ts';
import { THEN_COMMIT, transactionEdges, wasSent } from './postgres-transaction-edges.ts';
import { StorageHealth, trackStorageHealth } from './storage-health.ts';
import type { Database } from './tables.ts';

let loaded: typeof pg | undefined;

/**
 * node-postgres, loaded on first use: a process on SQLite never needs it (loading it also loads Node's
 * fetch implementation, undici, to tell whether it runs on Cloudflare: 0.5 to 1.5 MB of heap in all).
 * Every use of the driver goes through here.
 */
export function nodePostgres(): typeof pg {
  loaded ??= createRequire(import.meta.url)('pg') as typeof pg;
  return loaded;
}

/** PostgreSQL type ids whose text node-postgres leaves as strings by default. */
const INT8 = 20;
const NUMERIC = 1700;

/**
 * Every number the schema stores is an integer: epoch milliseconds (bigint), money in minor units,
 * counts. node-postgres returns bigint and numeric (what sum() of a bigint gives) as strings, since
 * JavaScript numbers lose precision above 2^53; no value here comes near that, and one that did would
 * be a bug worth stopping on rather than a number to round silently.
 */
function exactNumber(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new Error(`PostgreSQL returned ${text}, beyond exact numbers.`);
  return value;
}

const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8 || oid === NUMERIC
      ? exactNumber
      : nodePostgres().types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/**
 * Names for the statements that take parameters, one per SQL text in this process. node-postgres
 * sends a named statement's text to a connection once and then only its name and values; the server
 * keeps the parsed statement for that connection, and its plan (GENERIC_PLANS), where an unnamed
 * statement is parsed and planned again on every run. The queries here are few and repeated
 * on every request, so that is work saved on both sides of every query (the SQLite module caches its
 * prepared statements the same way). Bounded by count and by the bytes of their texts (ASCII): texts
 * beyond the first MAX_NAMED_STATEMENTS, or past MAX_NAMED_TEXT_BYTES in all (IN lists of every length,
 * the import's chunks), run unnamed, so neither this process nor a connection keeps an unbounded set.
 */
export const MAX_NAMED_STATEMENTS = 1_000;
export const MAX_NAMED_TEXT_BYTES = 2 ** 20;

export class StatementNames {
  readonly #names = new Map<string, string>();
  readonly #maxNames: number;
  readonly #maxTextBytes: number;
  #textBytes = 0;

  constructor(maxNames = MAX_NAMED_STATEMENTS, maxTextBytes = MAX_NAMED_TEXT_BYTES) {
    this.#maxNames = maxNames;
    this.#maxTextBytes = maxTextBytes;
  }

  get size(): number {
    return this.#names.size;
  }

  get textBytes(): number {
    return this.#textBytes;
  }

  nameOf(text: string): string | undefined {
    let name = this.#names.get(text);
    if (
      name === undefined &&
      this.#names.size < this.#maxNames &&
      this.#textBytes + text.length <= this.#maxTextBytes
    ) {
      name = `s${this.#names.size + 1}`;
      this.#names.set(text, name);
      this.#textBytes += text.length;
    }
    return name;
  }
}

/**
 * The pool as Kysely sees it, its parameterised statements named (see StatementNames), a
 * transaction's BEGIN sent with its first statement and its COMMIT, where asked, with its last
 * (postgres-transaction-edges.ts), each statement telling
 * `health` whether a write went through or the storage failed (storage-health.ts).
 */
function namingStatements(
  pool: pg.Pool,
  health: StorageHealth,
  onRoundTrip: DatabaseOptions['onRoundTrip'],
): PostgresPool {
  const names = new StatementNames();
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      // A connection that drops while checked out (its backend terminated, the server restarting)
      // emits 'error', once it has failed the statement on its way if any, and again when its socket
      // ends: told to the storage health here (the listener every connection keeps from its start,
      // openPostgres, is what keeps the process alive). The statements fail, the connection is not
      // queryable, and the pool drops it on release.
      const dropped = (error: unknown) => health.failed(error);
      client.on('error', dropped);
      const send = transactionEdges(client, nodePostgres().Query, onRoundTrip);
      const query = (text: string, values: readonly unknown[]) =>
        send({
          text,
          values: [...values],
          // Statements without parameters (COMMIT, the migrations' DDL) stay simple queries; BEGIN
          // mostly goes with the next statement (postgres-transaction-edges.ts).
          ...(values.length > 0 && { name: names.nameOf(text) }),
        }).then(
          (result) => {
            if ((WRITES.test(text) || text.endsWith(THEN_COMMIT)) && wasSent(result)) health.written();
            return result;
          },
          (error: unknown) => {
            health.failed(error);
            throw error;
          },
        );
      const release = () => {
        client.removeListener('error', dropped);
        client.release();
      };
      return { query, release } as unknown as PostgresPoolClient;
    },
    end: () => pool.end(),
  };
}

/** Statements whose success means the database took a write. */
const WRITES = /^\s*(commit|insert|update|delete)\b/i;

/**
 * Every named statement runs with its generic plan, planned once per connection. PostgreSQL's default
 * (`auto`) plans the first five runs for their values and keeps doing so whenever a generic plan looks
 * no cheaper: the request path's statements went generic that way, but not the outbox worker's, run
 * once per batch with lists whose length varies (pg_stat_statements: reading a batch's facts took
 * 1.4–1.7 ms of planning on every run, 0.13–0.18 ms each for the claim and the outcomes' UPDATE). A
 * plan for any values is the right plan for the statements here, keyed by the organisation and an id
 * or a time range, provided what a plan must know is in the SQL: every LIMIT (literal-limit.ts) and the
 * condition of a partial index (the outbox worker's `status = 'pending'`). Unnamed statements (past
 * StatementNames' bounds) get a generic plan too, made afresh on every run. docs/decisions/
 * postgres-several-instances.md.
 */
const GENERIC_PLANS = '-c plan_cache_mode=force_generic_plan';

/** Connections per instance; several instances share the server's max_connections (100 by default). */
const DEFAULT_POOL_SIZE = 10;

/** How long a connection is quiet before the kernel starts probing it (TCP_KEEPIDLE). */
export const KEEPALIVE_IDLE_MS = 30_000;

/**
 * PG_POOL_SIZE: connections this process keeps, 1 to 1000. pg-pool takes 0 or NaN as its default and
 * a negative size as a pool that never hands out a connection: every statement would wait for ever.
 */
function poolSize(raw: string | undefined): number {
  const value = raw?.trim() ?? '';
  if (value === '') return DEFAULT_POOL_SIZE;
  const size = Number(value);
  if (!/^\d+$/.test(value) || size < 1 || size > 1000) {
    throw new Error(`PG_POOL_SIZE must be a whole number from 1 to 1000, got "${raw}".`);
  }
  return size;
}

/**
 * A PostgreSQL database for DATABASE_URL=postgres://user:password@host:port/database. Several
 * `booking serve` instances may share it: what keeps them consistent lives in the database
 * (constraints, locks taken in transactions), not in any one process. PG_POOL_SIZE sets how many
 * connections this process keeps.
 */
export function openPostgres(url: string, options: DatabaseOptions): DatabaseHandle {
  // Said without the URL: it holds the password. (URL's own refusal is a bare "Invalid URL".)
  if (!URL.canParse(url)) {
    throw new Error(
      'DATABASE_URL is not a valid URL: postgres://user:password@host:5432/database, with a port of digits and the user name and password percent-encoded.',
    );
  }
  const parsed = new URL(url);
  // node-postgres takes `options` from the URL over the config's, and from PGOPTIONS only when neither
  // has any: both are kept here, before this process's own settings (a later -c wins).
  const given = [parsed.searchParams.get('options'), process.env.PGOPTIONS].filter(Boolean);
  let connectionString = url;
  if (parsed.searchParams.has('options')) {
    const withoutOptions = new URL(url);
    withoutOptions.searchParams.delete('options');
    connectionString = withoutOptions.toString();
  }
  const pool = new (nodePostgres().Pool)({
    connectionString,
    max: poolSize(process.env.PG_POOL_SIZE),
    types: TYPES,
    // TCP keepalive: a connection whose server vanished without a word (a network partition, a
    // failover behind a NAT that forgets it) is found dead by the kernel's probes and fails its
    // statement, instead of a worker's pass or a request waiting on it for ever.
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_IDLE_MS,
    options: [
      ...given,
      GENERIC_PLANS,
      // `booking check` only reads: the server itself then refuses any write, whatever the code does.
      ...(options.readonly ? ['-c default_transaction_read_only=on'] : []),
    ].join(' '),
  });
  // An idle connection the server drops (a restart, a failover) must not take the process down.
  pool.on('error', () => undefined);
  // Nor one dropped just as it was made: a backend terminated at start-up may send its ReadyForQuery
  // and its FATAL error in one read, and pg-pool hands the connection out (its idle listener removed)
  // on the first, before namingStatements' listener is on it: the second was an 'error' nobody heard,
  // and `booking serve` exited. Each connection keeps a listener of its own for its whole life.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const onQuery = options.onQuery;
  const health = new StorageHealth();
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: namingStatements(pool, health, options.onRoundTrip) }),
    ...(onQuery && { log: (event) => onQuery(event.query.sql) }),
  });
  trackStorageHealth(db, health);
  return {
    db,
    dialect: 'postgres',
    // Never the password.
    description: `PostgreSQL ${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`,
    close: () => db.destroy(),
  };
}

/**
 * The advisory lock every process working on the database holds, shared, for as long as it runs
 * (`booking serve`, `booking mcp`, the commands): `booking restore` takes it exclusively, so it is
 * refused while any of them runs, and a process starting meanwhile waits until the restore is done.
 */
export const DATABASE_IN_USE_LOCK = `hashtextextended('booking-engine:database-in-use', 0)`;

/**
 * Holds the shared in-use lock on a connection of its own (outside the pool, whose connections come
 * and go) until the returned function is called; a process that dies lets go with its connection.
 */
export async function holdInUseLock(url: string): Promise<() => Promise<void>> {
  const client = new (nodePostgres().Client)({ connectionString: url });
  // A dropped connection loses the lock but must not take the process down.
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query(`SELECT pg_advisory_lock_shared(${DATABASE_IN_USE_LOCK})`);
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
  return () => client.end().catch(() => undefined);
}
