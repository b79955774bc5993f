import { describe, expect, it } from 'vitest';
import { shaped } from '../src/guards.ts';

describe('shaped', () => {
  it('hands back an object whose named fields have the named types, extra fields and all', () => {
    const value: unknown = JSON.parse('{"sent": 3, "refused": 3, "note": "x"}');
    expect(shaped(value, { sent: 'number', refused: 'number' })).toEqual({ sent: 3, refused: 3, note: 'x' });
  });

  it.each([
    ['a field of another type', '{"sent": "3", "refused": 3}'],
    ['a missing field', '{"sent": 3}'],
    ['null', 'null'],
    ['an array', '[3, 3]'],
    ['a number', '3'],
  ])('refuses %s', (_what, json) => {
    expect(shaped(JSON.parse(json), { sent: 'number', refused: 'number' })).toBeUndefined();
  });
});
