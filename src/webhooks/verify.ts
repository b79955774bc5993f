// For receivers: checks `X-Portico-Signature-256` against the raw request body, in constant time.
// Self-contained (node:crypto only), so it can be copied into a receiver as it is.
import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Whether `header` (`sha256=<hex>`, or several comma-separated during a secret rotation) holds a
 * signature of `rawBody` under `secret` (the endpoint's `whsec_…` secret). Pass the body exactly as
 * received, before any JSON parsing.
 */
export function verifyWebhookSignature(secret: string, rawBody: string | Uint8Array, header: string | null | undefined): boolean {
  if (!header) return false;
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  let valid = false;
  for (const value of header.split(',')) {
    const match = /^\s*sha256=([0-9a-f]{64})\s*$/.exec(value);
    // Every value is compared, so the time taken does not tell which one matched.
    if (match && timingSafeEqual(Buffer.from(match[1]!, 'hex'), expected)) valid = true;
  }
  return valid;
}
