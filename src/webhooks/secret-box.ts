// Endpoint signing secrets at rest. They must stay recoverable (the worker signs with them), so they
// are encrypted, not hashed: AES-256-GCM under a key derived from WEBHOOK_SECRET_KEY, with the
// endpoint's id as associated data, so a sealed secret copied onto another row does not open there.
import { createCipheriv, createDecipheriv, createSecretKey, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SecretBox {
  /** A KeyObject, not a Buffer: Node checks a Buffer key for being a key object on every cipher, at four times the cost of the decryption. */
  readonly #key: KeyObject;

  constructor(secretKey: string) {
    this.#key = createSecretKey(Buffer.from(hkdfSync('sha256', secretKey, 'portico', `webhook endpoint secrets ${VERSION}`, 32)));
  }

  /** `secret` encrypted for the row `context` names. */
  seal(secret: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv).setAAD(Buffer.from(context));
    const sealed = Buffer.concat([iv, cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${VERSION}.${sealed.toString('base64url')}`;
  }

  /** The secret `seal` encrypted for `context`; throws if it was sealed under another key or for another row. */
  open(sealed: string, context: string): string {
    const [version, body = ''] = sealed.split('.');
    const raw = Buffer.from(body, 'base64url');
    if (version !== VERSION || raw.length < IV_BYTES + TAG_BYTES) throw new Error('not a sealed webhook secret');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, IV_BYTES)).setAAD(Buffer.from(context));
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}
