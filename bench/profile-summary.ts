// A CPU profile (V8's .cpuprofile, as `node --cpu-prof` writes) summed by where the code lives: each
// npm package, each folder of the service's own src/, Node's internals, garbage collection and idle,
// so that the next change to the hot path starts from where the time goes.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Whether a parsed file has the parts of a CPU profile that are summed: a wrong file is named rather than failing midway. */
function isProfile(value: unknown): value is Profile {
  if (typeof value !== 'object' || value === null) return false;
  if (!('nodes' in value && 'samples' in value && 'timeDeltas' in value)) return false;
  const { nodes, samples, timeDeltas } = value;
  return (
    Array.isArray(nodes) &&
    nodes.every(
      (node: unknown) =>
        typeof node === 'object' &&
        node !== null &&
        'id' in node &&
        typeof node.id === 'number' &&
        'callFrame' in node &&
        typeof node.callFrame === 'object' &&
        node.callFrame !== null &&
        'functionName' in node.callFrame &&
        typeof node.callFrame.functionName === 'string' &&
        'url' in node.callFrame &&
        typeof node.callFrame.url === 'string',
    ) &&
    Array.isArray(samples) &&
    samples.every((id) => typeof id === 'number') &&
    Array.isArray(timeDeltas) &&
    timeDeltas.every((delta) => typeof delta === 'number')
  );
}

/** Where a frame's code lives: `pkg @scope/name`, `src/<folder>`, `node`, or a V8 pseudo-frame. */
export function placeOf({ functionName, url }: ProfileNode['callFrame']): string {
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (inPackage) return inPackage[1]!;
  const inSource = /\/src\/([^/]+)\//.exec(url) ?? /\/src\/([^/]+)$/.exec(url);
  if (inSource) return `src/${inSource[1]!}`;
  if (url.startsWith('node:')) return 'node (runtime)';
  if (!url) return `(${functionName.replace(/[()]/g, '') || 'native'})`;
  return url.replace(/^file:\/\//, '');
}

/** Shares of CPU time by place, largest first, with idle left out of the shares. */
export function summarise(file: string): { place: string; percent: number }[] {
  const profile: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (!isProfile(profile)) throw new Error(`${file} is not a V8 CPU profile`);
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const totals = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const place = placeOf(byId.get(id)!.callFrame);
    totals.set(place, (totals.get(place) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  totals.delete('(idle)');
  const busy = [...totals.values()].reduce((sum, value) => sum + value, 0);
  return [...totals].map(([place, time]) => ({ place, percent: (time / busy) * 100 })).sort((a, b) => b.percent - a.percent);
}
