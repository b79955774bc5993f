// A user token (`Authorization: Bearer <jwt>`) says which user a request acts for. It is optional
// here: only actions on a user's own data need one (see the `actsFor` scope), so a request without
// a token goes on, and one with a token that does not verify stops with 401, spending a request of
// its address's budget for requests that are not identified (plugins/api-key.ts).
import { UnauthenticatedError, UnavailableError } from '../errors.ts';
import { deny, refuse } from '../refusals.ts';
import { BEARER_CHALLENGE, type RequestAuth } from '../services/request-auth.ts';
import type { UserTokenVerifier } from '../services/user-tokens.ts';
import { refuseUnidentified, type UnidentifiedLimit } from './api-key.ts';
import type { ServerPlugin } from './server-context.ts';

export function useUserTokens(options: { verify: UserTokenVerifier; unidentified: UnidentifiedLimit }): ServerPlugin {
  async function verifyToken(auth: RequestAuth, header: string, request: Request, endResponse: (response: Response) => void) {
    const refused = async (detail: string, challenge: string) =>
      endResponse(await refuseUnidentified(options.unidentified, auth.clientIp, request, () => deny(request, 401, detail, challenge)));
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
