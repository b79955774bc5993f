// The whole-run check that no key or token ever reaches a log: test servers append their log output
// to a run-wide folder, tests register every credential they send, and the global teardown greps
// the one for the other.
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { inject } from 'vitest';

const file = (name: string) => path.join(inject('auditDir'), `${name}-${process.pid}.txt`);

export function auditLog(chunk: Buffer | string): void {
  appendFileSync(file('logs'), chunk);
}

/** Registers a key or token a test sends; returns it, for chaining. */
export function usedCredential(credential: string): string {
  appendFileSync(file('credentials'), `${credential}\n`);
  return credential;
}

/** Masked forms of every registered credential found in any test server's logs. */
export function credentialsInLogs(auditDir: string): string[] {
  const read = (prefix: string) =>
    readdirSync(auditDir)
      .filter((name) => name.startsWith(prefix))
      .map((name) => readFileSync(path.join(auditDir, name), 'utf8'));
  const logs = read('logs-').join('');
  const credentials = new Set(read('credentials-').flatMap((text) => text.split('\n').filter(Boolean)));
  return [...credentials].filter((credential) => logs.includes(credential)).map((credential) => `${credential.slice(0, 12)}…`);
}
