// Public ids are TypeIDs: a type prefix, an underscore and a UUIDv7 written as 26 characters of
// lowercase Crockford base32 (`usr_01jd4…`). UUIDv7 starts with a millisecond timestamp, and ids
// minted here are monotonic within a process, so sorting ids (byte-wise, collation "C") sorts rows
// by creation time. The prefix makes ids unique across types and self-describing.

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export const ID_PREFIXES = { user: 'usr', order: 'ord', apiKey: 'key', event: 'evt', webhookEndpoint: 'wep' } as const;
export type IdKind = keyof typeof ID_PREFIXES;

const ID_PATTERN = /^([a-z]{3})_([0-7][0-9a-hjkmnp-tv-z]{25})$/;

function encodeBase32(bytes: Uint8Array): string {
  // 128 bits as 26 characters: the first carries the top 3 bits, each of the other 25 five bits.
  let out = ALPHABET[bytes[0]! >> 5]!;
  let buffer = bytes[0]! & 0x1f;
  let bits = 5;
  for (let i = 1; i < 16; i++) {
    buffer = (buffer << 8) | bytes[i]!;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(buffer >> bits) & 31];
    }
    buffer &= (1 << bits) - 1;
  }
  return out;
}

/** Each base32 character's value by its char code: a look-up, not a search, per character. */
const VALUES = new Uint8Array(128);
for (let i = 0; i < ALPHABET.length; i++) VALUES[ALPHABET.charCodeAt(i)] = i;

/** Writes the 16 bytes of a well-formed id's 26 base32 characters (from `from` in `text`) at `at` in `bytes`. */
function decodeBase32(text: string, from: number, bytes: Uint8Array, at: number): void {
  let buffer = VALUES[text.charCodeAt(from)]!;
  let bits = 3;
  for (let i = from + 1; i < from + 26; i++) {
    buffer = (buffer << 5) | VALUES[text.charCodeAt(i)]!;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes[at++] = (buffer >> bits) & 0xff;
      buffer &= (1 << bits) - 1;
    }
  }
}

/** A well-formed id as its three-letter prefix and its 16 UUID bytes (compact, for cursors). */
export function idParts(id: string): { prefix: string; bytes: Uint8Array } | undefined {
  if (!ID_PATTERN.test(id)) return undefined;
  const bytes = new Uint8Array(16);
  decodeBase32(id, 4, bytes, 0);
  return { prefix: id.slice(0, 3), bytes };
}

/**
 * Writes a well-formed id as idParts gives it, its prefix (3 bytes) then its UUID bytes (16), at
 * `at` in `target`; false, writing nothing, for anything else. Cursors are built this way, one per
 * edge of a page, without an object per id.
 */
export function writeIdParts(id: string, target: Buffer, at: number): boolean {
  if (!ID_PATTERN.test(id)) return false;
  target.write(id, at, 3, 'latin1');
  decodeBase32(id, 4, target, at + 3);
  return true;
}

/** The id `idParts` took apart. */
export function idFromParts(prefix: string, bytes: Uint8Array): string {
  return `${prefix}_${encodeBase32(bytes)}`;
}

/** The millisecond of the last id minted, and its sequence. */
const clock = { msecs: -Infinity, sequence: 0 };

/**
 * A new id: a UUIDv7 laid out as the uuid package lays it out (RFC 9562 §6.2, method 1): the
 * millisecond, then a 32-bit sequence seeded at random (31 bits) in each new millisecond and
 * counted up within one, then random bits. The randomness is drawn a block at a time: a write mints
 * two ids or more, and a call into the system's generator for 16 bytes costs more than the rest.
 */
export function newId(kind: IdKind): string {
  const random = randomBytes(16);
  const now = Date.now();
  if (now > clock.msecs) {
    clock.msecs = now;
    clock.sequence = (((random[6]! & 0x7f) << 24) | (random[7]! << 16) | (random[8]! << 8) | random[9]!) >>> 0;
  } else {
    clock.sequence = (clock.sequence + 1) >>> 0;
    // Past 2^32 ids in one millisecond, the next millisecond's ids are borrowed; they still sort.
    if (clock.sequence === 0) clock.msecs++;
  }
  const { msecs, sequence } = clock;
  const bytes = timestamped(msecs);
  bytes[6] = 0x70 | ((sequence >>> 28) & 0x0f);
  bytes[7] = (sequence >>> 20) & 0xff;
  bytes[8] = 0x80 | ((sequence >>> 14) & 0x3f);
  bytes[9] = (sequence >>> 6) & 0xff;
  bytes[10] = ((sequence << 2) & 0xff) | (random[10]! & 0x03);
  bytes.set(random.subarray(11, 16), 11);
  return `${ID_PREFIXES[kind]}_${encodeBase32(bytes)}`;
}

/** True when `value` is a well-formed id of the given kind. */
export function isId(kind: IdKind, value: string): boolean {
  const match = ID_PATTERN.exec(value);
  return match !== null && match[1] === ID_PREFIXES[kind];
}

// Writes mint ids, and bulk loads mint them by the million; drawing randomness a block at a time
// keeps that cheap. Each byte is handed out once.
let pool = new Uint8Array(0);
let poolOffset = 0;
function randomBytes(count: number): Uint8Array {
  if (poolOffset + count > pool.length) {
    pool = crypto.getRandomValues(new Uint8Array(65_536));
    poolOffset = 0;
  }
  poolOffset += count;
  return pool.subarray(poolOffset - count, poolOffset);
}

/** 16 bytes that begin with the UUIDv7 timestamp of `msecs` (48 bits, big-endian), the rest zero. */
function timestamped(msecs: number): Uint8Array {
  const bytes = new Uint8Array(16);
  for (let i = 0; i < 6; i++) bytes[i] = Math.floor(msecs / 2 ** (8 * (5 - i))) & 0xff;
  return bytes;
}

/** The lowest id of a kind for the instant `at`: ids minted earlier sort below it, ids minted since above. */
export function idFloor(kind: IdKind, at: Date): string {
  return `${ID_PREFIXES[kind]}_${encodeBase32(timestamped(at.getTime()))}`;
}

/** An id for a given time, for bulk loads that back-date rows while keeping ids in creation order. */
export function idAt(kind: IdKind, at: Date, sequence: number): string {
  const bytes = timestamped(at.getTime());
  // Version 7, then a 12-bit sequence and random tail, so ids minted for the same millisecond stay ordered.
  bytes[6] = 0x70 | ((sequence >> 8) & 0x0f);
  bytes[7] = sequence & 0xff;
  bytes.set(randomBytes(8), 8);
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  return `${ID_PREFIXES[kind]}_${encodeBase32(bytes)}`;
}
