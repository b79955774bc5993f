// What an API key looks like and how it is kept: `pk_live_` or `pk_test_`, then 192 random bits in
// base62 (so secret scanners can spot leaked keys and double-click selects the whole key). Only an
// HMAC-SHA256 under a server-side pepper is stored; the first characters are a public prefix used
// to find the key and to show it.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_BYTES = 24;
/** 62^33 > 2^192: every 24-byte value fits in 33 characters. */
const SECRET_LENGTH = 33;
const PREFIX_CHARS = 8;
const KEY_PATTERN = new RegExp(`^pk_(live|test)_[0-9A-Za-z]{${SECRET_LENGTH}}$`);
/** Every key-shaped run of characters in a text (a URL where a client put a key by mistake, say). */
export const KEYS_IN_TEXT = new RegExp(`pk_(?:live|test)_[0-9A-Za-z]{${SECRET_LENGTH}}`, 'g');

export type KeyEnvironment = 'live' | 'test';

function base62(bytes: Uint8Array): string {
  let value = BigInt(`0x${Buffer.from(bytes).toString('hex')}`);
  let out = '';
  for (let i = 0; i < SECRET_LENGTH; i++) {
    out = BASE62[Number(value % 62n)] + out;
    value /= 62n;
  }
  return out;
}

export function generateKeySecret(environment: KeyEnvironment): { secret: string; prefix: string } {
  const secret = `pk_${environment}_${base62(randomBytes(RANDOM_BYTES))}`;
  return { secret, prefix: prefixOf(secret)! };
}

const PREFIX_PATTERN = new RegExp(`^pk_(live|test)_[0-9A-Za-z]{${PREFIX_CHARS}}$`);

/** Whether the text is a key's public prefix (`pk_live_AbCd1234`). */
export function isKeyPrefix(text: string): boolean {
  return PREFIX_PATTERN.test(text);
}

/** The public prefix of a well-formed key (`pk_live_AbCd1234`), or undefined for anything else. */
export function prefixOf(secret: string): string | undefined {
  return KEY_PATTERN.test(secret) ? secret.slice(0, secret.indexOf('_', 3) + 1 + PREFIX_CHARS) : undefined;
}

export function hashKeySecret(secret: string, pepper: string): string {
  return createHmac('sha256', pepper).update(secret).digest('hex');
}

/** Constant-time comparison of a presented key with a stored hash. */
export function keySecretMatches(secret: string, storedHash: string, pepper: string): boolean {
  const presented = Buffer.from(hashKeySecret(secret, pepper), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}

/** At most the prefix and the last four characters, for logs, listings and errors. */
export function maskKeySecret(secret: string): string {
  const prefix = prefixOf(secret);
  return prefix ? `${prefix}…${secret.slice(-4)}` : '[not a key]';
}

/** `text` with every key-shaped run of characters in it masked: for answers that quote what the client sent. */
export function maskKeysIn(text: string): string {
  return text.includes('pk_') ? text.replace(KEYS_IN_TEXT, maskKeySecret) : text;
}
