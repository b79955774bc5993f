// `BENCH_BASELINE=<git revision>`: a second Portico, built from that revision, serves every Portico
// request right before the working tree's does, in every round, so that a change to the hot path is
// measured against what it changes on the same machine at the same minute. This machine's speed
// drifts by tens of percent within minutes; ratios taken within a round cancel that out, figures
// from separate runs do not.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { npmCi } from './npm-ci.ts';

export interface Baseline {
  revision: string;
  /** The short commit the revision named when the run started. */
  commit: string;
  /** A checkout of it, with its dependencies installed. */
  root: string;
  remove(): Promise<void>;
}

/** Checks the revision out beside the working tree; its dependencies are the working tree's when its lockfile is the same. */
export async function checkOutBaseline(revision: string, root: string): Promise<Baseline> {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
  const commit = git('rev-parse', '--short', `${revision}^{commit}`);
  const folder = await fs.mkdtemp(path.join(os.tmpdir(), 'portico-baseline-'));
  const checkout = path.join(folder, 'portico');
  git('worktree', 'add', '--detach', checkout, commit);
  const remove = async () => {
    spawnSync('git', ['worktree', 'remove', '--force', checkout], { cwd: root });
    await fs.rm(folder, { recursive: true, force: true });
  };
  try {
    const sameLockfile = spawnSync('git', ['diff', '--quiet', commit, '--', 'package-lock.json'], { cwd: root }).status === 0;
    if (sameLockfile && existsSync(path.join(root, 'node_modules'))) {
      await fs.symlink(path.join(root, 'node_modules'), path.join(checkout, 'node_modules'), 'dir');
    } else {
      npmCi(checkout, `the dependencies of the baseline ${commit} (its lockfile differs)`);
    }
  } catch (error) {
    await remove();
    throw error;
  }
  return { revision, commit, root: checkout, remove };
}
