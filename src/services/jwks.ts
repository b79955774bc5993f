// The identity provider's signing keys (JWT_JWKS_URL), kept by the service. jose's remote key set
// forgot its keys ten minutes after its last good fetch, so an identity provider that was down
// for longer made every user token a 401 `invalid_token` (clients then throw good tokens away and
// sign their users in again); and it fetched again on every token with a key id it did not know
// while the provider failed, each waiting out the time-out, where a failed fetch should hold the
// next one back. Here the last good set is kept for as long as no newer one can be had, refreshed
// in the background once it is old, and a token the service cannot check for want of keys is 503,
// not 401.
import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { UnavailableError, UNAVAILABLE_RETRY_AFTER_S } from '../errors.ts';
import { messageOf } from '../guards.ts';
import type { Logger } from '../log.ts';

export interface JwksTiming {
  /** How long one fetch may take, answer read included. */
  timeoutMs: number;
  /** After this, the set is fetched again in the background (it keeps serving meanwhile). */
  refreshAfterMs: number;
  /** A token whose key id the set lacks fetches it again at most this often (a rotated key). */
  unknownKeyCooldownMs: number;
  /** After a failed fetch, the next waits this long, doubling at each failure up to the maximum. */
  retryFirstMs: number;
  retryMaxMs: number;
}

export const JWKS_TIMING: JwksTiming = {
  timeoutMs: 5000,
  refreshAfterMs: 10 * 60_000,
  unknownKeyCooldownMs: 30_000,
  retryFirstMs: 1000,
  retryMaxMs: 60_000,
};

/** A key set larger than this is no identity provider's: refused rather than read. */
const MAX_BYTES = 1 << 20;

const UNAVAILABLE = `The identity provider's signing keys cannot be fetched right now, so the user token cannot be checked; try again in ${UNAVAILABLE_RETRY_AFTER_S} seconds.`;

interface Fetched {
  keys: JWTVerifyGetKey;
  at: number;
}

export function remoteKeySet(url: URL, logger: Logger, timing: JwksTiming = JWKS_TIMING): JWTVerifyGetKey {
  let fetched: Fetched | undefined;
  let pending: Promise<Fetched | undefined> | undefined;
  let lastAttemptAt = -Infinity;
  let retryDelayMs = 0;
  let failing = false;

  async function download(): Promise<Fetched> {
    const response = await fetch(url, {
      signal: AbortSignal.timeout(timing.timeoutMs),
      redirect: 'error',
      headers: { accept: 'application/json' },
    });
    if (response.status !== 200) throw new Error(`HTTP ${response.status}`);
    const length = Number(response.headers.get('content-length') ?? 0);
    if (length > MAX_BYTES) throw new Error(`a key set of ${length} bytes`);
    const text = await response.text();
    if (text.length > MAX_BYTES) throw new Error(`a key set of ${text.length} characters`);
    const body: unknown = JSON.parse(text);
    // createLocalJWKSet checks the shape (an object with a `keys` array) and throws when it is not.
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- checked by createLocalJWKSet just below
    return { keys: createLocalJWKSet(body as JSONWebKeySet), at: Date.now() };
  }

  /** One fetch at a time; its outcome, or undefined when it failed (logged once per episode). */
  function refresh(): Promise<Fetched | undefined> {
    pending ??= (async () => {
      lastAttemptAt = Date.now();
      try {
        fetched = await download();
        if (failing) logger.warn({ jwksUrl: url.origin + url.pathname }, "the identity provider's signing keys are fetched again");
        failing = false;
        retryDelayMs = 0;
        return fetched;
      } catch (error) {
        if (!failing) {
          logger.error(
            { jwksUrl: url.origin + url.pathname, err: messageOf(error), keptKeysAgeMs: fetched ? Date.now() - fetched.at : null },
            "the identity provider's signing keys cannot be fetched; the last ones fetched stay in use",
          );
        }
        failing = true;
        retryDelayMs = Math.min(Math.max(retryDelayMs * 2, timing.retryFirstMs), timing.retryMaxMs);
        return undefined;
      } finally {
        pending = undefined;
      }
    })();
    return pending;
  }

  /** Whether a fetch may start now: not while one failed lately, nor twice within `minGapMs`. */
  const mayFetch = (minGapMs: number) => Date.now() - lastAttemptAt >= (failing ? retryDelayMs : minGapMs);

  return async (header, token) => {
    if (!fetched && mayFetch(0)) await refresh();
    const current = fetched;
    if (!current) throw new UnavailableError(UNAVAILABLE);
    // Old: fetched again for the next tokens, while this one is checked with what is at hand.
    if (Date.now() - current.at > timing.refreshAfterMs && mayFetch(0)) void refresh();
    try {
      return await current.keys(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
      // A key the set lacks: the provider may have rotated to it, or the token is forged.
      if (pending) {
        const next = await pending;
        if (next && next !== current) return next.keys(header, token);
      } else if (mayFetch(timing.unknownKeyCooldownMs)) {
        const next = await refresh();
        if (next) return next.keys(header, token);
      }
      // Not fetched again: unknown to the newest set there is, or to one that could not be renewed.
      if (failing) throw new UnavailableError(UNAVAILABLE);
      throw error;
    }
  };
}
