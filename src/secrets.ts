// Server-side secrets (cursor key, API key pepper): the configured value, or, outside production
// (where configuration requires them), one generated on first use and kept in the data folder so
// that it survives restarts.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

export async function resolveSecret(configured: string | undefined, dataDir: string, fileName: string): Promise<string> {
  if (configured) return configured;
  const file = path.join(dataDir, fileName);
  try {
    return (await fs.readFile(file, 'utf8')).trim();
  } catch {
    await fs.mkdir(dataDir, { recursive: true });
    // `wx`: if another process won the race, keep its secret.
    await fs.writeFile(file, randomBytes(48).toString('base64url'), { mode: 0o600, flag: 'wx' }).catch(() => undefined);
    return (await fs.readFile(file, 'utf8')).trim();
  }
}
