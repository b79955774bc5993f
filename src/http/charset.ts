// JSON travels in UTF-8 (RFC 8259 §8.1), and both faces read every body as UTF-8. A body declared
// in another charset would be misread: Latin-1's "ë" refused as malformed UTF-8, UTF-16 as JSON
// that does not parse. Such a body is refused as a media type the service does not take, and the
// refusal names the charset it does take.

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
