// The one cursor codec: GraphQL connections, REST `nextCursor` and keyset pages all use it.
//
// A cursor is a position (the last row's sort key and id) in a compact binary form, followed by a
// 96-bit tag over the list's scope and the position, base64url-encoded: 54 characters for a list by
// creation time. The tag makes it tamper-evident and binds it to its list and sort, so a forged,
// truncated or foreign cursor is refused instead of silently mis-positioning a page. It is signed,
// not encrypted: it holds nothing the client was not just sent (that row's time or name, and its
// id). The tag is SHA-512/256 of the key followed by the message: a truncated hash is immune to
// length extension, so keying it this way is a sound MAC, at one hash per cursor (HMAC takes two,
// and an object per call; a page of 20 edges mints 20 cursors).
import { hash, hkdfSync, timingSafeEqual } from 'node:crypto';
import { idFromParts, writeIdParts } from '../db/ids.ts';
import { ValidationError } from '../errors.ts';
import { NAME_MAX_LENGTH } from '../services/limits.ts';

const VERSION = 2;
const TAG_BYTES = 12;
/**
 * The longest cursor minted, and so the longest taken (longer input is refused before any work): a
 * name sort's, holding the version, the longest name (up to 4 bytes of UTF-8 a character, after its
 * kind and length), an id and the tag, in base64url.
 */
export const MAX_CURSOR_LENGTH = Math.ceil(((1 + 3 + 4 * NAME_MAX_LENGTH + 20 + TAG_BYTES) * 4) / 3);

/** What a value that is no cursor of the list it was given to is told. */
export const CURSOR_REFUSAL = 'is not a valid cursor for this list; use a cursor returned by it';

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
  readonly #key: Buffer;
  /**
   * Where encode() writes the key, the scope, the position and the tag, one after the other, so that
   * a cursor costs one hash and its string and nothing else: a page of 20 edges mints 20. Encoding is
   * synchronous, so one buffer serves every call. It starts with the key and grows for long names.
   */
  #scratch: Buffer;
  /** The scope written after the key in #scratch, and where the body starts after it: a page mints its cursors for one scope. */
  #scope: string | undefined;
  #body = 0;

  constructor(secret: string) {
    this.#key = Buffer.from(hkdfSync('sha256', secret, 'portico', `cursor v${VERSION}`, 32));
    this.#scratch = this.#scratchOf(256);
  }

  encode(scope: string, position: readonly CursorValue[]): string {
    // The most any value takes: 1 kind byte, then 6 bytes of an integer, or an id's 19 bytes, or a
    // text's 2 bytes of length and at most 3 bytes per UTF-16 unit.
    let most = this.#key.length + 3 * scope.length + 2 + TAG_BYTES;
    for (const value of position) most += typeof value === 'number' ? 7 : 3 + 3 * value.length;
    if (most > this.#scratch.length) this.#scratch = this.#scratchOf(most);
    const b = this.#scratch;
    if (scope !== this.#scope) {
      this.#body = this.#key.length + b.write(scope, this.#key.length, 'utf8') + 1;
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
    // The tag is over the key, the scope and the body, as #tag computes it; the cursor is body and tag.
    hash('sha512-256', b.subarray(0, at), 'buffer').copy(b, at, 0, TAG_BYTES);
    return b.toString('base64url', body, at + TAG_BYTES);
  }

  #scratchOf(bytes: number): Buffer {
    const scratch = Buffer.alloc(bytes);
    this.#key.copy(scratch);
    this.#scope = undefined;
    return scratch;
  }

  /** The position encoded in `cursor`; a ValidationError on `field` for anything not minted here for `scope`. */
  decode(scope: string, cursor: string, field: string): CursorValue[] {
    const invalid = () => ValidationError.field(field, CURSOR_REFUSAL);
    if (!isCursorShaped(cursor)) throw invalid();
    const raw = Buffer.from(cursor, 'base64url');
    if (raw.length < 1 + TAG_BYTES) throw invalid();
    const body = raw.subarray(0, raw.length - TAG_BYTES);
    if (!timingSafeEqual(raw.subarray(raw.length - TAG_BYTES), this.#tag(scope, body)) || body[0] !== VERSION) throw invalid();
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

  #tag(scope: string, body: Buffer): Buffer {
    return hash('sha512-256', Buffer.concat([this.#key, Buffer.from(`${scope}\0`), body]), 'buffer').subarray(0, TAG_BYTES);
  }
}
