// Instants as clients write them: RFC 3339's date-time, a date, a time and its zone (`Z` or an
// offset), so that the text names one instant. `Date` alone is lenient: it reads a time with no
// zone in the server's own, a date alone as midnight UTC, and rolls 30 February over into March.

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:Z|[+-](\d{2}):(\d{2}))$/i;

/**
 * The instant `text` names, or undefined when it names none (or not exactly one). A leap second
 * (`23:59:60` UTC, written in any offset), which RFC 3339 allows and `Date` cannot hold, is the last
 * millisecond before it: in its own UTC day, and before every instant of the next.
 */
export function instantOf(text: string): Date | undefined {
  const parts = INSTANT.exec(text);
  if (!parts) return undefined;
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = parts.slice(1).map((part) => Number(part ?? 0));
  const calendar = new Date(Date.UTC(year!, month! - 1, day));
  if (calendar.getUTCMonth() !== month! - 1 || calendar.getUTCDate() !== day) return undefined;
  if (hour! > 23 || minute! > 59 || second! > 60 || offsetHours! > 23 || offsetMinutes! > 59) return undefined;
  if (second === 60) return leapSecondOf(text);
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** A leap second's instant, if the text names one: its minute must be the last of a UTC day. */
function leapSecondOf(text: string): Date | undefined {
  // The same text a second earlier, its fraction dropped: 23:59:59 UTC, if it is a leap second.
  const before = new Date(text.replace(/:60(?:\.\d+)?/, ':59'));
  if (Number.isNaN(before.getTime()) || before.getUTCHours() !== 23 || before.getUTCMinutes() !== 59) return undefined;
  return new Date(before.getTime() + 999);
}
