// Addresses and networks, IPv4 and IPv6 alike: what API key allowlists and TRUST_PROXY are made of.
import net from 'node:net';

/** The canonical form of a CIDR (`10.0.0.0/8`, `2001:db8::/32`); a bare address is a single host. */
export function normalizeCidr(value: string): string | undefined {
  const [address, bits, extra] = value.trim().split('/');
  const family = net.isIP(address ?? '');
  if (!address || family === 0 || extra !== undefined) return undefined;
  const max = family === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : Number.NaN;
  if (!(prefix >= 0 && prefix <= max)) return undefined;
  return `${address.toLowerCase()}/${prefix}`;
}

/** An IPv4 client seen through an IPv6 socket (`::ffff:10.0.0.1`) is the IPv4 address. */
function plainAddress(address: string): string {
  return address.startsWith('::ffff:') && net.isIPv4(address.slice(7)) ? address.slice(7) : address;
}

/** Answers whether an address lies in any of the given (normalized) CIDRs. */
export function networkMatcher(cidrs: readonly string[]): (address: string) => boolean {
  const list = new net.BlockList();
  for (const cidr of cidrs) {
    const [address = '', prefix] = cidr.split('/');
    list.addSubnet(address, Number(prefix), net.isIPv4(address) ? 'ipv4' : 'ipv6');
  }
  return (address) => {
    const plain = plainAddress(address);
    const family = net.isIPv4(plain) ? 'ipv4' : net.isIPv6(plain) ? 'ipv6' : undefined;
    return family !== undefined && list.check(plain, family);
  };
}

/**
 * What stands for a client a trusted proxy could not name (`unknown`, an obfuscated identifier, a
 * hop that is no address): no allowlist holds it, and all such clients share one budget.
 */
export const UNKNOWN_CLIENT = 'unknown';

const IPV4_WITH_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/;
const BRACKETED_IPV6 = /^\[([^\]]+)\](?::\d{1,5})?$/;

/** The address of an X-Forwarded-For hop, as proxies write it: `ip`, `ip:port`, `[ipv6]` or `[ipv6]:port`. */
function hopAddress(hop: string): string | undefined {
  const text = hop.trim();
  const address = plainAddress(BRACKETED_IPV6.exec(text)?.[1] ?? IPV4_WITH_PORT.exec(text)?.[1] ?? text);
  return net.isIP(address) === 0 ? undefined : address;
}

/**
 * The client's address: the socket peer, unless that peer is a trusted proxy, in which case the
 * X-Forwarded-For chain is walked from the right, past trusted proxies, to the first address that
 * is not one (what a client prepends itself cannot be trusted). A hop that names no address ends the
 * walk at UNKNOWN_CLIENT: skipping it would reach the hops the client wrote itself.
 */
export function clientAddress(peer: string, forwardedFor: string | undefined, isTrustedProxy: (address: string) => boolean): string {
  let client = plainAddress(peer);
  if (!forwardedFor || !isTrustedProxy(client)) return client;
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hopAddress(hops[i]!);
    if (hop === undefined) return UNKNOWN_CLIENT;
    client = hop;
    if (!isTrustedProxy(client)) return client;
  }
  return client;
}

/** The eight 16-bit groups of a valid IPv6 address (a zone is dropped; an IPv4 tail is two groups). */
function ipv6Groups(address: string): number[] {
  let text = address.split('%')[0]!;
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const byte = (i: number) => Number(v4[i]);
    text = `${text.slice(0, v4.index)}${((byte(1) << 8) | byte(2)).toString(16)}:${((byte(3) << 8) | byte(4)).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const groups = (part: string | undefined) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  if (tail === undefined) return groups(head);
  const left = groups(head);
  const right = groups(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * The network one client's budget is kept for: an IPv4 address as it is, an IPv6 address's /64 in
 * its canonical form (`2001:db8:1:2::/64`). A /64 is the least a provider gives one subscriber or
 * one machine, and every address in it is theirs to use: kept per IPv6 address, one client's budget
 * would be 2^64 budgets.
 */
export function clientNetwork(address: string): string {
  const plain = plainAddress(address);
  if (!net.isIPv6(plain)) return plain;
  const prefix = ipv6Groups(plain)
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':');
  // The WHATWG URL parser writes IPv6 addresses as RFC 5952 says: lowercase, the longest run of zeros as `::`.
  return `${new URL(`http://[${prefix}::]/`).hostname.slice(1, -1)}/64`;
}
