// Which path a request is for comes from its request line alone. Node passes the Host header on as
// sent, and the fetch layer under yoga builds each request's URL from it: a Host holding a slash, a
// `?` or a `#` replaced the path the request line named (a `POST /openapi.json` with `Host:
// a/users#` ran as `POST /users`, and was logged as the former), and one the URL parser refuses
// (`Host: a b`) threw before any plugin could answer. So an HTTP/1.1 request must carry exactly one
// Host, naming a host and an optional port (RFC 9112 §3.2), and a request target in absolute form
// (RFC 9112 §3.2.2) is routed by its path, its authority standing in for the Host.
import type { IncomingMessage } from 'node:http';

/** A host name or IPv4 address (RFC 3986 reg-name, without percent-escapes) or an IP literal, and a port. */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~!$&'()*+,;=-]+)(?::\d{1,5})?$/;

/** The Host last found good: a service's clients send a handful, so most requests skip the parse. */
let lastHost: string | undefined;

function isHost(value: string): boolean {
  if (value === lastHost) return true;
  if (!HOST.test(value)) return false;
  try {
    // The port's range and the IP literal's form, as the fetch layer's own parser will read them.
    if (new URL(`http://${value}/`).pathname !== '/') return false;
  } catch {
    return false;
  }
  lastHost = value;
  return true;
}

/** An escaped unreserved character (RFC 3986 §2.3: letters, digits, `-`, `.`, `_`, `~`). */
const ESCAPED_UNRESERVED = /%(2[DdEe]|3\d|4[1-9A-Fa-f]|5[0-9Aa]|5[Ff]|6[1-9A-Fa-f]|7[0-9Aa]|7[Ee])/g;

/**
 * The path with escaped unreserved characters written plainly, as RFC 3986 §6.2.2.2 makes them the
 * same URI: `/%75sers` is `/users`. Routes match paths as written, so `/%75sers` was 404 where
 * `/users/%75sr_…` (an id, decoded) was found. The query is left as sent: its values are decoded
 * where they are read.
 */
function withUnreservedDecoded(target: string): string {
  const query = target.indexOf('?');
  const path = query < 0 ? target : target.slice(0, query);
  const decoded = path.replace(ESCAPED_UNRESERVED, (_escape, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return query < 0 ? decoded : decoded + target.slice(query);
}

/** Whether the request asks about the server as a whole (`OPTIONS *`, RFC 9110 §9.3.7). */
export function asksAboutServer(req: IncomingMessage): boolean {
  return req.method === 'OPTIONS' && req.url === '*';
}

/**
 * Puts an absolute-form target into origin form (its authority into Host), and says what is wrong
 * with the request's target or Host, if anything is.
 */
export function targetProblem(req: IncomingMessage): string | undefined {
  const target = req.url ?? '';
  if (/^https?:\/\//i.test(target)) {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return 'The request target is not a URL; send the path, as in GET /users HTTP/1.1.';
    }
    req.url = url.pathname + url.search;
    req.headers.host = url.host;
    return undefined;
  }
  if (!target.startsWith('/')) return 'The request target must be a path beginning with /.';
  if (target.includes('%')) req.url = withUnreservedDecoded(target);
  const hosts = req.headersDistinct.host ?? [];
  if (hosts.length > 1) return `Send one Host header, not ${hosts.length}.`;
  const [host] = hosts;
  if (host === undefined) return req.httpVersion === '1.0' ? undefined : 'Send a Host header naming the service.';
  if (!isHost(host)) return 'The Host header must name a host (a name or an IP address) and an optional port, and nothing else.';
  return undefined;
}
