import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { AppError } from '../../domain/errors.ts';
import { ipv4Of, ipv6Groups } from '../ip-address.ts';

/**
 * Where deliveries may go (design.md 9.2): https only, except loopback with WEBHOOK_ALLOW_INSECURE=1;
 * never to private, link-local or cloud-metadata addresses unless WEBHOOK_ALLOW_PRIVATE_NETWORKS=1
 * allows the first two (metadata and reserved ranges stay refused). Checked when an endpoint is saved
 * and again on every send, against the addresses the name resolves to then (DNS can change), and the
 * connection is made to an address that was checked (sender.ts passes `checkedLookup`), so a name that
 * answers differently on a second lookup cannot slip through.
 */
export interface DestinationPolicy {
  /** WEBHOOK_ALLOW_INSECURE=1: loopback allowed, over plain http too (tests, local development). */
  allowInsecure: boolean;
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS=1: private and link-local ranges allowed (an on-premises receiver). */
  allowPrivateNetworks: boolean;
}

export const STRICT_POLICY: DestinationPolicy = { allowInsecure: false, allowPrivateNetworks: false };

type AddressKind = 'public' | 'loopback' | 'private' | 'link_local' | 'metadata' | 'reserved';

function blockList(v4: readonly [string, number][], v6: readonly [string, number][]): BlockList {
  const list = new BlockList();
  for (const [net, prefix] of v4) list.addSubnet(net, prefix, 'ipv4');
  for (const [net, prefix] of v6) list.addSubnet(net, prefix, 'ipv6');
  return list;
}

// Checked in this order: the metadata addresses lie inside link-local and private ranges.
const RANGES: [AddressKind, BlockList][] = [
  [
    'metadata',
    blockList(
      [
        ['169.254.169.254', 32],
        ['169.254.170.2', 32],
        ['100.100.100.200', 32],
      ],
      [['fd00:ec2::254', 128]],
    ),
  ],
  ['loopback', blockList([['127.0.0.0', 8]], [['::1', 128]])],
  [
    'private',
    blockList(
      [
        ['10.0.0.0', 8],
        ['172.16.0.0', 12],
        ['192.168.0.0', 16],
        ['100.64.0.0', 10],
      ],
      // Unique local addresses, and the site-local ones they replaced (deprecated, still routed on
      // some internal networks).
      [
        ['fc00::', 7],
        ['fec0::', 10],
      ],
    ),
  ],
  ['link_local', blockList([['169.254.0.0', 16]], [['fe80::', 10]])],
  [
    'reserved',
    blockList(
      [
        ['0.0.0.0', 8],
        ['192.0.0.0', 24],
        ['192.0.2.0', 24],
        ['198.18.0.0', 15],
        ['198.51.100.0', 24],
        ['203.0.113.0', 24],
        ['224.0.0.0', 4],
        ['240.0.0.0', 4],
      ],
      [
        ['::', 128],
        ['64:ff9b:1::', 48],
        ['100::', 64],
        ['2001:db8::', 32],
        ['ff00::', 8],
      ],
    ),
  ],
];

/**
 * What an IP address is. An IPv6 address that carries an IPv4 address is what its IPv4 is: written
 * as IPv6 (::ffff:a.b.c.d, ::ffff:0:a.b.c.d), through NAT64's well-known prefix (64:ff9b::a.b.c.d,
 * which a NAT64 gateway forwards to that IPv4 address, private ones included), IPv4-compatible
 * (::a.b.c.d) or 6to4 (2002:aabb:ccdd::).
 */
export function addressKind(address: string): AddressKind {
  const v4 = embeddedIpv4(address);
  const family = v4 ? 'ipv4' : isIP(address) === 6 ? 'ipv6' : 'ipv4';
  const ip = v4 ?? address;
  for (const [kind, list] of RANGES) if (list.check(ip, family)) return kind;
  return 'public';
}

function embeddedIpv4(address: string): string | null {
  const groups = ipv6Groups(address);
  if (!groups) return null;
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups;
  const zeroes = (...values: number[]) => values.every((v) => v === 0);
  if (zeroes(g0, g1, g2, g3) && ((g4 === 0 && g5 === 0xffff) || (g4 === 0xffff && g5 === 0)))
    return ipv4Of(g6, g7);
  if (g0 === 0x64 && g1 === 0xff9b && zeroes(g2, g3, g4, g5)) return ipv4Of(g6, g7);
  // IPv4-compatible; :: and ::1 (their high group zero) stay what they are.
  if (zeroes(g0, g1, g2, g3, g4, g5) && g6 !== 0) return ipv4Of(g6, g7);
  if (g0 === 0x2002) return ipv4Of(g1, g2);
  return null;
}

/** Why `address` may not receive deliveries under `policy`, or null when it may. */
export function addressRefusal(address: string, policy: DestinationPolicy): string | null {
  switch (addressKind(address)) {
    case 'public':
      return null;
    // This machine: never reached by allowing the private networks around it.
    case 'loopback':
      return policy.allowInsecure ? null : 'a loopback address (allowed only with WEBHOOK_ALLOW_INSECURE=1)';
    case 'private':
    case 'link_local':
      return policy.allowPrivateNetworks
        ? null
        : 'a private or link-local address (allowed only with WEBHOOK_ALLOW_PRIVATE_NETWORKS=1)';
    default:
      return 'a reserved or cloud-metadata address, never allowed';
  }
}

