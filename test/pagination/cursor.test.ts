import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.ts';
import { CursorCodec } from '../../src/pagination/cursor.ts';

const codec = new CursorCodec('a-secret-of-at-least-thirty-two-characters');

function rejection(action: () => unknown): ValidationError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error('expected a ValidationError');
}

describe('cursor codec', () => {
  it('round-trips a position for its scope', () => {
    const cursor = codec.encode('users/created', [1_700_000_000_000, 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m']);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(codec.decode('users/created', cursor, 'after')).toEqual([1_700_000_000_000, 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m']);
  });

  it('is opaque: the position cannot be read from the cursor', () => {
    const cursor = codec.encode('users/created', ['usr_01jd3x3b8vfb9s1p4t4p6q2k7m']);
    const bytes = Buffer.from(cursor, 'base64url').toString('latin1');
    expect(bytes).not.toContain('usr_');
    expect(bytes).not.toContain('users');
  });

  it('refuses a cursor with any byte changed', () => {
    const cursor = codec.encode('users/created', [1, 'x']);
    const raw = Buffer.from(cursor, 'base64url');
    for (let i = 0; i < raw.length; i++) {
      const forged = Buffer.from(raw);
      forged[i] = forged[i]! ^ 0x01;
      expect(() => codec.decode('users/created', forged.toString('base64url'), 'after')).toThrow(ValidationError);
    }
  });

  it('refuses truncated, empty, oversized and non-base64 cursors, naming the field', () => {
    const cursor = codec.encode('users/created', [1, 'x']);
    for (const bad of [cursor.slice(0, -4), cursor.slice(0, 10), '', 'a'.repeat(600), 'not a cursor!', '{"id":1}']) {
      expect(rejection(() => codec.decode('users/created', bad, 'after')).fieldErrors[0]?.field).toBe('after');
    }
  });

  it('refuses a cursor minted for another list or by another secret', () => {
    const cursor = codec.encode('orders/created', [1, 'x']);
    expect(() => codec.decode('users/created', cursor, 'after')).toThrow(ValidationError);
    const foreign = new CursorCodec('another-secret-of-at-least-thirty-two-chars').encode('users/created', [1, 'x']);
    expect(() => codec.decode('users/created', foreign, 'after')).toThrow(ValidationError);
  });

  it('refuses a cursor of an unknown version', () => {
    const raw = Buffer.from(codec.encode('users/created', [1]), 'base64url');
    raw[0] = 2;
    expect(() => codec.decode('users/created', raw.toString('base64url'), 'after')).toThrow(ValidationError);
  });
});
