import { isIP } from 'node:net';

/** An IPv6 address as its eight 16-bit groups. */
export type Ipv6Groups = readonly [number, number, number, number, number, number, number, number];

/**
 * The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 read as two, a zone dropped), or
 * null when `address` is not IPv6.
 */
export function ipv6Groups(address: string): Ipv6Groups | null {
  if (isIP(address) !== 6) return null;
  let text = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string?];
  const part = (s: string | undefined) => (s ? s.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const high = part(head);
  const low = part(tail);
  const missing = 8 - high.length - low.length;
  const groups = tail === undefined ? high : [...high, ...new Array<number>(missing).fill(0), ...low];
  return groups as unknown as Ipv6Groups;
}

/** The dotted IPv4 address two 16-bit groups hold. */
export function ipv4Of(high: number, low: number): string {
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}
