// When a failed delivery is tried again: the retry schedule (WEBHOOK_RETRY_SCHEDULE: the waits before
// the second, third … attempt), with a little jitter so that deliveries failed together do not all
// return together, and at least what a receiver asked for with Retry-After (at most an hour).

/** Longest a receiver's Retry-After may defer the next attempt. */
export const RETRY_AFTER_MAX_MS = 3_600_000;
/** The share of a wait that is randomised, either way. */
const JITTER = 0.1;

/**
 * The wait before the next attempt after attempt `attempt` (1-based, within the series) failed, or
 * undefined when the schedule is spent and the delivery goes to the dead-letter queue.
 */
export function nextWaitMs(schedule: readonly number[], attempt: number, retryAfterMs?: number): number | undefined {
  const planned = schedule[attempt - 1];
  if (planned === undefined) return undefined;
  const jittered = planned * (1 + JITTER * (2 * Math.random() - 1));
  return Math.round(Math.max(jittered, Math.min(retryAfterMs ?? 0, RETRY_AFTER_MAX_MS)));
}

/** A Retry-After header (seconds, or an HTTP date) in milliseconds from now; undefined if absent or malformed. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
