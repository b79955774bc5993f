// User tokens: OAuth 2.0 bearer JWTs, verified with jose against a JWKS URL, a PEM public key or (in
// development) an HS256 secret, with issuer, audience, expiry and a small clock tolerance. `alg:
// none` never verifies: every key source pins the algorithms it accepts. A token may live at most
// JWT_MAX_AGE (`exp` − `iat`; without `iat`, from now), and an `iat` in the future is refused; its
// `sub` must be a user's id.
import { importSPKI, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { ConfigError, JWT_ASYMMETRIC_ALGORITHMS, type JwtConfig } from '../config.ts';
import { isId } from '../db/ids.ts';
import { UnauthenticatedError, UnavailableError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { remoteKeySet, type JwksTiming } from './jwks.ts';
import { resolveSecret } from '../secrets.ts';

export interface UserToken {
  /** The user the token speaks for (`sub`). */
  userId: string;
}

export type UserTokenVerifier = (token: string) => Promise<UserToken>;

/**
 * The HS256 secret user tokens are signed with when no identity provider is configured: JWT_SECRET,
 * or in development one generated into the data folder.
 */
export async function hs256Secret(config: JwtConfig, dataDir: string): Promise<string> {
  return config.secret ?? resolveSecret(undefined, dataDir, 'jwt-secret');
}

export async function userTokenVerifier(
  config: JwtConfig,
  dataDir: string,
  logger: Logger,
  jwksTiming?: JwksTiming,
): Promise<UserTokenVerifier> {
  let key: Uint8Array | CryptoKey | undefined;
  let keySet: JWTVerifyGetKey | undefined;
  let algorithms: string[];
  if (config.jwksUrl) {
    keySet = remoteKeySet(new URL(config.jwksUrl), logger, jwksTiming);
    algorithms = [...JWT_ASYMMETRIC_ALGORITHMS];
  } else if (config.publicKey) {
    try {
      key = await importSPKI(config.publicKey, config.publicKeyAlgorithm);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new ConfigError(
        `JWT_PUBLIC_KEY must be a PEM public key (-----BEGIN PUBLIC KEY-----) for JWT_ALGORITHM ${config.publicKeyAlgorithm}; this one cannot be read as one (${reason}).`,
      );
    }
    algorithms = [config.publicKeyAlgorithm];
  } else {
    key = new TextEncoder().encode(await hs256Secret(config, dataDir));
    algorithms = ['HS256'];
  }
  return async (token) => {
    try {
      const options = {
        issuer: config.issuer,
        audience: config.audience,
        algorithms,
        clockTolerance: config.clockToleranceSec,
        requiredClaims: ['sub', 'exp'],
      };
      const { payload } = keySet ? await jwtVerify(token, keySet, options) : await jwtVerify(token, key!, options);
      // A stolen token is worth what its lifetime is: bound it, and an issue date from the future.
      const now = Math.floor(Date.now() / 1000);
      if (payload.iat !== undefined && payload.iat > now + config.clockToleranceSec) throw new Error('iat in the future');
      if (payload.exp! - (payload.iat ?? now) > config.maxAgeSec) throw new Error('lifetime over JWT_MAX_AGE');
      // jose checks the subject's type only when told which subject to expect: a token that names no
      // user (an array, a number, another system's id) does not verify, rather than meet "not yours".
      const subject: unknown = payload.sub;
      if (typeof subject !== 'string' || !isId('user', subject)) throw new Error('sub is not a user id');
      return { userId: subject };
    } catch (error) {
      // Not the token's fault: the keys to check it with cannot be had (services/jwks.ts).
      if (error instanceof UnavailableError) throw error;
      // The reason stays server-side; clients learn only that the token is not acceptable.
      throw new UnauthenticatedError('The user token is not valid: check its signature, issuer, audience and expiry.');
    }
  };
}
