// The one cursor codec: GraphQL connections, REST `nextCursor` and keyset pages all use it.
//
// A cursor is AES-256-GCM over `[scope, ...position]`, base64url-encoded behind a version byte.
// Encryption keeps it opaque (clients cannot read or build positions) and the GCM tag makes it
// tamper-evident; the scope names the list and sort it belongs to, so a cursor from another list
// is refused instead of silently mis-positioning a page.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { ValidationError } from '../errors.ts';

const VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Generous for any position we encode; longer input is rejected before any crypto runs. */
const MAX_CURSOR_LENGTH = 512;

export type CursorValue = string | number;

export class CursorCodec {
  readonly #key: Buffer;

  constructor(secret: string) {
    this.#key = Buffer.from(hkdfSync('sha256', secret, 'portico', `cursor v${VERSION}`, 32));
  }

  encode(scope: string, position: readonly CursorValue[]): string {
    const iv = randomBytes(IV_BYTES);
    const header = Buffer.from([VERSION]);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(header);
    const body = Buffer.concat([cipher.update(JSON.stringify([scope, ...position]), 'utf8'), cipher.final()]);
    return Buffer.concat([header, iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** The position encoded in `cursor`; a ValidationError on `field` for anything not minted here for `scope`. */
  decode(scope: string, cursor: string, field: string): CursorValue[] {
    const invalid = () => ValidationError.field(field, 'is not a valid cursor for this list; use a cursor returned by it');
    if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
    const raw = Buffer.from(cursor, 'base64url');
    if (raw.length < 1 + IV_BYTES + TAG_BYTES + 1 || raw[0] !== VERSION) throw invalid();
    let decoded: unknown;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(1, 1 + IV_BYTES));
      decipher.setAAD(raw.subarray(0, 1));
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      const plain = Buffer.concat([decipher.update(raw.subarray(1 + IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]);
      decoded = JSON.parse(plain.toString('utf8'));
    } catch {
      throw invalid();
    }
    if (!Array.isArray(decoded) || decoded[0] !== scope) throw invalid();
    return decoded.slice(1) as CursorValue[];
  }
}
