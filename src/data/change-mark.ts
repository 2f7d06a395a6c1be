import type { Db } from './db.ts';

/**
 * What tells a process, without a query, that nothing in its database has changed since it last
 * looked: on embedded SQLite, the connection's `PRAGMA data_version` (which moves whenever another
 * connection, in this process or another, commits to the file) beside a count of this connection's
 * own writes (which data_version does not see). While the mark stays the same, a row read before is
 * still the row; whatever commits anywhere moves it. PostgreSQL has no such cheap signal across
 * instances: no mark, and callers read as they always did.
 */
export type ChangeMark = () => string;

const marks = new WeakMap<Db, ChangeMark>();

export function registerChangeMark(db: Db, mark: ChangeMark): void {
  marks.set(db, mark);
}

/** The database's current change mark, or null where it has none (PostgreSQL). */
export function changeMarkOf(db: Db): ChangeMark | null {
  return marks.get(db) ?? null;
}

/**
 * Rows read through `read` and kept while their database's change mark stays the same (on a database
 * without one, every call reads). Any change anywhere drops them all: they are for what every request
 * asks again and again while nothing is written (an API key and its organisation's versions), not a
 * cache that must survive writes. At most `capacity` rows per database; a full cache starts afresh.
 * Callers must not change the rows they are given: the next caller gets the same objects.
 */
export class UnchangedRows<K, V> {
  readonly #byDatabase = new WeakMap<Db, { mark: string; rows: Map<K, V> }>();

  readonly #capacity: number;

  constructor(capacity = 1_000) {
    this.#capacity = capacity;
  }

  async get(db: Db, key: K, read: () => Promise<V | undefined>): Promise<V | undefined> {
    const changeMark = changeMarkOf(db);
    if (changeMark === null) return read();
    const mark = changeMark();
    let kept = this.#byDatabase.get(db);
    if (kept?.mark !== mark) {
      kept = { mark, rows: new Map() };
      this.#byDatabase.set(db, kept);
    }
    const row = kept.rows.get(key);
    if (row !== undefined) return row;
    const fresh = await read();
    // Kept only if nothing changed while it was read: otherwise it may predate the change.
    if (fresh !== undefined && changeMark() === mark && this.#byDatabase.get(db) === kept) {
      if (kept.rows.size >= this.#capacity) kept.rows.clear();
      kept.rows.set(key, fresh);
    }
    return fresh;
  }
}
