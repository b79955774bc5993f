// Steady concurrent load for fault tests: a few workers send requests back to back while the test
// breaks and restores a dependency, and every answer is kept with when it started and ended, so the
// test can say what clients saw before, during and after the fault.

export interface Outcome {
  /** Which request of the mix this was. */
  name: string;
  startedAt: number;
  endedAt: number;
  /** The HTTP status, or 'hung' when no answer came within the bound the caller set. */
  status: number | 'hung';
  /** Problem type (REST) or GraphQL error code, when the answer was an error. */
  problem?: string;
  retryAfter?: string | null;
  /** The id of what a 201 created. */
  created?: string;
}

export interface SteadyLoad {
  readonly outcomes: Outcome[];
  /** Outcomes of requests started within [from, to). */
  between(from: number, to: number): Outcome[];
  stop(): Promise<void>;
}

export type Request = (i: number) => Promise<Omit<Outcome, 'startedAt' | 'endedAt'>>;

export function startSteadyLoad(workers: number, request: Request): SteadyLoad {
  const outcomes: Outcome[] = [];
  let stopped = false;
  let sequence = 0;
  const loops = Array.from({ length: workers }, async () => {
    while (!stopped) {
      const startedAt = Date.now();
      const outcome = await request(sequence++);
      outcomes.push({ ...outcome, startedAt, endedAt: Date.now() });
    }
  });
  return {
    outcomes,
    between: (from, to) => outcomes.filter((o) => o.startedAt >= from && o.startedAt < to),
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/** `fetch` that gives up after `boundMs`, for requests the service must answer in bounded time. */
export async function boundedFetch(
  url: string,
  init: RequestInit,
  boundMs: number,
): Promise<{ status: number | 'hung'; headers?: Headers; body?: unknown }> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(boundMs) });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON: kept as text for the assertion message.
    }
    return { status: response.status, headers: response.headers, body };
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') return { status: 'hung' };
    throw error;
  }
}

/** Polls `check` until it returns true, or fails after `timeoutMs`. */
export async function eventually(check: () => boolean | Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not true within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
