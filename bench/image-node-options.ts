// Portico is measured with the V8 settings its container image ships (the Dockerfile's NODE_OPTIONS),
// read from the Dockerfile of the checkout being run, so that a baseline runs with its own.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The `NODE_OPTIONS` the image at `root` sets (an `ENV NODE_OPTIONS="…"` line); none when it sets none. */
export function imageNodeOptions(root: string): string {
  const dockerfile = path.join(root, 'Dockerfile');
  if (!existsSync(dockerfile)) return '';
  return /^ENV NODE_OPTIONS="([^"]*)"$/m.exec(readFileSync(dockerfile, 'utf8'))?.[1] ?? '';
}

/** `env` for a Portico process run from `root`: the image's NODE_OPTIONS first, so that the caller's own win. */
export function withImageNodeOptions(env: NodeJS.ProcessEnv, root: string): NodeJS.ProcessEnv {
  const options = [imageNodeOptions(root), env.NODE_OPTIONS].filter(Boolean).join(' ');
  return options ? { ...env, NODE_OPTIONS: options } : env;
}
