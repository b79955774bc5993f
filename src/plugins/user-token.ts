// A user token (`Authorization: Bearer <jwt>`) says which user a request acts for. It is optional
// here: only actions on a user's own data need one (see the `actsFor` scope), so a request without
// a token goes on, and one with a token that does not verify stops with 401. The key that sent it
// is valid (the request is identified), so the refusal is paid from that key's own budget, not from
// its address's budget for requests that are not identified: a backend forwarding many users'
// tokens from one address had every expired token answered 429 once 60 had been refused, with no
// challenge to make it refresh them.
import { UnauthenticatedError, UnavailableError } from '../errors.ts';
import { refuse } from '../refusals.ts';
import { BEARER_CHALLENGE, type RequestAuth } from '../services/request-auth.ts';
import type { UserTokenVerifier } from '../services/user-tokens.ts';
import { decisionOf, rateLimitHeaders, type RateLimitOptions } from './rate-limit.ts';
import type { ServerPlugin } from './server-context.ts';

/** `budget`: the keys' budgets, as the rate limit keeps them. */
export function useUserTokens(options: { verify: UserTokenVerifier; budget: RateLimitOptions }): ServerPlugin {
  /** 401 with `challenge`, for one unit of the key's budget; past it, the key's 429, still saying the token is bad. */
  async function refusal(auth: RequestAuth, request: Request, detail: string, challenge: string): Promise<Response> {
    const { counter, defaultLimit, windowMs, metrics } = options.budget;
    const state = await counter.consume(auth.key.lineageId, 1, auth.key.rateLimitPerMinute ?? defaultLimit, windowMs);
    metrics.rateLimitDecisions.inc({ policy: 'per-key', outcome: decisionOf(state) });
    const headers = { 'www-authenticate': challenge, ...(state ? rateLimitHeaders(state, windowMs) : {}) };
    if (!state || state.allowed) return refuse(request, { kind: 'unauthenticated', detail, headers });
    return refuse(request, {
      kind: 'quota-exceeded',
      detail: `${detail} This API key's rate limit is spent besides; try again in ${Math.ceil(state.resetMs / 1000)} s.`,
      headers,
    });
  }

  async function verifyToken(auth: RequestAuth, header: string, request: Request, endResponse: (response: Response) => void) {
    const refused = async (detail: string, challenge: string) => endResponse(await refusal(auth, request, detail, challenge));
    const invalid = `${BEARER_CHALLENGE}, error="invalid_token"`;
    const [scheme = '', ...value] = header.trim().split(/\s+/);
    // Credentials of another scheme carry no token: the challenge says what to send, with no error
    // code (RFC 6750 §3). A bearer value that is no token is an invalid one.
    if (scheme.toLowerCase() !== 'bearer') return refused('The Authorization header must be "Bearer <token>".', BEARER_CHALLENGE);
    const token = value.length === 1 && /^[A-Za-z0-9_.~+/=-]+$/.test(value[0]!) ? value[0]! : undefined;
    if (token === undefined)
      return refused('The Authorization header must be "Bearer <token>": one token of base64url characters.', invalid);
    try {
      auth.userId = (await options.verify(token)).userId;
    } catch (error) {
      // The token could not be checked (its keys cannot be fetched): no verdict on it, and nothing spent.
      if (error instanceof UnavailableError) return endResponse(refuse(request, { kind: 'unavailable', detail: error.message }));
      if (!(error instanceof UnauthenticatedError)) throw error;
      return refused(error.message, invalid);
    }
  }

  return {
    onRequest({ request, serverContext, endResponse }) {
      const { auth } = serverContext;
      const header = request.headers.get('authorization');
      // Most requests carry no token; they go on without a promise.
      if (!auth || header === null) return;
      return verifyToken(auth, header, request, endResponse);
    },
  };
}
