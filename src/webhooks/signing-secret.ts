// Endpoint signing secrets, in the Standard Webhooks form: `whsec_` and 32 random bytes in base64, so
// receivers can hand them to the `standardwebhooks` or Svix libraries as they are.
import { randomBytes } from 'node:crypto';

export const SIGNING_SECRET_PREFIX = 'whsec_';

export function newSigningSecret(): string {
  return SIGNING_SECRET_PREFIX + randomBytes(32).toString('base64');
}
