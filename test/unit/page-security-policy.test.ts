import { describe, expect, it } from 'vitest';
import { contentSecurityPolicy } from '../../src/http/pages/page-shell.ts';

/**
 * The pages' Content-Security-Policy (page-shell.ts): the customer pages', the console's, and a page
 * whose forms lead on to other origins (a payment provider's hosted pages, a shop's success URL).
 */
describe('the pages’ Content-Security-Policy', () => {
  it('allows no script and no framing, and form posts to this origin only, unless told', () => {
    expect(contentSecurityPolicy()).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(contentSecurityPolicy({ ownScript: true })).toBe(
      "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
  });

  it("names the origins of a page's form targets, once each, and nothing else of them", () => {
    const policy = contentSecurityPolicy({
      formTargets: [
        'https://checkout.stripe.com',
        'https://checkout.stripe.com/c/pay/cs_test_1#frag',
        'http://127.0.0.1:4242/c/pay/cs_test_2',
        'https://Shop.Example:443/done?ref={booking_reference}',
        'http://[::1]:8080/x',
        '/checkout/abc/done',
      ],
    });
    expect(policy).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' https://checkout.stripe.com http://127.0.0.1:4242 https://shop.example http://[::1]:8080; frame-ancestors 'none'; base-uri 'none'",
    );
  });

  it("names an app's own URI scheme (a desktop MCP host's OAuth redirect URI) by its scheme alone", () => {
    const policy = contentSecurityPolicy({
      formTargets: ['cursor://anysphere.cursor-mcp/oauth/callback', 'com.example.App:/oauth2redirect'],
    });
    expect(policy).toContain("form-action 'self' cursor: com.example.app:;");
  });

  it('never lets a target add to the policy: hosts with policy syntax, and non-web schemes, are left out', () => {
    const policy = contentSecurityPolicy({
      formTargets: [
        'https://a;script-src.example/',
        'https://a,b.example/',
        "https://a'unsafe-inline'.example/",
        'javascript:alert(1)',
        'data:text/html,x',
        'about:blank',
        'file:///etc/passwd',
        'not a url',
      ],
    });
    expect(policy).toBe(contentSecurityPolicy());
  });
});
