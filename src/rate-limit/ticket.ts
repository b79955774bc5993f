import type { MaybePromise } from '../maybe-promise.ts';
import type { WindowState } from './counter.ts';

/**
 * One request's budget check, shared by every root field of it, the response headers and the
 * `rateLimit` query field.
 */
export interface RateLimitTicket {
  id: string;
  /** Whose budget: the key's lineage, so that a rotated key and its successor share one (rotation does not double it). */
  budgetOf: string;
  limit: number;
  /** Operations this request runs (its root fields). */
  cost: number;
  windowMs: number;
  /** The counter's answer: at once from memory, later from Redis. */
  decision?: MaybePromise<WindowState | undefined>;
  /** The settled decision; undefined while pending, or when the counter could not be asked. */
  state?: WindowState;
  /** When the decision was made (resetMs counts from here). */
  decidedAt?: number;
}
