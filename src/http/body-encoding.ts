// How a body's bytes are encoded, and which encodings the service reads. JSON travels in UTF-8 (RFC
// 8259 §8.1), and both faces read every body as UTF-8: a body declared in another charset would be
// misread (Latin-1's "ë" refused as malformed UTF-8, UTF-16 as JSON that does not parse). Bodies are
// read as sent, so one compressed (`Content-Encoding: gzip`) would be read as its compressed bytes.
// Either is refused as a media type the service does not take (415, RFC 7694 for the coding), and
// the refusal names what it does take.
import { isUtf8 } from 'node:buffer';

/**
 * A body's bytes as text, or undefined when they are not UTF-8: decoding would make them U+FFFD,
 * and what a write stored of them so would not be what was sent.
 */
export function utf8Of(bytes: Uint8Array | ArrayBuffer): string | undefined {
  // A view of the same bytes, never a copy (the server's Request hands over a Buffer as its ArrayBuffer).
  const buffer = Buffer.isBuffer(bytes)
    ? bytes
    : bytes instanceof ArrayBuffer
      ? Buffer.from(bytes)
      : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return isUtf8(buffer) ? buffer.toString('utf8') : undefined;
}

/** The charset a Content-Type header declares, as sent, when it is not UTF-8; else undefined. */
export function foreignCharset(contentType: string | null): string | undefined {
  if (contentType === null || !contentType.includes('=')) return undefined;
  for (const parameter of contentType.split(';').slice(1)) {
    const [name = '', ...rest] = parameter.split('=');
    if (name.trim().toLowerCase() !== 'charset') continue;
    const value = rest
      .join('=')
      .trim()
      .replace(/^"(.*)"$/, '$1');
    return /^utf-?8$/i.test(value) ? undefined : value;
  }
  return undefined;
}

/** What to tell a client whose body is in a charset the service does not read. */
export function charsetDetail(charset: string): string {
  return `Send the body in UTF-8, not ${charset}.`;
}

/** The content coding a request declares, when it is one the service does not read; else undefined. */
export function foreignCoding(contentEncoding: string | null): string | undefined {
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  return codings.length > 0 ? codings.join(', ') : undefined;
}

/** What to tell a client whose body is compressed; sent with `Accept-Encoding: identity` (RFC 7694). */
export function codingDetail(coding: string): string {
  return `Send the body uncompressed, not in ${coding}.`;
}

/** The header naming the one content coding the service reads (RFC 7694 §3). */
export const ACCEPTED_CODINGS = { 'accept-encoding': 'identity' } as const;
