// Installing a folder's dependencies from its lockfile, for the benchmark's reference servers and a
// baseline checkout. Bounded: an install that hangs on the registry fails the run instead of stalling it.
import { spawnSync } from 'node:child_process';

const INSTALL_TIMEOUT_MS = 10 * 60_000;

export function npmCi(cwd: string, what: string): void {
  process.stderr.write(`installing ${what} …\n`);
  const result = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd, stdio: 'inherit', timeout: INSTALL_TIMEOUT_MS });
  if (result.status !== 0) throw new Error(`npm ci failed for ${what} in ${cwd}${result.error ? ` (${result.error.message})` : ''}`);
}
