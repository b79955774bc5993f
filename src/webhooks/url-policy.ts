// Which URLs may receive webhooks: the guard against server-side request forgery, at registration
// and again before every delivery. A URL is refused when its host is, or resolves to, any address
// that is not global unicast (loopback, private, link-local, unique-local, CGNAT, multicast,
// unspecified, reserved, cloud metadata, and IPv6 forms that carry an IPv4 address), in any spelling:
// the WHATWG URL parser turns decimal, octal, hex and short IPv4 forms into dotted quads first, and
// ipaddr.js classifies what is left. Exceptions (a receiver on 127.0.0.1 in tests) are listed by name.
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

export const WEBHOOK_URL_MAX_LENGTH = 2048;
/** Longest wait for the resolver; a host that does not answer in time is refused. */
const RESOLVE_TIMEOUT_MS = 5000;

export interface UrlPolicy {
  /** Plain http allowed (development), or https only (production). */
  allowHttp: boolean;
  /** Host names and addresses exempt from the address checks, lowercase, IPv6 without brackets. */
  allowedHosts: readonly string[];
  /**
   * Whether a refusal names the address a host resolved to (development). In production it does not,
   * nor tells a host that does not resolve from one that resolves to a private address: anyone who
   * may register an endpoint could otherwise map the service's own view of internal names
   * (`db.internal` resolves to 10.0.0.5) one registration at a time.
   */
  revealAddresses?: boolean;
}

/** How ipaddr.js names each range that is refused, as an error says it. */
const RANGE_NAMES: Record<string, string> = {
  unspecified: 'an unspecified address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address (cloud metadata services live there)',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT address',
  private: 'a private address',
  reserved: 'a reserved address',
  uniqueLocal: 'a unique-local address',
  rfc6052: 'a NAT64 address (it carries an IPv4 address)',
  '6to4': 'a 6to4 address (it carries an IPv4 address)',
  teredo: 'a Teredo address (it carries an IPv4 address)',
  discard: 'a discard-only address',
};

/** Names that never resolve to the public internet, refused without asking a resolver. */
const LOCAL_NAMES = [/^localhost$/, /\.localhost$/, /^metadata\.google\.internal$/, /^metadata\.goog$/];

/** What `address` is when it may not receive webhooks ("a loopback address"), or undefined when it is global unicast. */
export function addressRefusal(text: string): string | undefined {
  // `process` turns an IPv4-mapped IPv6 address into the IPv4 address it carries.
  const address = ipaddr.process(text);
  const range = address.range();
  if (range !== 'unicast') return RANGE_NAMES[range] ?? `not a public address (${range})`;
  // IPv4-compatible (::a.b.c.d, deprecated): ipaddr.js counts these as unicast.
  if (address instanceof ipaddr.IPv6 && address.parts.slice(0, 6).every((part) => part === 0)) {
    return 'an IPv4-compatible address (it carries an IPv4 address)';
  }
  return undefined;
}

export type Resolve = (host: string) => Promise<string[]>;

/** The addresses a host name resolves to, waiting at most RESOLVE_TIMEOUT_MS. */
export const resolveHost: Resolve = async (host) => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), RESOLVE_TIMEOUT_MS);
  });
  try {
    const found = await Promise.race([lookup(host, { all: true, verbatim: true }), late]);
    return found.map((entry) => entry.address);
  } finally {
    clearTimeout(timer);
  }
};

/** The host of a parsed URL as the checks see it: lowercase, IPv6 without brackets. */
export function hostOf(url: URL): string {
  return url.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
}

