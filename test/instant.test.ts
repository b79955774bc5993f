import { describe, expect, it } from 'vitest';
import { instantOf } from '../src/instant.ts';

describe('instants', () => {
  it('reads RFC 3339 date-times with their zone, and nothing else', () => {
    expect(instantOf('2026-11-22T09:30:00Z')?.toISOString()).toBe('2026-11-22T09:30:00.000Z');
    expect(instantOf('2026-11-22t10:30:00.5+01:00')?.toISOString()).toBe('2026-11-22T09:30:00.500Z');
    for (const text of ['2026-11-22', '2026-11-22T09:30:00', '2026-02-30T00:00:00Z', '2026-11-22T24:00:00Z']) {
      expect(instantOf(text), text).toBeUndefined();
    }
  });

  it('reads a leap second as the last millisecond of its UTC day, in any offset, and only at the end of one', () => {
    for (const text of ['2016-12-31T23:59:60Z', '2016-12-31T23:59:60.25Z', '2017-01-01T00:59:60+01:00', '2016-12-31T18:59:60-05:00']) {
      expect(instantOf(text)?.toISOString(), text).toBe('2016-12-31T23:59:59.999Z');
    }
    for (const text of ['2016-12-31T12:30:60Z', '2016-12-31T23:59:60+01:00', '2016-12-31T23:58:60Z', '2016-12-31T23:59:61Z']) {
      expect(instantOf(text), text).toBeUndefined();
    }
  });
});
