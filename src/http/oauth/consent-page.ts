import type { ConnectorScope } from '../../app/oauth-connectors.ts';
import { esc } from '../pages/page-shell.ts';

/**
 * The consent page of the OAuth sign-in (design.md 9.3): who asks (the client's name and its id,
 * which for a Client ID Metadata Document is the URL that vouches for it), a console sign-in
 * (organisation, e-mail, password; owners and admins only) and the one scope granted.
 */
export interface ConsentView {
  action: string;
  clientName: string | null;
  clientId: string;
  redirectHost: string;
  scopes: readonly ConnectorScope[];
  chosen: ConnectorScope;
  organisation?: string;
  email?: string;
  error?: string;
}

const SCOPE_WORDS: Record<ConnectorScope, string> = {
  'bookings:read': 'See locations, services, staff, free times and bookings (bookings:read)',
  'bookings:write':
    'See them, and also book, move and cancel appointments and take messages (bookings:write)',
};

export function consentBody(view: ConsentView): string {
  const who = view.clientName
    ? `${esc(view.clientName)} <small>(${esc(view.clientId)})</small>`
    : esc(view.clientId);
  const choices = view.scopes
    .map(
      (scope) =>
        `<label class="choice"><input type="radio" name="scope" value="${esc(scope)}"${scope === view.chosen ? ' checked' : ''}>${esc(SCOPE_WORDS[scope])}</label>`,
    )
    .join('\n');
  return `<h1>Connect ${view.clientName ? esc(view.clientName) : 'an app'} to your bookings</h1>
<p>${who} asks to act for your organisation through this booking engine's MCP tools. After you allow it, you return to ${esc(view.redirectHost)}.</p>
${view.error ? `<p class="notice" role="alert">${esc(view.error)}</p>` : ''}<form method="post" action="${esc(view.action)}">
<p>Sign in with your console account (an owner or admin of the organisation).</p>
<label for="organisation">Organisation</label><input id="organisation" name="organisation" required autocomplete="organization" value="${esc(view.organisation ?? '')}">
<label for="email">E-mail</label><input id="email" name="email" type="email" required autocomplete="username" value="${esc(view.email ?? '')}">
<label for="password">Password</label><input id="password" name="password" type="password" required autocomplete="current-password">
<fieldset><legend>What it may do</legend>
${choices}
</fieldset>
<p>You can disconnect it at any time in the console, under Connectors.</p>
<div class="actions"><button type="submit" name="decision" value="allow" class="primary">Allow</button><button type="submit" name="decision" value="deny" class="secondary" formnovalidate>Deny</button></div>
</form>`;
}

export function expiredBody(): string {
  return `<h1>This sign-in has ended</h1>
<p>It was finished already or waited too long. Start connecting again from your app.</p>`;
}

/**
 * The page of a sign-in the authorization server refuses before it can send the browser back to the
 * app (an unknown client, a redirect URI it did not register...). Whoever reads it followed the app's
 * link: it says what to do, and keeps the library's words for the app's makers.
 */
export function refusedSignInBody(error: string, description: string | undefined): string {
  const advice =
    error === 'invalid_client'
      ? 'This booking engine does not know the app that sent you here, or could not read its description: its registration may have ended. Remove the connector in your app and add it again.'
      : error === 'rate_limited'
        ? 'Too many apps asked to connect from your network in the last minute. Wait a minute, then start connecting again from your app.'
        : 'Your app asked to connect in a way this booking engine cannot take. Start connecting again from your app; if this page comes back, tell the app’s makers what it says below.';
  return `<h1>Sign-in failed</h1>
<p>${esc(advice)}</p>
<p><small>${esc(error)}${description ? `: ${esc(description)}` : ''}</small></p>`;
}
