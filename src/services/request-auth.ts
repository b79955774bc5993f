// Who is calling, as the plugins establish it for one request and the resolvers read it.
import type { VerifiedKey } from './api-key-verifier.ts';

export interface RequestAuth {
  key: VerifiedKey;
  clientIp: string;
  /** The user a valid bearer token speaks for, when the request carries one. */
  userId?: string;
}

/** The WWW-Authenticate challenge of a request without a valid API key. */
export const API_KEY_CHALLENGE = 'ApiKey realm="portico", header="x-api-key"';

/** The WWW-Authenticate challenge of a request that needs a user token (RFC 6750). */
export const BEARER_CHALLENGE = 'Bearer realm="portico"';