/** Characters RFC 3986 allows in a URI (unreserved, reserved and `%`), brackets only around an IPv6 host. */
const URI_CHARACTERS = /^[A-Za-z0-9\-._~:/?#@!$&'()*+,;=%]*$/;

function isRfc3986(raw: string): boolean {
  const authority = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/(?:[^/?#@]*@)?(?:\[[0-9A-Fa-f:.]+\])?/.exec(raw)?.[0] ?? '';
  const rest = raw.slice(authority.length);
  return URI_CHARACTERS.test(authority.replace(/[[\]]/g, '')) && URI_CHARACTERS.test(rest) && !/%(?![0-9A-Fa-f]{2})/.test(raw);
}

/** Whether the path holds `.` or `..` segments (`%2e` too), which are resolved away before a request is sent. */
function hasDotSegments(raw: string): boolean {
  const path = raw.replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/, '').split(/[?#]/, 1)[0] ?? '';
  return path.split('/').some((segment) => /^(?:\.|%2e){1,2}$/i.test(segment));
}

/** What is wrong with `raw` as a webhook URL, without looking its host up; or the parsed URL. */
export function checkUrlForm(raw: string, policy: UrlPolicy): { refusal: string } | { url: URL } {
  if (raw.length > WEBHOOK_URL_MAX_LENGTH) return { refusal: `must be at most ${WEBHOOK_URL_MAX_LENGTH} characters (got ${raw.length})` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { refusal: 'must be an absolute URL like https://example.com/webhooks' };
  }
  // The URL is stored and shown as sent, and the OpenAPI document calls it a URI: the WHATWG parser
  // takes (and quietly rewrites) what RFC 3986 does not, which clients' URI types then fail to read.
  if (!isRfc3986(raw)) {
    return {
      refusal:
        'must be a URI as RFC 3986 writes it: percent-encode spaces, characters outside ASCII and | { } [ ] \\ ^ ` " < > (%20 for a space), and write host names in their ASCII form (xn--…)',
    };
  }
  const schemes = policy.allowHttp ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    return { refusal: policy.allowHttp ? 'must use https or http' : 'must use https (plain http is allowed only outside production)' };
  }
  if (url.username || url.password)
    return { refusal: 'must not contain credentials (user:password@); authenticate receivers by the signature' };
  // An empty fragment (a bare `#`) is a fragment too, though the parser shows none.
  if (url.hash || raw.includes('#')) return { refusal: 'must not contain a fragment (#…): it is never sent to the receiver' };
  const host = hostOf(url);
  if (policy.allowedHosts.includes(host)) return { url };
  if (ipaddr.isValid(host)) {
    const refusal = addressRefusal(host);
    return refusal ? { refusal: `must not point at ${host}, ${refusal}` } : { url };
  }
  if (LOCAL_NAMES.some((pattern) => pattern.test(host))) return { refusal: `must not point at ${host}, a local or metadata name` };
  return { url };
}

/**
 * Why `raw` may not receive webhooks, or undefined when it may: its form, then every address its
 * host resolves to.
 */
export async function urlRefusal(raw: string, policy: UrlPolicy, resolve: Resolve = resolveHost): Promise<string | undefined> {
  const form = checkUrlForm(raw, policy);
  if ('refusal' in form) return form.refusal;
  // Kept, the URL shown would not be the one deliveries go to (`/hooks/../x` is posted to `/x`). A
  // matter of what is stored, not of where requests may go: checked when a URL is set, so an
  // endpoint registered before this check keeps its deliveries.
  if (hasDotSegments(raw)) return 'must not contain . or .. path segments: write the path they lead to';
  const host = hostOf(form.url);
  if (policy.allowedHosts.includes(host) || ipaddr.isValid(host)) return undefined;
  const reveal = policy.revealAddresses ?? true;
  const unfit = `must point at a host that resolves to public addresses only (${host} does not)`;
  const unresolved = reveal ? `host ${host} does not resolve to an address` : unfit;
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch (error) {
    const timedOut = error instanceof Error && error.message === 'timeout';
    if (timedOut) return `host ${host} could not be resolved in time`;
    return unresolved;
  }
  if (addresses.length === 0) return unresolved;
  for (const address of addresses) {
    const refusal = addressRefusal(address);
    if (refusal) return reveal ? `must not point at ${host}, which resolves to ${address}, ${refusal}` : unfit;
  }
  return undefined;
}
