// Public ids are TypeIDs: a type prefix, an underscore and a UUIDv7 written as 26 characters of
// lowercase Crockford base32 (`usr_01jd4…`). UUIDv7 starts with a millisecond timestamp and the
// uuid package keeps ids monotonic within a process, so sorting ids (byte-wise, collation "C")
// sorts rows by creation time. The prefix makes ids unique across types and self-describing.
import { v7 as uuidv7 } from 'uuid';

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

export function newId(kind: IdKind): string {
  const bytes = new Uint8Array(16);
  uuidv7(undefined, bytes);
  return `${ID_PREFIXES[kind]}_${encodeBase32(bytes)}`;
}

/** True when `value` is a well-formed id of the given kind. */
export function isId(kind: IdKind, value: string): boolean {
  const match = ID_PATTERN.exec(value);
  return match !== null && match[1] === ID_PREFIXES[kind];
}

// Bulk loads mint ids by the million; drawing randomness a block at a time keeps that cheap.
let pool = new Uint8Array(0);
let poolOffset = 0;
function randomTail(): Uint8Array {
  if (poolOffset + 8 > pool.length) {
    pool = crypto.getRandomValues(new Uint8Array(65_536));
    poolOffset = 0;
  }
  poolOffset += 8;
  return pool.subarray(poolOffset - 8, poolOffset);
}

/** 16 bytes that begin with the UUIDv7 timestamp of `at`, the rest zero. */
function timestamped(at: Date): Uint8Array {
  const bytes = new Uint8Array(16);
  const ms = BigInt(at.getTime());
  for (let i = 0; i < 6; i++) bytes[i] = Number((ms >> BigInt(8 * (5 - i))) & 0xffn);
  return bytes;
}

/** The lowest id of a kind for the instant `at`: ids minted earlier sort below it, ids minted since above. */
export function idFloor(kind: IdKind, at: Date): string {
  return `${ID_PREFIXES[kind]}_${encodeBase32(timestamped(at))}`;
}

/** An id for a given time, for bulk loads that back-date rows while keeping ids in creation order. */
export function idAt(kind: IdKind, at: Date, sequence: number): string {
  const bytes = timestamped(at);
  // Version 7, then a 12-bit sequence and random tail, so ids minted for the same millisecond stay ordered.
  bytes[6] = 0x70 | ((sequence >> 8) & 0x0f);
  bytes[7] = sequence & 0xff;
  bytes.set(randomTail(), 8);
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  return `${ID_PREFIXES[kind]}_${encodeBase32(bytes)}`;
}
