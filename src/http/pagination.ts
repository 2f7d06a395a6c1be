import type { FastifyReply } from 'fastify';
import type { PageRequest } from '../app/directory-service.ts';
import { DEFAULT_PAGE_SIZE } from '../contract/common.ts';
import { isNameKey, type NameKey, type Page } from '../domain/catalogue.ts';
import type { CursorCodec } from './cursor.ts';
import type { CachedPage, ListPageCache } from './list-page-cache.ts';

/** A paginated listing of one organisation, e.g. "services at soho". */
export interface Listing {
  organisationId: string;
  catalogueVersion: number;
  /** Names the listing within the organisation; cursors are bound to it. */
  name: string;
}

/** Turns the cursor and limit of a list request into a page request for the service layer. */
export function readPageRequest(
  codec: CursorCodec,
  listing: Listing,
  query: { cursor?: string | undefined; limit?: number | undefined },
  nowMs: number,
): PageRequest {
  const after = query.cursor
    ? codec.decode<NameKey>(cursorScope(listing), query.cursor, nowMs, isNameKey)
    : null;
  return { after, limit: query.limit ?? DEFAULT_PAGE_SIZE };
}

/**
 * Answers a list request: {data, next_cursor?}. The page comes from the cache when this version of
 * the catalogue has been listed before; only the cursor (which carries its own expiry) is made anew.
 */
export async function sendPage<T, R>(
  reply: FastifyReply,
  deps: { cursors: CursorCodec; pages: ListPageCache; nowMs: number },
  listing: Listing,
  pageRequest: PageRequest,
  load: () => Promise<Page<T>>,
  present: (item: T) => R,
): Promise<FastifyReply> {
  const key = [
    listing.organisationId,
    listing.catalogueVersion,
    listing.name,
    pageRequest.limit,
    pageRequest.after?.name ?? '',
    pageRequest.after?.id ?? '',
  ].join('\u0000');
  const page = await deps.pages.getOrLoad(key, async (): Promise<CachedPage> => {
    const loaded = await load();
    return {
      body: Buffer.from(`{"data":${JSON.stringify(loaded.items.map(present))}}`),
      next: loaded.next,
    };
  });
  const type = reply.type('application/json; charset=utf-8');
  if (!page.next) return type.send(page.body);
  // The cursor is made anew for every request (it carries its own expiry): in before the closing brace.
  const cursor = deps.cursors.encode(cursorScope(listing), page.next, deps.nowMs);
  return type.send(
    Buffer.concat([
      page.body.subarray(0, page.body.length - 1),
      Buffer.from(`,"next_cursor":${JSON.stringify(cursor)}}`),
    ]),
  );
}

function cursorScope(listing: Listing): string {
  return `${listing.organisationId}:${listing.name}`;
}
