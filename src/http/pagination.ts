import type { PageRequest } from '../app/directory-service.ts';
import { isNameKey, type NameKey, type Page } from '../domain/catalogue.ts';
import type { CursorCodec } from './cursor.ts';
import { DEFAULT_PAGE_SIZE } from './resources/common.ts';

/** Turns the cursor and limit of a list request into a page request for the service layer. */
export function readPageRequest(
  codec: CursorCodec,
  listing: string,
  query: { cursor?: string | undefined; limit?: number | undefined },
  nowMs: number,
): PageRequest {
  const after = query.cursor ? codec.decode<NameKey>(listing, query.cursor, nowMs, isNameKey) : null;
  return { after, limit: query.limit ?? DEFAULT_PAGE_SIZE };
}

/** The list response body: data, plus next_cursor when another page exists. */
export function pageBody<T, R>(
  codec: CursorCodec,
  listing: string,
  page: Page<T>,
  present: (item: T) => R,
  nowMs: number,
): { data: R[]; next_cursor?: string } {
  const data = page.items.map(present);
  return page.next ? { data, next_cursor: codec.encode(listing, page.next, nowMs) } : { data };
}
