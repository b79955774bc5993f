// Small fixes to installed dependencies, applied after every install (`postinstall`, and in the
// Dockerfile, which installs without scripts). Each names the exact text it replaces: when an
// upgrade changes that text, the install fails here, so the patch is reviewed (dropped if upstream
// fixed it) rather than silently lost. Running it again changes nothing.
//
// @envelop/rate-limiter builds, for every rate-limited field of every request, an object literal
// with a getter (`get args()`). V8 gives each such literal a fresh accessor in a dictionary of its
// own, and under load those objects made most of the young generation survive its collections: in
// a `user(id)` run, 5 MB of a request stream's garbage was copied and promoted at each young
// collection with the literal, 1.7 MB without, and each pause took twice as long. The arguments are
// computed for the identity check right before anyway, so they are handed over as a plain property.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

interface Patch {
  /** Files under node_modules. */
  files: string[];
  from: string;
  to: string;
}

const RATE_LIMITER_ARGS: Patch = {
  files: ['@envelop/rate-limiter/esm/index.js', '@envelop/rate-limiter/cjs/index.js'],
  from: `get args() {
                                return {
                                    ...getArgValues(),
                                    identifier,
                                };
                            },`,
  to: `args: { ...getArgValues(), identifier }, // patched by Portico (scripts/patch-dependencies.ts)`,
};

const modules = path.join(path.dirname(import.meta.dirname), 'node_modules');

for (const patch of [RATE_LIMITER_ARGS]) {
  for (const file of patch.files) {
    const at = path.join(modules, file);
    const text = readFileSync(at, 'utf8');
    if (text.includes(patch.to)) continue;
    if (!text.includes(patch.from)) {
      throw new Error(`${file} no longer holds the text scripts/patch-dependencies.ts replaces; review that patch for this version`);
    }
    writeFileSync(at, text.replace(patch.from, patch.to));
  }
}
