// Randomised suites (fuzz, fault, soak) run briefly by default so `npm test` stays fast, and at
// length when PORTICO_LONG_TESTS=1, e.g. nightly or before a release.
export const LONG = process.env.PORTICO_LONG_TESTS === '1';

/** How many runs (iterations, requests…) a randomised suite makes in the current mode. */
export function runs(short: number, long: number): number {
  return LONG ? long : short;
}

/** A randomised test's time limit: `shortMs` in the short mode; an hour in the long one, whose runs are tens of times more. */
export function timeLimit(shortMs: number): number {
  return LONG ? 60 * 60_000 : shortMs;
}
