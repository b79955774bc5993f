// vitest types its asymmetric matchers as `any`, so that one fits wherever a value would, and an `any`
// inside an expected value lets any mistake around it through the type checker. Typed as `unknown`
// they still fit there, since `toEqual` and its kin take values of any type.
import { expect, type ExpectStatic } from 'vitest';

type Matcher = 'any' | 'anything' | 'arrayContaining' | 'objectContaining' | 'stringContaining' | 'stringMatching';

/** vitest's `expect.any`, `expect.stringContaining` and the rest, answering `unknown`. */
export const match: { [K in Matcher]: (...args: Parameters<ExpectStatic[K]>) => unknown } = expect;
