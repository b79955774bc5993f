// Every request past the public endpoints must carry a valid API key, on either face: this runs
// before GraphQL parsing and before the REST adapter, so both are covered by the same check. The key
// comes from the `x-api-key` header, or (discouraged, since URLs end up in logs and histories) from
// the `api_key` query parameter, which is then removed from the URL the rest of the server sees.
import type { Logger } from '../log.ts';
import { clientAddress, clientNetwork, networkMatcher } from '../net/cidr.ts';
import { decodeComponent } from '../net/uri.ts';
import { GRAPHQL_PATH } from '../paths.ts';
import { databaseFailureOf } from '../db/failures.ts';
import type { FailOpenCounter } from '../rate-limit/fail-open.ts';
import { deny, refuse } from '../refusals.ts';
import { decisionOf, rateLimitHeaders } from './rate-limit.ts';
import type { Metrics } from '../telemetry/metrics.ts';
import { KEYS_IN_TEXT, maskKeySecret } from '../services/api-key-secrets.ts';
import type { ApiKeyVerifier, VerifiedKey } from '../services/api-key-verifier.ts';
import { API_KEY_CHALLENGE } from '../services/request-auth.ts';
import type { ServerPlugin } from './server-context.ts';

const QUERY_KEY_WARNING = '299 portico "api_key in the URL is discouraged: URLs are logged and cached; send the x-api-key header"';

/** Query parameters that carry a credential by their name (RFC 6750's `access_token` among them): their values are never logged. */
const SECRET_PARAMETERS = new Set(['access_token', 'token', 'id_token', 'refresh_token', 'client_secret', 'password', 'secret']);
/**
 * A GraphQL GET's document, variables and extensions: what the request asks, which may hold personal
 * data (an email in a variable, a literal), and is no more logged than traced. Its operation name stays.
 */
const GRAPHQL_PARAMETERS = new Set(['query', 'variables', 'extensions']);
/** A JWT (three base64url parts, the first a JSON header) or a webhook signing secret, wherever it stands. */
const TOKENS_IN_TEXT = /eyJ[A-Za-z0-9_-]*(?:\.|%2[Ee])[A-Za-z0-9_-]*(?:\.|%2[Ee])[A-Za-z0-9_-]*|whsec_(?:[A-Za-z0-9+/=]|%2[BbFf]|%3[Dd])+/g;
const REDACTED = encodeURIComponent('[redacted]');

/**
 * A request URL fit for logs: an `api_key` query value is masked, and so is anything shaped like a
 * key elsewhere (in the path, in another parameter), where a client put one by mistake; so are the
 * values of parameters named for a credential (`access_token`, `password` …), and user tokens and
 * signing secrets by their shape. Names are compared decoded, as URLSearchParams reads them to find
 * the key (`api%5Fkey` is `api_key` too).
 */
export function scrubbedUrl(url: string): string {
  let scrubbed = maskedParameters(url);
  if (scrubbed.includes('pk_')) scrubbed = scrubbed.replace(KEYS_IN_TEXT, (key) => encodeURIComponent(maskKeySecret(key)));
  if (scrubbed.includes('eyJ') || scrubbed.includes('whsec_')) scrubbed = scrubbed.replace(TOKENS_IN_TEXT, REDACTED);
  return scrubbed.includes('%') ? maskedEscaped(scrubbed) : scrubbed;
}

/**
 * Credentials written with escapes (`pk%5Ftest%5F…`), which the shapes above do not see: each run
 * between the URL's delimiters that holds an escape is read decoded, and masked if it holds one.
 */
function maskedEscaped(url: string): string {
  return url.replace(/[^/?&=#]*%[^/?&=#]*/g, (run) => {
    const decoded = decodeComponent(run.replaceAll('+', ' '));
    const masked = decoded.replace(KEYS_IN_TEXT, maskKeySecret).replace(TOKENS_IN_TEXT, '[redacted]');
    return masked === decoded ? run : encodeURIComponent(masked);
  });
}

function maskedParameters(url: string): string {
  const query = url.indexOf('?');
  if (query < 0) return url;
  const graphql = url.slice(0, query) === GRAPHQL_PATH;
  const fragment = url.indexOf('#', query);
  const end = fragment < 0 ? url.length : fragment;
  const parameters = url.slice(query + 1, end).split('&');
  let masked = false;
  for (let i = 0; i < parameters.length; i++) {
    const parameter = parameters[i]!;
    const equals = parameter.indexOf('=');
    if (equals < 0) continue;
    const name = decodeComponent(parameter.slice(0, equals).replaceAll('+', ' '));
    if (name === 'api_key') {
      const value = decodeComponent(parameter.slice(equals + 1).replaceAll('+', ' '));
      parameters[i] = `${parameter.slice(0, equals + 1)}${encodeURIComponent(maskKeySecret(value))}`;
    } else if (SECRET_PARAMETERS.has(name.toLowerCase()) || (graphql && GRAPHQL_PARAMETERS.has(name))) {
      parameters[i] = `${parameter.slice(0, equals + 1)}${REDACTED}`;
    } else continue;
    masked = true;
  }
  return masked ? `${url.slice(0, query + 1)}${parameters.join('&')}${url.slice(end)}` : url;
}

