// JSON numbers read as JavaScript reads them are doubles: `2147483646.9999999999` and
// `1.0000000000000000001` become whole numbers, and an amount a client never sent would be stored
// and published. Request bodies and JSON parameters are read with each number's own text at hand
// (JSON.parse gives it to a reviver), so that a number that became a whole number it does not write
// is refused rather than kept.

/** A number in a JSON text that became a whole number other than the one it writes. */
export interface InexactNumber {
  /** Where it stood: the members and indexes from the top of the text down to it (none for a bare number). */
  path: (string | number)[];
  /** As it was written. */
  source: string;
  /** What it would have been read as. */
  read: number;
}

const PLAIN_INTEGER = /^-?\d{1,15}$/;
/** Where a number that may not be what it writes could be: 16 digits in a row, a fraction, an exponent (or a string holding such). */
const MAYBE_INEXACT = /\d{16}|\d\.|\d[eE]/;
const NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** Whether the JSON number `source` writes exactly the whole number `value`. */
function writesExactly(source: string, value: number): boolean {
  // Nearly every number: an integer of at most 15 digits, which a double holds exactly.
  if (PLAIN_INTEGER.test(source)) return true;
  const match = NUMBER.exec(source);
  if (!match) return false;
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = match;
  const digits = whole + fraction;
  // Before the exponent is applied: `0e999999999` is 0, and writing out its zeros would take a gigabyte.
  if (value === 0) return !/[1-9]/.test(digits);
  // Where the decimal point falls among the digits once the exponent is applied.
  const point = whole.length + Number(exponent);
  if (point <= 0) return false;
  if (/[1-9]/.test(digits.slice(point))) return false;
  // A finite double other than 0 has at most 309 digits before its point; zeros written before its
  // first digit add no more than the text is long.
  const integer = point > digits.length ? digits + '0'.repeat(point - digits.length) : digits.slice(0, point);
  return BigInt(`${sign}${integer}`) === BigInt(value);
}

/** The reviver's third argument (Node 21 and later; not yet in TypeScript's library). */
interface ReviverContext {
  source?: string;
}

/**
 * `text` parsed as JSON (JSON.parse's SyntaxError included), and the first number in it that is not
 * what it writes. A text nested deeper than a reviver can follow (V8 revives recursively; some
 * thousands of levels) is parsed as JSON.parse parses it: whoever reads it refuses that depth anyway.
 */
export function parseJson(text: string): { value: unknown; inexact: InexactNumber | undefined } {
  // Most texts hold no number that could be inexact (no 16 digits in a row, no fraction, no
  // exponent): they are parsed without a reviver, which costs an object for every value.
  if (!MAYBE_INEXACT.test(text)) return { value: JSON.parse(text), inexact: undefined };
  try {
    return revived(text);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return { value: JSON.parse(text), inexact: undefined };
  }
}

function revived(text: string): { value: unknown; inexact: InexactNumber | undefined } {
  let found: { holder: unknown; key: string; source: string; read: number } | undefined;
  const value: unknown = JSON.parse(text, function (this: unknown, key: string, read: unknown, context?: ReviverContext) {
    if (
      found === undefined &&
      typeof read === 'number' &&
      Number.isInteger(read) &&
      context?.source !== undefined &&
      !writesExactly(context.source, read)
    ) {
      found = { holder: this, key, source: context.source, read };
    }
    return read;
  });
  if (!found) return { value, inexact: undefined };
  // The reviver sees only the object holding the number; where that object is, is looked up once.
  const holderPath = found.key === '' ? [] : (pathTo(value, found.holder) ?? []);
  const step = Array.isArray(found.holder) ? Number(found.key) : found.key;
  return { value, inexact: { path: found.key === '' ? [] : [...holderPath, step], source: found.source, read: found.read } };
}

/** The members and indexes that lead from `root` to the object `target`, or undefined. */
function pathTo(root: unknown, target: unknown): (string | number)[] | undefined {
  if (root === target) return [];
  if (typeof root !== 'object' || root === null) return undefined;
  for (const [key, child] of Object.entries(root)) {
    const below = pathTo(child, target);
    if (below) return [Array.isArray(root) ? Number(key) : key, ...below];
  }
  return undefined;
}

/**
 * The field `inexact` stood at, below `within` (the members of the text it lies under: `variables`
 * of a GraphQL body), named as a client's code writes it; undefined for one elsewhere, or the value
 * of `within` itself.
 */
export function inexactFieldError(inexact: InexactNumber, within: readonly string[] = []): { field: string; message: string } | undefined {
  if (inexact.path.length <= within.length || within.some((step, at) => inexact.path[at] !== step)) return undefined;
  return { field: pathText(inexact.path.slice(within.length)), message: `is ${inexactDetail(inexact)}` };
}

/** A path as a client's code writes it: `input.total`, `ids[1]`. */
export function pathText(path: readonly (string | number)[]): string {
  return path.map((step, index) => (typeof step === 'number' ? `[${step}]` : index === 0 ? step : `.${step}`)).join('');
}

/** What a client is told of such a number, after "holds" or "is". */
export function inexactDetail({ source, read }: InexactNumber): string {
  return `${source}, which cannot be read exactly (it would be ${read}): send whole numbers without a fraction, within ±${Number.MAX_SAFE_INTEGER}`;
}