/** The URL's host without IPv6 brackets. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

function isLoopbackName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * The URL as an endpoint's, or 400 naming `url` with why not: well formed, https (http only to
 * loopback when insecure delivery is allowed), no credentials, and a host whose addresses may receive
 * deliveries. A name that does not resolve now is accepted: it is checked again on every send.
 */
export async function checkEndpointUrl(raw: string, policy: DestinationPolicy): Promise<string> {
  const refuse = (why: string) => new AppError('invalid_request', `url ${why}.`, 'url');
  // The URL parser drops tabs and line breaks silently: two addresses would be glued into one.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
  if (/[\s\u0000-\u001f\u007f]/.test(raw)) throw refuse('must be one address, without spaces or line breaks');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('is not a valid URL');
  }
  // What is saved (and sent to) is the URL written out, which can be longer than typed (é is %C3%A9,
  // a name in another script its punycode): the stored column holds at most 2,000 characters.
  if (raw.length > 2000 || url.href.length > 2000) throw refuse('is longer than 2,000 characters');
  if (url.username || url.password) throw refuse('must not carry a user name or password');
  const host = hostOf(url);
  const loopback = isLoopbackName(host) || (isIP(host) !== 0 && addressKind(host) === 'loopback');
  if (url.protocol !== 'https:') {
    if (url.protocol !== 'http:') throw refuse('must be https');
    if (!(policy.allowInsecure && loopback)) {
      throw refuse('must be https (plain http only to loopback, with WEBHOOK_ALLOW_INSECURE=1)');
    }
  }
  // The parser mends what is most likely a mistake rather than refusing it: `https:///in` is read
  // as the host `in`, `https:hooks.example.com` and `https:\\hooks.example.com` as if written right.
  // An endpoint is sent what the integrator wrote, so it must be written out: scheme, //, host.
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(raw)?.[1];
  if (!authority || authority.includes('\\')) throw refuse('must be written out as https://host/path');
  if (url.port === '0') throw refuse('port must be between 1 and 65535');
  if (isLoopbackName(host)) {
    if (!policy.allowInsecure) {
      throw refuse('names this machine (allowed only with WEBHOOK_ALLOW_INSECURE=1)');
    }
    return saved(raw, url);
  }
  const addresses = isIP(host) !== 0 ? [host] : await resolvedOrNone(host);
  for (const address of addresses) {
    const why = addressRefusal(address, policy);
    if (why) throw refuse(`reaches ${why}`);
  }
  return saved(raw, url);
}

/**
 * The URL an endpoint keeps: as the parser writes it out (what is checked and sent to, with no
 * reading of it left to a receiver's own parser), except that an origin given without a path keeps
 * none: `https://Crm.Example.com:443` is answered as `https://crm.example.com`, not with a `/` the
 * integrator did not write (the same address).
 */
function saved(raw: string, url: URL): string {
  const givenWithoutPath = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*$/i.test(raw);
  return givenWithoutPath && url.href === `${url.origin}/` ? url.origin : url.href;
}

async function resolvedOrNone(host: string): Promise<string[]> {
  try {
    return (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    return [];
  }
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * What `localhost` (and `*.localhost`) is, whatever DNS or /etc/hosts say: this machine, over IPv4
 * and IPv6 alike. A receiver listening on `localhost` is bound to one of the two, which one depending
 * on the system (many list ::1 first): both are offered, and the connection tries each in turn
 * (node's autoSelectFamily), so it reaches the receiver wherever it listens.
 */
const LOOPBACK_ADDRESSES: readonly LookupAddress[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];

/**
 * A `lookup` for http(s).request that resolves the name and refuses it unless every address it
 * resolves to may receive deliveries: the connection then goes to one of the addresses checked.
 * `refusal` words the refusal for another use (the calendar fetcher names its own setting).
 */
export function checkedLookup(
  policy: DestinationPolicy,
  refusal: (address: string, policy: DestinationPolicy) => string | null = addressRefusal,
) {
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    const name = hostname.replace(/^\[(.*)\]$/, '$1');
    const resolved = isLoopbackName(name)
      ? Promise.resolve([...LOOPBACK_ADDRESSES])
      : lookup(name, { all: true, verbatim: true });
    resolved.then(
      (addresses) => {
        const refused = addresses.map((a) => refusal(a.address, policy)).find((why) => why !== null);
        if (refused || addresses.length === 0) {
          const error: NodeJS.ErrnoException = new Error(
            `the URL's host resolves to ${refused ?? 'no address'}`,
          );
          error.code = 'EWEBHOOKDESTINATION';
          callback(error, '');
          return;
        }
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
}

/** Why an IP-literal URL may not be sent to now (a name is checked by checkedLookup), or null. */
export function literalRefusal(url: URL, policy: DestinationPolicy): string | null {
  const host = hostOf(url);
  return isIP(host) === 0 ? null : addressRefusal(host, policy);
}
