import { describe, expect, it } from 'vitest';
import { idAt, idParts, isId, newId } from '../../src/db/ids.ts';

describe('ids', () => {
  it('are type-prefixed TypeIDs that say which kind they are', () => {
    const user = newId('user');
    const order = newId('order');
    expect(user).toMatch(/^usr_[0-7][0-9a-hjkmnp-tv-z]{25}$/);
    expect(order).toMatch(/^ord_[0-7][0-9a-hjkmnp-tv-z]{25}$/);
    expect(isId('user', user)).toBe(true);
    expect(isId('order', user)).toBe(false);
    expect(isId('user', order)).toBe(false);
  });

  it('sort in the order they were minted, byte-wise', () => {
    const ids = Array.from({ length: 2000 }, () => newId('user'));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('are UUIDv7s of the time they were minted, with random bits that differ', () => {
    const before = Date.now();
    const ids = Array.from({ length: 50 }, () => newId('order'));
    const after = Date.now();
    for (const id of ids) {
      const { bytes } = idParts(id)!;
      const msecs = Buffer.from(bytes).readUIntBE(0, 6);
      expect(msecs).toBeGreaterThanOrEqual(before);
      expect(msecs).toBeLessThanOrEqual(after);
      expect(bytes[6]! >> 4, 'version').toBe(7);
      expect(bytes[8]! >> 6, 'variant').toBe(0b10);
    }
    // The last 5 bytes are random in every id, not a counter's.
    const tails = new Set(ids.map((id) => Buffer.from(idParts(id)!.bytes.subarray(11)).toString('hex')));
    expect(tails.size).toBe(ids.length);
  });

  it('minted for given times sort by those times', () => {
    const early = idAt('order', new Date('2026-01-01T00:00:00Z'), 5);
    const sameMsLater = idAt('order', new Date('2026-01-01T00:00:00Z'), 6);
    const late = idAt('order', new Date('2026-06-01T00:00:00Z'), 0);
    expect([late, sameMsLater, early].sort()).toEqual([early, sameMsLater, late]);
    expect(isId('order', early)).toBe(true);
  });

  it.each([
    '',
    'usr_',
    'usr_123',
    'USR_01jd3x3b8vfb9s1p4t4p6q2k7m',
    'usr_81jd3x3b8vfb9s1p4t4p6q2k7m',
    'usr_01jd3x3b8vfb9s1p4t4p6q2k7mx',
    'usr_01jd3x3b8vfb9s1p4t4p6q2k7u',
    "usr_01jd3x3b8vfb9s1p4t4p6q2k7'",
  ])('rejects the malformed id %j', (value) => {
    expect(isId('user', value)).toBe(false);
  });
});
