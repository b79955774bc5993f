// The fingerprint of a request must not change from one version of the service to the next: records
// keep the fingerprints of the requests they answer, and a retry sent across an upgrade must still
// match its own record (a changed text would refuse it as a different request, 422). The canonical
// text is checked here against its first definition, JSON.stringify with every object's keys sorted.
import { describe, expect, it } from 'vitest';
import { canonicalJson, fingerprintOf } from '../../src/services/idempotency.ts';

/** The canonical text as first defined. */
function reference(value: unknown): string | undefined {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}

/** A small deterministic generator, so that a failure names a case that can be run again. */
function generator(seed: number) {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
  const keys = [
    'a',
    'b',
    'B',
    'z',
    '_',
    '0',
    '1',
    '9',
    '10',
    '01',
    '-1',
    '1.5',
    '4294967294',
    '4294967295',
    'é',
    'ü',
    '\u{1F600}',
    'a b',
    '"',
    '',
  ];
  const scalar = (): unknown => {
    const pick = Math.floor(next() * 9);
    return [null, true, false, 0, -0, 1.5e300, Math.floor(next() * 1000) - 500, 'text "quoted" \\ \n', undefined][pick];
  };
  const value = (depth: number): unknown => {
    const kind = depth > 3 ? 0 : Math.floor(next() * 3);
    if (kind === 0) return scalar();
    if (kind === 1) return Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1));
    return Object.fromEntries(
      Array.from({ length: Math.floor(next() * 6) }, () => [keys[Math.floor(next() * keys.length)]!, value(depth + 1)]),
    );
  };
  return value;
}

describe('the canonical text of a request', () => {
  it('is what it was first defined as, for any JSON value (keys that are array indices, unicode, nesting, undefined members)', () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const value = generator(seed)(0);
      expect(canonicalJson(['graphql', 'mutation { x }', value, null]), `seed ${seed}`).toBe(
        reference(['graphql', 'mutation { x }', value, null]),
      );
    }
  });

  it('writes what toJSON gives, as JSON.stringify does (a date as its ISO text)', () => {
    const value = { at: new Date(Date.UTC(2026, 10, 27)), nested: { toJSON: () => ({ b: 1, a: [2, { d: 3, c: 4 }] }) } };
    expect(canonicalJson(value)).toBe(reference(value));
  });

  it('is the same for the same values in another key order, and so is the fingerprint', () => {
    const one = { input: { userId: 'usr_1', total: 1200, status: 'pending' } };
    const other = { input: { status: 'pending', total: 1200, userId: 'usr_1' } };
    expect(canonicalJson(one)).toBe(canonicalJson(other));
    expect(fingerprintOf(['rest', 'POST', '/users/usr_1/orders', one])).toBe(fingerprintOf(['rest', 'POST', '/users/usr_1/orders', other]));
    expect(fingerprintOf(['rest', 'POST', '/users/usr_1/orders', one])).toMatch(/^[0-9a-f]{64}$/);
  });
});
