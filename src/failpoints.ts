// Places where a test can make the service fail on purpose (PORTICO_FAILPOINTS; never in production).
// They sit deep in writes (services, plugins) that no configuration reaches, so the entry point arms
// them once for the whole process.

/**
 * Around the commit of a write sent with an Idempotency-Key: `crash-before-idempotent-commit` kills
 * the process once the write ran and before it commits; `crash-after-idempotent-commit` once it
 * committed and before its response is sent; `fail-idempotent-commit` makes the commit fail.
 * Around the outbox: `fail-after-event` makes a write fail once its event is inserted (the
 * transaction rolls back); `crash-after-event` kills the process there, before the commit;
 * `crash-after-event-commit` kills it once a write and its event committed, before the response.
 * In the start: `stop-once-listening` sends the process SIGTERM as soon as it listens, while the
 * rest of the start (the first key, the worker) is still under way. `keep-lost-postgres-down`: the
 * service does not start again the embedded PostgreSQL it lost, so that what happens meanwhile can
 * be seen for as long as needed.
 */
export const FAILPOINTS = [
  'crash-before-idempotent-commit',
  'crash-after-idempotent-commit',
  'fail-idempotent-commit',
  'fail-after-event',
  'crash-after-event',
  'crash-after-event-commit',
  'stop-once-listening',
  'keep-lost-postgres-down',
] as const;
export type Failpoint = (typeof FAILPOINTS)[number];

let armed: ReadonlySet<Failpoint> = new Set();

/** Arms the failpoints for this process (the entry point does, from the configuration). */
export function armFailpoints(failpoints: ReadonlySet<Failpoint>): void {
  armed = failpoints;
}

export function isArmed(failpoint: Failpoint): boolean {
  return armed.has(failpoint);
}

/** Kills the process at once, as a crash would, when `failpoint` is armed. */
export function crashAt(failpoint: Failpoint): void {
  if (armed.has(failpoint)) process.kill(process.pid, 'SIGKILL');
}

/**
 * Asks the process to stop, as an operator would, when `failpoint` is armed; resolves once the
 * signal was handled, so that what follows runs while the stop is under way.
 */
export async function stopAt(failpoint: Failpoint): Promise<void> {
  if (!armed.has(failpoint)) return;
  const handled = new Promise((resolve) => process.once('SIGTERM', resolve));
  process.kill(process.pid, 'SIGTERM');
  await handled;
}
