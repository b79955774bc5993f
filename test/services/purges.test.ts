// The service's upkeep runs at start as well as every PURGE_EVERY_MS: what came due while no instance
// ran is not left for a whole interval.
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.ts';
import type { EntityManager } from '../../src/db/orm.ts';
import { PURGE_EVERY_MS, startPurges } from '../../src/services/purges.ts';
import { eventually } from '../support/steady-load.ts';

describe('the upkeep', () => {
  it('runs each part once at start, long before its interval, and not again until then', async () => {
    const runs: string[] = [];
    const part = (what: string) => ({
      what,
      run: () => {
        runs.push(what);
        return Promise.resolve(0);
      },
    });
    const upkeep = startPurges([part('a'), part('b')], () => ({}) as EntityManager, createLogger('silent'));
    try {
      await eventually(() => runs.length === 2, 'both parts to run once', 5_000);
      expect(runs.toSorted()).toEqual(['a', 'b']);
      expect(PURGE_EVERY_MS).toBeGreaterThan(5_000);
    } finally {
      await upkeep.stop();
    }
    expect(runs).toHaveLength(2);
  });
});
