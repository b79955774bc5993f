// Content negotiation as RFC 9110 §12.5.1 defines it: a media type takes the weight of the most
// specific Accept range that matches it (`application/json` over `application/*` over `*/*`), so
// `application/json;q=0, */*` excludes JSON, where weighing ranges by their q-value alone let `*/*`
// bring it back. Answers are UTF-8: a range that names another charset matches nothing.

interface AcceptRange {
  type: string;
  subtype: string;
  weight: number;
  position: number;
}

/** A range's weight: its q parameter, 1 without one; a malformed q (`q=2`, `q=0.0001`) weighs nothing. */
function weightOf(parameters: readonly string[]): number {
  const q = parameters.find((parameter) => parameter.startsWith('q='));
  if (q === undefined) return 1;
  return /^q=(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(q) ? Number(q.slice(2)) : 0;
}

function rangesOf(accept: string): AcceptRange[] {
  return accept.split(',').flatMap((text, position) => {
    const [mediaRange = '', ...parameters] = text.split(';').map((part) => part.trim().toLowerCase());
    const [type = '', subtype = '', extra] = mediaRange.split('/');
    if (!type || !subtype || extra !== undefined || (type === '*' && subtype !== '*')) return [];
    if (parameters.some((parameter) => parameter.startsWith('charset=') && !/^charset="?utf-8"?$/.test(parameter))) return [];
    return [{ type, subtype, weight: weightOf(parameters.map((parameter) => parameter.replace(/\s*=\s*/, '='))), position }];
  });
}

/** How specific a range is for a media type it matches: exact 2, `type/*` 1, `*\/*` 0; -1 when it does not match. */
function specificity(range: AcceptRange, type: string, subtype: string): number {
  if (range.type === type && range.subtype === subtype) return 2;
  if (range.type === type && range.subtype === '*') return 1;
  return range.type === '*' ? 0 : -1;
}

/** The weight Accept gives a media type (`application/json`), and the position of the range that gives it. */
function preferenceFor(ranges: readonly AcceptRange[], mediaType: string): { weight: number; position: number } {
  const [type = '', subtype = ''] = mediaType.toLowerCase().split('/');
  let best: AcceptRange | undefined;
  let bestSpecificity = -1;
  for (const range of ranges) {
    const fit = specificity(range, type, subtype);
    if (fit > bestSpecificity) [best, bestSpecificity] = [range, fit];
  }
  return best ? { weight: best.weight, position: best.position } : { weight: 0, position: Infinity };
}

/** Whether Accept allows a media type (a missing header allows anything). */
export function accepts(accept: string | null, mediaType: string): boolean {
  return accept === null || preferenceFor(rangesOf(accept), mediaType).weight > 0;
}

/**
 * The one of `offered` that Accept prefers: the highest weight, then the range sent first, then the
 * order of `offered`. Undefined when Accept allows none of them.
 */
export function preferred(accept: string, offered: readonly string[]): string | undefined {
  const ranges = rangesOf(accept);
  let chosen: { mediaType: string; weight: number; position: number } | undefined;
  for (const mediaType of offered) {
    const { weight, position } = preferenceFor(ranges, mediaType);
    if (weight > 0 && (!chosen || weight > chosen.weight || (weight === chosen.weight && position < chosen.position)))
      chosen = { mediaType, weight, position };
  }
  return chosen?.mediaType;
}
