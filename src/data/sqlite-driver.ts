import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * better-sqlite3, in the major version that runs safely on this Node.js. Every use of the driver goes
 * through this module (a unit test keeps it so).
 *
 * - better-sqlite3 13 is built on Node-API: one binary, shipped inside the npm package, for every Node.js
 *   with Node-API 10 (22.14 and later, 24): the driver on Node 22 and 24.
 * - better-sqlite3 12 derives its objects from node::ObjectWrap, compiled from Node's headers at install
 *   time; since Node 24.19 that header makes the process abort when the garbage collector frees a
 *   statement (nodejs/node#65446), so 12 must not run on Node 24. But 13 cannot run on Node 20, which
 *   lacks Node-API 10 (it crashes on load). Node 20 (end of life, still the development machines' Node)
 *   therefore keeps 12, installed under the alias `better-sqlite3-12` as an optional dependency.
 *
 * Both expose the same API (`@types/better-sqlite3` describes it). With Node 20 gone, the alias and
 * this choice go: import the value from `better-sqlite3` here.
 */
const DRIVER_PACKAGE = Number(process.versions.napi) >= 10 ? 'better-sqlite3' : 'better-sqlite3-12';

export type SqliteConnection = BetterSqlite3.Database;
export type SqliteStatement = BetterSqlite3.Statement;
/** A function run as one transaction (`connection.transaction(fn)`), with `.immediate` and the rest. */
export type SqliteTransaction<F extends (...args: never[]) => unknown> = BetterSqlite3.Transaction<F>;

/** The driver's Database constructor: `new SqliteDatabase(file, options)`. */
export const SqliteDatabase = createRequire(import.meta.url)(DRIVER_PACKAGE) as typeof BetterSqlite3;
