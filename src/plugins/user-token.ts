// A user token (`Authorization: Bearer <jwt>`) says which user a request acts for. It is optional
// here: only actions on a user's own data need one (see the `actsFor` scope), so a request without
// a token goes on, and one with a token that does not verify stops with 401.
import type { Plugin } from 'graphql-yoga';
import { UnauthenticatedError } from '../errors.ts';
import { BEARER_CHALLENGE } from '../graphql/acts-for.ts';
import type { UserTokenVerifier } from '../services/user-tokens.ts';
import type { RequestAuth } from './api-key.ts';
import { deny, type Face } from './deny.ts';

export function useUserTokens(options: { verify: UserTokenVerifier; graphqlPath: string }): Plugin {
  async function verifyToken(auth: RequestAuth, header: string, face: Face, request: Request, endResponse: (response: Response) => void) {
    const match = /^Bearer ([A-Za-z0-9_.~+/=-]+)$/i.exec(header.trim());
    if (!match) {
      endResponse(
        deny(face, request, 401, 'The Authorization header must be "Bearer <token>".', `${BEARER_CHALLENGE}, error="invalid_request"`),
      );
      return;
    }
    try {
      auth.userId = (await options.verify(match[1]!)).userId;
    } catch (error) {
      if (!(error instanceof UnauthenticatedError)) throw error;
      endResponse(deny(face, request, 401, error.message, `${BEARER_CHALLENGE}, error="invalid_token"`));
    }
  }

  return {
    onRequest({ request, url, serverContext, endResponse }) {
      const auth = (serverContext as { auth?: RequestAuth }).auth;
      const header = request.headers.get('authorization');
      // Most requests carry no token; they go on without a promise.
      if (!auth || header === null) return;
      return verifyToken(auth, header, url.pathname === options.graphqlPath ? 'graphql' : 'rest', request, endResponse);
    },
  };
}