/**
 * Budget of requests that are not identified, per client address (an IPv6 client's per /64:
 * clientNetwork): without a valid key, with a key used from outside its allowlist, or with a user
 * token that does not verify.
 */
export interface UnidentifiedLimit {
  counter: FailOpenCounter;
  limit: number;
  windowMs: number;
  metrics: Metrics;
}

/**
 * Answers a request that is not identified: `refusal` (401, 403), once it has spent one request of
 * its address's budget; past that budget, 429. Guessing keys or tokens, or a misconfigured client
 * retrying in a loop, gets 429 instead of unbounded refusals, and a valid key's own budget is left
 * alone (whoever uses it from elsewhere cannot spend it).
 */
export async function refuseUnidentified(
  budget: UnidentifiedLimit,
  clientIp: string,
  request: Request,
  refusal: () => Response,
): Promise<Response> {
  const { counter, limit, windowMs, metrics } = budget;
  const network = clientNetwork(clientIp);
  const state = await counter.consume(`unidentified:${network}`, 1, limit, windowMs);
  metrics.rateLimitDecisions.inc({ policy: 'per-address', outcome: decisionOf(state) });
  if (!state || state.allowed) return refusal();
  return refuse(request, {
    kind: 'quota-exceeded',
    detail: `Too many requests without a valid API key from ${network}; try again in ${Math.ceil(state.resetMs / 1000)} s.`,
    headers: rateLimitHeaders(state, windowMs, 'per-address'),
  });
}

export function useApiKeys(options: {
  verifier: ApiKeyVerifier;
  trustProxy: readonly string[];
  logger: Logger;
  unidentified: UnidentifiedLimit;
}): ServerPlugin {
  const isTrustedProxy = networkMatcher(options.trustProxy);
  const fromQuery = new WeakSet<object>();
  return {
    onRequest({ request, url, serverContext, endResponse, setRequest }) {
      const node = serverContext.req;
      const forwarded = node.headers['x-forwarded-for'];
      const clientIp = clientAddress(
        node.socket.remoteAddress ?? '',
        Array.isArray(forwarded) ? forwarded.join(',') : forwarded,
        isTrustedProxy,
      );
      const unidentified = async (status: 401 | 403, detail: string) =>
        endResponse(
          await refuseUnidentified(options.unidentified, clientIp, request, () =>
            deny(request, status, detail, status === 401 ? API_KEY_CHALLENGE : undefined),
          ),
        );
      const headerKey = request.headers.get('x-api-key');
      const queryKey = url.searchParams.get('api_key');
      const secret = headerKey ?? queryKey;
      if (!secret) return unidentified(401, 'An API key is required: send it in the x-api-key header.');
      // Node joins a header sent twice with ", "; no key holds a comma.
      if (headerKey?.includes(',')) return unidentified(401, 'Send one API key: x-api-key came more than once.');
      if (headerKey === null) {
        const clean = new URL(url);
        clean.searchParams.delete('api_key');
        setRequest(new Request(clean, request));
        fromQuery.add(serverContext);
        options.logger.warn({ key: maskKeySecret(secret) }, 'API key sent in the query string; clients should use the x-api-key header');
      }
      const identified = (key: VerifiedKey | undefined) => {
        if (!key) return unidentified(401, 'The API key is not valid: it is unknown, revoked or expired.');
        if (!key.allowsAddress(clientIp)) return unidentified(403, `This API key may not be used from ${clientIp}.`);
        serverContext.auth = { key, clientIp };
      };
      // The key cannot be checked while the database is down: that is the service's problem, not
      // the client's credentials (503, not 401). Anything else is a bug, for the guard to report.
      const unverifiable = (error: unknown) => {
        const failure = databaseFailureOf(error);
        if (!failure) throw error;
        endResponse(
          refuse(request, {
            kind: failure === 'unreachable' ? 'unavailable' : 'timeout',
            detail: 'The API key cannot be checked right now: the database is not answering; try again shortly.',
          }),
        );
      };
      // A key answered from memory goes on at once, without a promise.
      const verified = options.verifier.verify(secret);
      return verified instanceof Promise ? verified.then(identified, unverifiable) : identified(verified);
    },
    onResponse({ serverContext, response }) {
      if (fromQuery.has(serverContext)) response.headers.set('warning', QUERY_KEY_WARNING);
    },
  };
}
