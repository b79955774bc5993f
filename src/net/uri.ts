/** A URI component decoded once; a malformed escape is left as sent, for validation to refuse. */
export function decodeComponent(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
