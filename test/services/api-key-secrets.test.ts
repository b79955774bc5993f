import { describe, expect, it } from 'vitest';
import { generateKeySecret, hashKeySecret, keySecretMatches, maskKeySecret, prefixOf } from '../../src/services/api-key-secrets.ts';

const PEPPER = 'a-pepper-of-at-least-thirty-two-characters';

describe('API key secrets', () => {
  it('look like pk_live_/pk_test_ plus 33 base62 characters (192 random bits) and are all different', () => {
    const keys = Array.from({ length: 500 }, () => generateKeySecret('test').secret);
    for (const key of keys) expect(key).toMatch(/^pk_test_[0-9A-Za-z]{33}$/);
    expect(new Set(keys).size).toBe(keys.length);
    expect(generateKeySecret('live').secret).toMatch(/^pk_live_/);
  });

  it('have a public prefix of the environment and eight characters', () => {
    const { secret, prefix } = generateKeySecret('live');
    expect(prefix).toBe(secret.slice(0, 16));
    expect(prefixOf(secret)).toBe(prefix);
    for (const bad of ['', 'pk_live_short', `sk_live_${'a'.repeat(33)}`, `pk_prod_${'a'.repeat(33)}`, `pk_live_${'a'.repeat(32)}!`]) {
      expect(prefixOf(bad)).toBeUndefined();
    }
  });

  it('are stored as a peppered HMAC that only the same key and pepper match', () => {
    const { secret } = generateKeySecret('test');
    const hash = hashKeySecret(secret, PEPPER);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).not.toContain(secret.slice(8));
    expect(keySecretMatches(secret, hash, PEPPER)).toBe(true);
    expect(keySecretMatches(generateKeySecret('test').secret, hash, PEPPER)).toBe(false);
    expect(keySecretMatches(secret, hash, 'another-pepper-of-at-least-thirty-two-chars')).toBe(false);
    expect(keySecretMatches(secret, 'not-hex', PEPPER)).toBe(false);
  });

  it('are masked to the prefix and the last four characters', () => {
    const { secret, prefix } = generateKeySecret('test');
    expect(maskKeySecret(secret)).toBe(`${prefix}…${secret.slice(-4)}`);
    expect(maskKeySecret('garbage')).toBe('[not a key]');
  });
});
