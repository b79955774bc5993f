// Which addresses the service takes: every one it stores must be one the OpenAPI document's
// `idn-email` format (RFC 6531) accepts, checked by an independent validator of that grammar, so that
// a client validating what it reads never meets an address it refuses.
import { isIdnEmail } from '@hyperjump/json-schema-formats';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.ts';
import { InputCheck } from '../../src/services/validation.ts';
import { runs } from '../support/long-mode.ts';

/** The address as the service stores it, or undefined when it refuses it. */
function stored(email: string): string | undefined {
  const check = new InputCheck();
  const kept = check.email('email', email);
  try {
    check.done();
    return kept;
  } catch (error) {
    if (error instanceof ValidationError) return undefined;
    throw error;
  }
}
const taken = (email: string) => stored(email) !== undefined;

describe('email addresses', () => {
  it('takes the plain addresses people have, in any script', () => {
    for (const email of [
      'ada@example.com',
      'ada.king+news@example.com',
      "o'brien@example.ie",
      'a-b@mail-server.example.co.uk',
      'zoë@bücher.example',
      'ÅSA@BÜCHER.example',
      '用户@例子.广告',
      'x@a.b',
    ]) {
      expect(taken(email), email).toBe(true);
    }
  });

  it('refuses what is no address RFC 6531 writes', () => {
    for (const email of [
      '"quoted"1795872753035@example.com',
      '"quoted"@example.com',
      'a(b)@example.com',
      'a,b@example.com',
      'x..y@example.com',
      '.x@example.com',
      'x.@example.com',
      'a@ex_ample.com',
      `a@${'a'.repeat(64)}.com`,
      'a@-example.com',
      'a@example-.com',
      'a@☃.net',
      'a@[127.0.0.1]',
      'a@localhost',
      'a@example.com.',
      'a@例子。广告',
      `${'a'.repeat(65)}@example.com`,
    ]) {
      expect(taken(email), email).toBe(false);
    }
  });

  it('takes no address the idn-email format refuses', () => {
    const piece = fc.string({
      unit: fc.constantFrom(
        ...'aZ09._-+"(),:;<>[]\\ !#$%&\'*/=?^`{|}~'.split(''),
        'é',
        'ß',
        '用',
        '☃',
        'א',
        '\u0301',
        'ı',
        'İ',
        'Σ',
        '。',
        '．',
      ),
      minLength: 1,
      maxLength: 12,
    });
    const label = fc.oneof(piece, fc.constantFrom('example', 'xn--bcher-kva', 'a'.repeat(63), 'a'.repeat(64)));
    const address = fc
      .tuple(piece, fc.array(label, { minLength: 1, maxLength: 4 }))
      .map(([local, labels]) => `${local}@${labels.join('.')}`);
    fc.assert(
      fc.property(address, (email) => {
        const kept = stored(email);
        return kept === undefined || isIdnEmail(kept);
      }),
      { numRuns: runs(2_000, 50_000) },
    );
  });
});
