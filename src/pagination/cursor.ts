// The one cursor codec: GraphQL connections, REST `nextCursor` and keyset pages all use it.
//
// A cursor is a position (the last row's sort key and id) in a compact binary form, followed by a
// 64-bit tag over the list's scope and the position, base64url-encoded: 48 characters for a list by
// creation time. The tag makes it tamper-evident and binds it to its list and sort, so a forged,
// truncated or foreign cursor is refused instead of silently mis-positioning a page. It is signed,
// not encrypted: it holds nothing the client was not just sent (that row's time or name, and its
// id). The tag is SipHash-2-4 (pagination/siphash.ts), a MAC made for short messages: a page of 20
// edges mints 20 cursors, and a hash through node:crypto cost 1.5–2 µs a call, three times the rest
// of a cursor's making. A guess at a tag is right once in 2^64; every guess is a request, counted
// by the rate limit.
// Cursors of the format before (version 2: a 96-bit tag, SHA-512/256 of a key and the message) are
// still taken, so that a client paging through a deployment does not lose its place.
import { hash, hkdfSync, timingSafeEqual } from 'node:crypto';
import { idFromParts, writeIdParts } from '../db/ids.ts';
import { ValidationError } from '../errors.ts';
import { NAME_MAX_LENGTH } from '../services/limits.ts';
import { sipHash24, sipKey, type SipKey } from './siphash.ts';

/** The format minted, and the one before it, still taken. */
const VERSION = 3;
const VERSION_2 = 2;
const TAG_BYTES = 8;
const VERSION_2_TAG_BYTES = 12;
/**
 * The longest cursor taken (longer input is refused before any work): a name sort's, holding the
 * version, the longest name (up to 4 bytes of UTF-8 a character, after its kind and length), an id
 * and the tag, in base64url; the format before, whose tag is longer, sets it.
 */
export const MAX_CURSOR_LENGTH = Math.ceil(((1 + 3 + 4 * NAME_MAX_LENGTH + 20 + VERSION_2_TAG_BYTES) * 4) / 3);

/** What a value that is no cursor of the list it was given to is told. */
export const CURSOR_REFUSAL = 'is not a valid cursor for this list; use a cursor it returned (for the same sort, where it takes one)';

/** Whether a value could be a cursor at all (checked before its signature, and by REST before a request runs). */
export function isCursorShaped(cursor: string): boolean {
  return cursor.length > 0 && cursor.length <= MAX_CURSOR_LENGTH && /^[A-Za-z0-9_-]+$/.test(cursor);
}

/** How each value of a position is written. */
const Kind = {
  /** An integer from 0 to 2^48 − 1 (epoch milliseconds), in 6 bytes. */
  Int48: 1,
  /** A string: 2 bytes of length, then UTF-8. */
  Text: 2,
  /** An id: its 3-letter prefix, then its 16 UUID bytes. */
  Id: 3,
} as const;

export type CursorValue = string | number;

export class CursorCodec {
  readonly #key: SipKey;
  /** The key of the format before, for cursors minted with it. */
  readonly #version2Key: Buffer;
  /**
   * Where encode() writes the scope, the position and the tag, one after the other, so that a
   * cursor costs one tag and its string and nothing else: a page of 20 edges mints 20. Encoding is
   * synchronous, so one buffer serves every call. It grows for long names.
   */
  #scratch = Buffer.alloc(256);
  /** The scope written at the start of #scratch, and where the body starts after it: a page mints its cursors for one scope. */
  #scope: string | undefined;
  #body = 0;

  constructor(secret: string) {
    this.#key = sipKey(new Uint8Array(hkdfSync('sha256', secret, 'portico', `cursor v${VERSION}`, 16)));
    this.#version2Key = Buffer.from(hkdfSync('sha256', secret, 'portico', `cursor v${VERSION_2}`, 32));
  }

  encode(scope: string, position: readonly CursorValue[]): string {
    // The most any value takes: 1 kind byte, then 6 bytes of an integer, or an id's 19 bytes, or a
    // text's 2 bytes of length and at most 3 bytes per UTF-16 unit.
    let most = 3 * scope.length + 2 + TAG_BYTES;
    for (const value of position) most += typeof value === 'number' ? 7 : 3 + 3 * value.length;
    if (most > this.#scratch.length) {
      this.#scratch = Buffer.alloc(most);
      this.#scope = undefined;
    }
    const b = this.#scratch;
    if (scope !== this.#scope) {
      this.#body = b.write(scope, 0, 'utf8') + 1;
      b[this.#body - 1] = 0;
      this.#scope = scope;
    }
    const body = this.#body;
    let at = body;
    b[at++] = VERSION;
    for (const value of position) {
      if (typeof value === 'number') {
        b[at] = Kind.Int48;
        b.writeUIntBE(value, at + 1, 6);
        at += 7;
      } else if (writeIdParts(value, b, at + 1)) {
        b[at] = Kind.Id;
        at += 20;
      } else {
        const length = b.write(value, at + 3, 'utf8');
        b[at] = Kind.Text;
        b.writeUInt16BE(length, at + 1);
        at += 3 + length;
      }
    }
    // The tag is over the scope and the body, as #tag computes it; the cursor is body and tag.
    const end = sipHash24(this.#key, b, 0, at, b, at);
    return b.toString('base64url', body, end);
  }

  /** The position encoded in `cursor`; a ValidationError on `field` for anything not minted here for `scope`. */
  decode(scope: string, cursor: string, field: string): CursorValue[] {
    const invalid = () => ValidationError.field(field, CURSOR_REFUSAL);
    if (!isCursorShaped(cursor)) throw invalid();
    const raw = Buffer.from(cursor, 'base64url');
    const tagBytes = raw[0] === VERSION ? TAG_BYTES : raw[0] === VERSION_2 ? VERSION_2_TAG_BYTES : 0;
    if (tagBytes === 0 || raw.length < 1 + tagBytes) throw invalid();
    const body = raw.subarray(0, raw.length - tagBytes);
    if (!timingSafeEqual(raw.subarray(raw.length - tagBytes), this.#tag(scope, body))) throw invalid();
    const values: CursorValue[] = [];
    // The tag proves these bytes were written by encode(), so their structure can be trusted.
    for (let at = 1; at < body.length;) {
      const kind = body[at++];
      if (kind === Kind.Int48) {
        values.push(body.readUIntBE(at, 6));
        at += 6;
      } else if (kind === Kind.Id) {
        values.push(idFromParts(body.subarray(at, at + 3).toString('latin1'), body.subarray(at + 3, at + 19)));
        at += 19;
      } else {
        const length = body.readUInt16BE(at);
        values.push(body.subarray(at + 2, at + 2 + length).toString('utf8'));
        at += 2 + length;
      }
    }
    return values;
  }

  /** The tag `body` (whose first byte is its version) must carry for `scope`. */
  #tag(scope: string, body: Buffer): Buffer {
    const scoped = Buffer.from(`${scope}\0`);
    if (body[0] === VERSION_2) {
      return hash('sha512-256', Buffer.concat([this.#version2Key, scoped, body]), 'buffer').subarray(0, VERSION_2_TAG_BYTES);
    }
    const message = Buffer.concat([scoped, body]);
    const tag = Buffer.alloc(TAG_BYTES);
    sipHash24(this.#key, message, 0, message.length, tag, 0);
    return tag;
  }
}
