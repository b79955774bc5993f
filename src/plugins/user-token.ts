// A user token (`Authorization: Bearer <jwt>`) says which user a request acts for. It is optional
// here: only actions on a user's own data need one (see the `actsFor` scope), so a request without
// a token goes on, and one with a token that does not verify stops with 401.
import { UnauthenticatedError } from '../errors.ts';
import { deny } from '../refusals.ts';
import { BEARER_CHALLENGE, type RequestAuth } from '../services/request-auth.ts';
import type { UserTokenVerifier } from '../services/user-tokens.ts';
import type { ServerPlugin } from './server-context.ts';

export function useUserTokens(options: { verify: UserTokenVerifier }): ServerPlugin {
  async function verifyToken(auth: RequestAuth, header: string, request: Request, endResponse: (response: Response) => void) {
    const match = /^Bearer ([A-Za-z0-9_.~+/=-]+)$/i.exec(header.trim());
    if (!match) {
      endResponse(deny(request, 401, 'The Authorization header must be "Bearer <token>".', `${BEARER_CHALLENGE}, error="invalid_request"`));
      return;
    }
    try {
      auth.userId = (await options.verify(match[1]!)).userId;
    } catch (error) {
      if (!(error instanceof UnauthenticatedError)) throw error;
      endResponse(deny(request, 401, error.message, `${BEARER_CHALLENGE}, error="invalid_token"`));
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
