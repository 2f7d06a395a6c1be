import type { Db } from '../../../data/database.ts';
import { insertAll, type OwnedRows, rowsOfOrganisation, sameRows } from './write-support.ts';

/**
 * The aliases a service or staff member owns (one row each, in the file's order), written like the
 * other owned rows: replaced whole, only when they differ from the file. Unlike those, an alias is
 * unique across its organisation, so one may move from one entity to another in a single import:
 * every list that changes is removed before any entity is written (`clearChanged`), as the location
 * writer parks changing slugs first.
 */

const OWNER_COLUMN = { service_aliases: 'service_id', staff_aliases: 'staff_id' } as const;
type AliasTable = keyof typeof OWNER_COLUMN;

interface Alias {
  position: number;
  alias: string;
}

export class AliasLists {
  readonly #trx: Db;
  readonly #table: AliasTable;
  readonly #orgId: string;
  readonly #stored: Map<string, Alias[]>;
  readonly #wanted = new Map<string, Alias[]>();

  private constructor(trx: Db, table: AliasTable, orgId: string, stored: Map<string, Alias[]>) {
    this.#trx = trx;
    this.#table = table;
    this.#orgId = orgId;
    this.#stored = stored;
  }

  /** The organisation's stored aliases of one kind, read once per import. */
  static async load(trx: Db, table: AliasTable, orgId: string): Promise<AliasLists> {
    const stored = new Map<string, Alias[]>();
    const owner = OWNER_COLUMN[table];
    for (const row of await rowsOfOrganisation(trx, table, orgId)) {
      const ownerId = (row as unknown as Record<typeof owner, string>)[owner];
      const list = stored.get(ownerId) ?? [];
      list.push({ position: row.position, alias: row.alias });
      stored.set(ownerId, list);
    }
    return new AliasLists(trx, table, orgId, stored);
  }

  /** Records what the file gives an entity; call it for every entity before `clearChanged`. */
  want(ownerId: string, aliases: readonly string[]): void {
    this.#wanted.set(
      ownerId,
      aliases.map((alias, position) => ({ position, alias })),
    );
  }

  #changed(ownerId: string): boolean {
    const wanted = this.#wanted.get(ownerId) ?? [];
    return !sameRows(this.#stored.get(ownerId) ?? [], wanted, ['position', 'alias']);
  }

  /** Removes every stored list that the file changes, so that none stands in another's way. */
  async clearChanged(): Promise<void> {
    const owner = OWNER_COLUMN[this.#table];
    for (const ownerId of this.#wanted.keys()) {
      if (!this.#stored.has(ownerId) || !this.#changed(ownerId)) continue;
      // Kysely cannot type a WHERE on a table left generic; both tables have these columns.
      await this.#trx
        .deleteFrom(this.#table as 'service_aliases')
        .where('organisation_id', '=', this.#orgId)
        .where(owner as 'service_id', '=', ownerId)
        .execute();
    }
  }

  /**
   * The entity's aliases as owned rows of its upsert. Removal was done by `clearChanged`, and the
   * rows are written only when they changed, whatever else the entity owns changed with them.
   */
  owned(ownerId: string): OwnedRows {
    const changed = this.#changed(ownerId);
    const rows = (this.#wanted.get(ownerId) ?? []).map((alias) => ({
      organisation_id: this.#orgId,
      [OWNER_COLUMN[this.#table]]: ownerId,
      ...alias,
    }));
    return {
      changed,
      remove: async () => {},
      insert: async () => {
        if (changed) await insertAll(this.#trx, this.#table as 'service_aliases', rows as never[]);
      },
    };
  }
}

/** Several owned collections as one: any difference rewrites them (each part decides what it writes). */
export function ownedTogether(...parts: OwnedRows[]): OwnedRows {
  return {
    changed: parts.some((part) => part.changed),
    remove: async () => {
      for (const part of parts) await part.remove();
    },
    insert: async () => {
      for (const part of parts) await part.insert();
    },
  };
}
