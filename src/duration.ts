const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `250ms`, `90s`, `15m`, `24h`, `30d` (and a bare `0`) in milliseconds; undefined for anything else. */
export function parseDuration(text: string): number | undefined {
  if (text.trim() === '0') return 0;
  const match = /^(\d{1,6})(ms|[smhd])$/.exec(text.trim());
  return match ? Number(match[1]) * UNITS[match[2]!]! : undefined;
}
