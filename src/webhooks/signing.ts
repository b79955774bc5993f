// Signing a delivery. Two schemes, so receivers can verify with what they already have:
// - `X-Portico-Signature-256: sha256=<hex>`: HMAC-SHA256 of the raw body under the secret (the whole
//   `whsec_…` string as the key), as GitHub signs (verify.ts; @octokit/webhooks-methods verifies
//   one signature, so during a rotation's overlap, when the header holds two, it needs each in turn);
// - Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`): HMAC-SHA256
//   of `id.timestamp.body` under the secret's base64 part decoded, as the `standardwebhooks` and Svix
//   libraries verify.
// During a secret rotation's overlap, each header carries a signature for each secret, newest first
// (comma-separated in ours, space-separated in Standard Webhooks' as it specifies).
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { SIGNING_SECRET_PREFIX } from './signing-secret.ts';

export const SIGNATURE_HEADER = 'x-portico-signature-256';

/** Our scheme's signature of `body` under one secret: `sha256=` and lowercase hex. */
export function signatureOf(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** An endpoint secret ready to sign with: as it is (our scheme), and its key for Standard Webhooks. */
export interface SigningKey {
  secret: string;
  /**
   * The secret's base64 part decoded, as a KeyObject: Node checks a Buffer key for being a key object
   * on every HMAC, a check that costs four times the HMAC itself.
   */
  standard: KeyObject;
}

export function signingKey(secret: string): SigningKey {
  return { secret, standard: createSecretKey(secret.slice(SIGNING_SECRET_PREFIX.length), 'base64') };
}

/** The signing headers of one attempt, for every live secret (newest first). */
export function signedHeaders(keys: readonly SigningKey[], eventId: string, body: string, timestampS: number): Record<string, string> {
  const signed = `${eventId}.${timestampS}.${body}`;
  return {
    [SIGNATURE_HEADER]: keys.map((key) => signatureOf(key.secret, body)).join(', '),
    'webhook-id': eventId,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': keys.map((key) => `v1,${createHmac('sha256', key.standard).update(signed).digest('base64')}`).join(' '),
  };
}
