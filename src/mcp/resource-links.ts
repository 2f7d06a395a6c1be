/**
 * Links in a tool's answer (a deposit's payment_url, a booking's booking_page_url) also given as MCP
 * `resource_link` content items (design.md 9.3): a host shows them as links the user can open, where
 * a link inside the JSON text is only text. resource_link came with protocol revision 2025-06-18; a
 * client of an older one keeps the text alone (its schema knows no such item).
 */

/** A resource_link content item, its members in the order the SDK's schema re-parses them. */
export interface ResourceLinkItem {
  name: string;
  title: string;
  uri: string;
  description: string;
  mimeType: string;
  type: 'resource_link';
}

/** The first revision with resource_link content. */
const FIRST_REVISION_WITH_LINKS = '2025-06-18';

/** Whether a client of this protocol revision reads resource_link items (revisions are ISO dates). */
export function readsResourceLinks(revision: string | undefined): boolean {
  return revision !== undefined && revision >= FIRST_REVISION_WITH_LINKS;
}

const LINKS = {
  payment_url: {
    title: 'Pay the deposit',
    description: "The customer's page to pay the deposit that holds the booking.",
  },
  booking_page_url: {
    title: 'Booking page',
    description: "The customer's page for the booking: finish it, pay, change or cancel it.",
  },
} as const;

/**
 * How deep an answer is searched: booking.payment_url, upcoming_bookings[].booking_page_url, and each
 * visit of a series, booking.series.occurrences[].booking_page_url (one level deeper than the rest).
 */
const MAX_DEPTH = 4;

/** Every link of an answer, once each, named after its field and its booking's reference. */
export function resourceLinksOf(answer: Record<string, unknown>): ResourceLinkItem[] {
  const found = new Map<string, ResourceLinkItem>();
  const visit = (node: unknown, depth: number): void => {
    if (depth > MAX_DEPTH || typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item, depth + 1);
      return;
    }
    const record = node as Record<string, unknown>;
    const reference = typeof record.reference === 'string' ? ` ${record.reference}` : '';
    for (const [field, value] of Object.entries(record)) {
      if (field in LINKS && typeof value === 'string' && /^https?:\/\//.test(value) && !found.has(value)) {
        const { title, description } = LINKS[field as keyof typeof LINKS];
        found.set(value, {
          name: field,
          title: `${title}${reference}`,
          uri: value,
          description,
          mimeType: 'text/html',
          type: 'resource_link',
        });
      } else {
        visit(value, depth + 1);
      }
    }
  };
  visit(answer, 0);
  return [...found.values()];
}
