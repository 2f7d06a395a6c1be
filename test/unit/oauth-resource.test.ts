import { describe, expect, it } from 'vitest';
import { namesResource } from '../../src/http/oauth/authorization-server.ts';

/**
 * Which resource indicators (RFC 8707) name this server's /mcp: the MCP authorization spec says a
 * server SHOULD accept an upper-case scheme and host; RFC 3986 makes a default port the same URL.
 */
describe('namesResource', () => {
  const resource = 'https://booking.example.com/mcp';

  it('takes the same URL however its scheme and host are cased, or its default port written', () => {
    for (const indicator of [
      resource,
      'HTTPS://booking.example.com/mcp',
      'https://Booking.Example.COM/mcp',
      'https://booking.example.com:443/mcp',
    ]) {
      expect(namesResource(indicator, resource), indicator).toBe(true);
    }
  });

  it('refuses another path, port, scheme, host, a query or what is no URL', () => {
    for (const indicator of [
      'https://booking.example.com/MCP',
      'https://booking.example.com/mcp/',
      'https://booking.example.com:8443/mcp',
      'http://booking.example.com/mcp',
      'https://elsewhere.example/mcp',
      'https://booking.example.com/mcp?x=1',
      'https://user@booking.example.com/mcp',
      'booking.example.com/mcp',
      '',
    ]) {
      expect(namesResource(indicator, resource), indicator).toBe(false);
    }
  });
});
