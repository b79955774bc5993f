// Fixed-window request budgets: an API key may spend `limit` units in a window that opens with its
// first request and lasts `windowMs`; a request that would go over is refused whole and spends
// nothing. Two stores keep the counters: this process's memory, or Redis for several instances.
import type { MaybePromise } from '../maybe-promise.ts';

/** Where a budget stands after a request was weighed against it. */
export interface WindowState {
  /** Whether the request fits and was counted. */
  allowed: boolean;
  limit: number;
  /** Units left in this window after this request. */
  remaining: number;
  /** Milliseconds until the window closes and the budget is whole again. */
  resetMs: number;
}

/** A counter in this process answers at once; one across the network answers later. */
export interface RateLimitCounter {
  /** Spends `cost` units of `key`'s budget if all of them fit, atomically; otherwise spends nothing. */
  consume(key: string, cost: number, limit: number, windowMs: number): MaybePromise<WindowState>;
  /** Where the budget stands, spending nothing. */
  peek(key: string, limit: number, windowMs: number): MaybePromise<WindowState>;
  /** Resolves when the store answers. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** One process's counters; exact for one instance, and each instance counts alone. */
export class MemoryCounter implements RateLimitCounter {
  readonly #windows = new Map<string, { used: number; endsAt: number }>();
  readonly #sweeper: NodeJS.Timeout;

  constructor(sweepEveryMs: number) {
    // Closed windows are dropped now and then, so keys that stopped calling cost no memory.
    this.#sweeper = setInterval(() => this.#sweep(Date.now()), sweepEveryMs).unref();
  }

  consume(key: string, cost: number, limit: number, windowMs: number, now = Date.now()): WindowState {
    let window = this.#windows.get(key);
    if (!window || window.endsAt <= now) {
      window = { used: 0, endsAt: now + windowMs };
      this.#windows.set(key, window);
    }
    const allowed = window.used + cost <= limit;
    if (allowed) window.used += cost;
    return { allowed, limit, remaining: Math.max(limit - window.used, 0), resetMs: window.endsAt - now };
  }

  peek(key: string, limit: number, windowMs: number, now = Date.now()): WindowState {
    const window = this.#windows.get(key);
    const open = window && window.endsAt > now;
    return {
      allowed: true,
      limit,
      remaining: open ? Math.max(limit - window.used, 0) : limit,
      resetMs: open ? window.endsAt - now : windowMs,
    };
  }

  async ping(): Promise<void> {}

  #sweep(now: number): void {
    for (const [key, window] of this.#windows) if (window.endsAt <= now) this.#windows.delete(key);
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
  }
}
