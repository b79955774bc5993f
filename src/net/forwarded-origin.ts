// The origin a client reached the service at, as a trusted reverse proxy reports it: the scheme and
// host the client used, which the proxy's own request to the service (plain http, its own Host) may
// not show. Only a peer in TRUST_PROXY is believed; anyone else could name any origin.
import type { IncomingMessage } from 'node:http';

const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** The first value of a header a chain of proxies appends to: the one the client-facing proxy set. */
function first(value: string | string[] | undefined): string | undefined {
  const whole = Array.isArray(value) ? value[0] : value;
  return whole?.split(',')[0]?.trim() || undefined;
}

/** RFC 7239's `Forwarded`: the first element's `proto` and `host`. */
function forwardedPairs(value: string | undefined): { proto?: string; host?: string } {
  const pairs: { proto?: string; host?: string } = {};
  for (const pair of value?.split(';') ?? []) {
    const [name = '', raw = ''] = pair.split('=');
    const text = raw.trim().replace(/^"(.*)"$/, '$1');
    const key = name.trim().toLowerCase();
    if (key === 'proto' || key === 'host') pairs[key] = text;
  }
  return pairs;
}

export function forwardedOrigin(url: URL, req: IncomingMessage, isTrustedProxy: (address: string) => boolean): string {
  if (!isTrustedProxy(req.socket.remoteAddress ?? '')) return url.origin;
  const standard = forwardedPairs(first(req.headers.forwarded));
  const proto = (standard.proto ?? first(req.headers['x-forwarded-proto']))?.toLowerCase();
  const host = standard.host ?? first(req.headers['x-forwarded-host']);
  const scheme = proto === 'http' || proto === 'https' ? proto : url.protocol.slice(0, -1);
  return `${scheme}://${host !== undefined && HOST.test(host) ? host : url.host}`;
}
