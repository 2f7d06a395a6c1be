import type { NameKey } from '../domain/catalogue.ts';

/**
 * One page of a catalogue listing, serialised: `{"data":[...]}` as the UTF-8 bytes sent, so that a
 * request sends them as they are (no string to measure, flatten and encode again; a page is 5-20 KB).
 */
export interface CachedPage {
  body: Buffer;
  next: NameKey | null;
}

/** Bounds of the cache: pages, and bytes of their serialised items. */
export const MAX_PAGES = 1000;
export const MAX_PAGE_BYTES = 8 * 2 ** 20;

/**
 * Serialised pages of the catalogue listings (locations, services, staff), which are read on nearly
 * every call of a voice agent and change only when the catalogue does.
 *
 * Keys carry the organisation's catalogue_version, which database triggers bump on every catalogue
 * change and which the request's authentication query reads anyway: a page cached before a change is
 * never served after it, whichever process made the change. Old versions age out of the LRU order.
 * Bounded by pages and by the bytes of their JSON; a page larger than the whole bound is served but
 * not kept.
 */
export class ListPageCache {
  readonly #pages = new Map<string, CachedPage>();
  readonly #capacity: number;
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(capacity = MAX_PAGES, maxBytes = MAX_PAGE_BYTES) {
    this.#capacity = capacity;
    this.#maxBytes = maxBytes;
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
    const bytes = page.body.length;
    if (bytes > this.#maxBytes) return page;
    // Least recently used first out (a concurrent load of the same key may have kept it meanwhile).
    this.#drop(key);
    for (const [oldest] of this.#pages) {
      if (this.#pages.size < this.#capacity && this.#bytes + bytes <= this.#maxBytes) break;
      this.#drop(oldest);
    }
    this.#pages.set(key, page);
    this.#bytes += bytes;
    return page;
  }

  get size(): number {
    return this.#pages.size;
  }

  get bytes(): number {
    return this.#bytes;
  }

  #drop(key: string): void {
    const page = this.#pages.get(key);
    if (!page) return;
    this.#pages.delete(key);
    this.#bytes -= page.body.length;
  }
}
