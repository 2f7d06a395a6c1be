import type { ConnectorSummary } from '../../app/oauth-connectors.ts';
import { actionForm, esc, type Formats } from './page.ts';

/**
 * The connectors page of the console (design.md 9.3, owners and admins): the apps an owner or admin
 * connected through the OAuth consent page (hosted MCP connectors), what each may do, when it was
 * last used, and a Revoke button: revoked, its next /mcp call is refused and it cannot refresh.
 */
const SCOPE_WORDS = {
  'bookings:read': 'Read (bookings:read)',
  'bookings:write': 'Read and write (bookings:write)',
} as const;

export function connectorsBody(connectors: readonly ConnectorSummary[], f: Formats, csrf: string): string {
  const rows = connectors
    .map((c) => {
      const name = c.clientName ?? c.clientId;
      const state =
        c.revokedAt === null
          ? actionForm(
              `/console/connectors/${encodeURIComponent(c.id)}/revoke`,
              csrf,
              `Revoke ${name}`,
              {},
              'danger',
            )
          : `Revoked ${f.when(c.revokedAt)}`;
      return `<tr><td>${esc(name)}${c.clientName ? `<br><small>${esc(c.clientId)}</small>` : ''}</td><td>${esc(SCOPE_WORDS[c.scope])}</td><td>${f.when(c.createdAt)}</td><td>${c.lastUsedAt === null ? 'Never' : f.when(c.lastUsedAt)}</td><td>${state}</td></tr>`;
    })
    .join('');
  return `<h1>Connectors</h1>
<p>Apps connected to this organisation's bookings by signing in (hosted MCP connectors, such as a custom connector in an AI assistant). Connect one by giving it the address of this server's <code>/mcp</code>; an owner or admin signs in and allows it.</p>
${
  connectors.length === 0
    ? '<p>No app is connected.</p>'
    : `<div class="scroll"><table><thead><tr><th>App</th><th>May</th><th>Connected</th><th>Last used</th><th>State</th></tr></thead><tbody>${rows}</tbody></table></div>`
}`;
}
