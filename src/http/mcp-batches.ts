/**
 * JSON-RPC batches, one rule on every MCP transport (docs/mcp.md, "Batches"): MCP had them in one
 * protocol revision only, 2025-03-26 (2025-06-18 removed them again, and 2024-11-05 and 2026-07-28
 * have none). A batch is served on that revision (POST /mcp, where a request without
 * MCP-Protocol-Version is 2025-03-26 as the specification says, and stdio once 2025-03-26 was
 * negotiated), and refused on any other with JSON-RPC's Invalid Request (-32600), id null, and this
 * message. The legacy SSE transport is 2024-11-05's: it takes one message per POST.
 */
export const BATCH_REVISION = '2025-03-26';

/** Why a batch sent on `revision` is refused, or undefined where it is served. */
export function batchRefusal(revision: string | undefined): string | undefined {
  if (revision === BATCH_REVISION) return undefined;
  const on =
    revision === undefined ? 'before a protocol revision is agreed' : `on protocol revision ${revision}`;
  return `JSON-RPC batches are not accepted ${on}: only revision ${BATCH_REVISION} had them (2025-06-18 removed them). Send one message at a time.`;
}

/**
 * Why a batch that would be served is refused all the same: two of its requests share an id. Each
 * request's answer is known only by its id, so one of the two would be lost (the SDK's Streamable HTTP
 * transport answers both with whichever came first, and not as an array), though both had run.
 */
export function duplicateIdRefusal(batch: readonly unknown[]): string | undefined {
  const seen = new Set<string>();
  for (const message of batch) {
    const { id, method } = (message ?? {}) as { id?: unknown; method?: unknown };
    if (typeof method !== 'string' || (typeof id !== 'string' && typeof id !== 'number')) continue;
    const key = `${typeof id}:${id}`;
    if (seen.has(key)) {
      return `Invalid Request: two requests of the batch have the id ${JSON.stringify(id)}; give each request its own id.`;
    }
    seen.add(key);
  }
  return undefined;
}

/**
 * The revision a POST /mcp batch is sent for: its MCP-Protocol-Version header; without one, the
 * protocolVersion of an initialize it holds, else 2025-03-26 (what a server assumes without the header).
 */
export function revisionOfHttpBatch(
  header: string | string[] | undefined,
  batch: readonly unknown[],
): string {
  if (typeof header === 'string') return header;
  for (const message of batch) {
    const params = (message as { method?: unknown; params?: { protocolVersion?: unknown } } | null) ?? {};
    if (params.method === 'initialize' && typeof params.params?.protocolVersion === 'string')
      return params.params.protocolVersion;
  }
  return BATCH_REVISION;
}
