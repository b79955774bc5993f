// A statement's text as a trace may show it. The service's own statements carry their values as
// bind parameters, but the ORM writes values into the text of those it builds (an endpoint's URL, a
// key's prefix, a sealed secret), and a span would carry them to the collector: string and number
// literals are replaced by `?`, as a query digest shows them.

/** A quoted string (`'…'`, `''` inside it), an E-string, or a number standing alone (not in a name, not `$1`). */
const LITERALS = /[Ee]?'(?:[^']|'')*'|(?<![\w$."])\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w"])/g;

export function withoutLiterals(text: string): string {
  return text.replace(LITERALS, '?');
}
