import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.ts';
import { CursorCodec, MAX_CURSOR_LENGTH } from '../../src/pagination/cursor.ts';
import { NAME_MAX_LENGTH } from '../../src/services/limits.ts';

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

  it('is short and cheap: a position by creation time fits in 64 characters', () => {
    const position = [1_700_000_000_000, 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m'];
    expect(codec.encode('users/created', position).length).toBeLessThanOrEqual(64);
    // Names (a sort key) travel as they are; they were just sent to the client anyway.
    expect(
      codec.decode('users/sort:name', codec.encode('users/sort:name', ['Zoë Ávila', 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m']), 'cursor'),
    ).toEqual(['Zoë Ávila', 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m']);
  });

  it("takes back every cursor it mints, the longest name's too, and nothing longer than the longest it takes", () => {
    // A name of the most characters, each taking 4 bytes in UTF-8.
    const longest = ['\u{1D538}'.repeat(NAME_MAX_LENGTH), 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m'];
    const cursor = codec.encode('users/sort:-name', longest);
    expect(cursor.length).toBeLessThanOrEqual(MAX_CURSOR_LENGTH);
    expect(codec.decode('users/sort:-name', cursor, 'cursor')).toEqual(longest);
    expect(rejection(() => codec.decode('users/sort:-name', `${cursor}A`, 'cursor')).fieldErrors[0]!.field).toBe('cursor');
    const tooLong = 'A'.repeat(MAX_CURSOR_LENGTH + 1);
    expect(rejection(() => codec.decode('users/sort:-name', tooLong, 'cursor')).fieldErrors[0]!.field).toBe('cursor');
  });

  // Pinned so that a change to how cursors are built cannot change, unnoticed, what clients hold.
  const minted: [string, (string | number)[], string][] = [
    ['users/created', [1700000000000, 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m'], 'AwEBi8_laAADdXNyAZNH0a0betOQ2JoljXFM9J3bCToXS07q'],
    ['users/sort:name', ['Zoë Ávila', 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m'], 'AwIAC1pvw6sgw4F2aWxhA3VzcgGTR9GtG3rTkNiaJY1xTPRbFdj-ltn45Q'],
    ['orders/created', [0, 'not-an-id'], 'AwEAAAAAAAACAAlub3QtYW4taWRQTWzIOwi9MQ'],
    ['events/sequence', [281474976710655, 'evt_7zzzzzzzzzzzzzzzzzzzzzzzzz'], 'AwH_______8DZXZ0_____________________2JUEmKaRMxs'],
  ];
  // Minted by the releases whose cursors carried a 96-bit SHA-512/256 tag (format version 2).
  const mintedBefore: [string, (string | number)[], string][] = [
    ['users/created', [1700000000000, 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m'], 'AgEBi8_laAADdXNyAZNH0a0betOQ2JoljXFM9NZw1M2OxCjxtMLJcg'],
    ['users/sort:name', ['Zoë Ávila', 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m'], 'AgIAC1pvw6sgw4F2aWxhA3VzcgGTR9GtG3rTkNiaJY1xTPQFk-1Nzq-drEUNvjM'],
    ['orders/created', [0, 'not-an-id'], 'AgEAAAAAAAACAAlub3QtYW4taWTpB7hVkhfK0OANu08'],
    ['events/sequence', [281474976710655, 'evt_7zzzzzzzzzzzzzzzzzzzzzzzzz'], 'AgH_______8DZXZ0_____________________-55bxXX3Ow0BbKt7g'],
  ];

  it('mints the same cursor for the same position, release after release', () => {
    for (const [scope, position, cursor] of minted) {
      expect(codec.encode(scope, position)).toBe(cursor);
      expect(codec.decode(scope, cursor, 'after')).toEqual(position);
    }
  });

  it('takes the cursors of the format before, so that clients paging through an upgrade keep their place', () => {
    const foreign = new CursorCodec('another-secret-of-at-least-thirty-two-chars');
    for (const [scope, position, cursor] of mintedBefore) {
      expect(codec.decode(scope, cursor, 'after')).toEqual(position);
      const otherList = scope === 'orders/created' ? 'users/created' : 'orders/created';
      expect(() => codec.decode(otherList, cursor, 'after')).toThrow(ValidationError);
      expect(() => foreign.decode(scope, cursor, 'after')).toThrow(ValidationError);
    }
  });

  it('mints long names, and the cursors after them, as a codec that never saw one does', () => {
    const long = ['É'.repeat(200) + '𝄞'.repeat(50), 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m'];
    const cursor = codec.encode('users/sort:name', long);
    expect(codec.decode('users/sort:name', cursor, 'after')).toEqual(long);
    const fresh = new CursorCodec('a-secret-of-at-least-thirty-two-characters');
    expect(codec.encode('users/created', [1, 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m'])).toBe(
      fresh.encode('users/created', [1, 'usr_01jd3x3b8vfb9s1p4t4p6q2k7m']),
    );
  });

  it('refuses a cursor with any bit changed, of either format', () => {
    const cursors = [...minted, ...mintedBefore].map(([scope, , cursor]) => [scope, cursor]);
    cursors.push(['users/created', codec.encode('users/created', [1, 'x'])]);
    for (const [scope, cursor] of cursors) {
      const raw = Buffer.from(cursor!, 'base64url');
      for (let bit = 0; bit < raw.length * 8; bit++) {
        const forged = Buffer.from(raw);
        forged[bit >> 3] = forged[bit >> 3]! ^ (1 << (bit & 7));
        expect(() => codec.decode(scope!, forged.toString('base64url'), 'after')).toThrow(ValidationError);
      }
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

  it('refuses cursors of the earlier, encrypted format', () => {
    const earlier = Buffer.concat([Buffer.from([1]), Buffer.alloc(60, 7)]).toString('base64url');
    expect(() => codec.decode('users/created', earlier, 'after')).toThrow(ValidationError);
  });
});
