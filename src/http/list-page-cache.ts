import type { NameKey } from '../domain/catalogue.ts';

/** One page of a catalogue listing, its items already serialised. */
export interface CachedPage {
  dataJson: string;
  next: NameKey | null;
}

/**
 * Serialised pages of the catalogue listings (locations, services, staff), which are read on nearly
 * every call of a voice agent and change only when the catalogue does.
 *
 * Keys carry the organisation's catalogue_version, which database triggers bump on every catalogue
 * change and which the request's authentication query reads anyway: a page cached before a change is
 * never served after it, whichever process made the change. Old versions age out of the LRU order.
 */
export class ListPageCache {
  readonly #pages = new Map<string, CachedPage>();
  readonly #capacity: number;

  constructor(capacity = 1000) {
    this.#capacity = capacity;
  }

  async getOrLoad(key: string, load: () => Promise<CachedPage>): Promise<CachedPage> {
    const hit = this.#pages.get(key);
    if (hit) {
      // Re-insert to mark as most recently used.
      this.#pages.delete(key);
      this.#pages.set(key, hit);
      return hit;
    }
    const page = await load();
    if (this.#pages.size >= this.#capacity) {
      const oldest = this.#pages.keys().next();
      if (!oldest.done) this.#pages.delete(oldest.value);
    }
    this.#pages.set(key, page);
    return page;
  }

  get size(): number {
    return this.#pages.size;
  }
}
