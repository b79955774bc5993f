// What a failed database call means for the request that made it: PostgreSQL cancelled a statement
// that ran too long, or undid a transaction caught in a deadlock with another, or the database cannot
// be reached (refused, reset, silent, shutting down). Each is worth a retry; none is a bug, so none is
// a 500. Or the statement was stopped by a refused claim of its transaction's idempotency key, whose
// answer replaces the request's.

export type DatabaseFailure = 'statement-timeout' | 'concurrent-writes' | 'unreachable' | 'idempotency-key-claimed' | 'schema-changed';

/**
 * A statement prepared on a connection before its tables changed shape (another instance's
 * migration, in a rolling upgrade): PostgreSQL refuses to run it again on that connection, which is
 * then given up (db/connections.ts); the same request sent again runs on a fresh one.
 */
const SCHEMA_CHANGED = { code: '0A000', message: /cached plan must not change result type/ };

/** The idempotency claim's refusals (the idempotency_claim migration): the key is in use; it has a live record. */
export const REFUSED_CLAIM = { inUse: 'PI409', recorded: 'PI200' } as const;

/** PostgreSQL's "canceling statement due to statement timeout". */
const QUERY_CANCELED = '57014';

/**
 * A transaction PostgreSQL undid for another's sake: a deadlock (two writers each waiting for what the
 * other holds, as two documents updating the same users in opposite orders do), or a serialization
 * failure. The same request sent again runs as if alone.
 */
const UNDONE_FOR_ANOTHER = new Set(['40P01', '40001']);

/**
 * SQLSTATEs meaning the session or server went away: connection exceptions (class 08), shutdowns, no
 * slots. Not a protocol violation (08P01): PostgreSQL answered it, refusing a message it could not
 * read (a NUL in a text value, say), which is a bug to report, not an outage to wait out.
 */
const UNREACHABLE_STATES = /^(08(?!P01$)|57P0[1-3]$|53300$|25P03$)/;

/** Socket errors of a connection that could not be made or was lost. */
const UNREACHABLE_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * What node-postgres and its pool say when a connection could not be had or stopped answering:
 * the connect timeout, the pool's wait timeout, the client-side query timeout, a socket that closed.
 */
const UNREACHABLE_MESSAGES =
  /\b(timeout expired|timeout exceeded when trying to connect|Connection terminated|Query read timeout|Client has encountered a connection error|Client was closed)/;

export function databaseFailureOf(error: unknown, depth = 0): DatabaseFailure | undefined {
  if (error === null || typeof error !== 'object' || depth > 5) return undefined;
  // Errors of several libraries pass through here; each field is read without trusting its type.
  const [code, message, cause, errors, originalError]: unknown[] = ['code', 'message', 'cause', 'errors', 'originalError'].map(
    (name): unknown => Reflect.get(error, name),
  );
  if (code === QUERY_CANCELED) return 'statement-timeout';
  if (typeof code === 'string' && UNDONE_FOR_ANOTHER.has(code)) return 'concurrent-writes';
  if (code === REFUSED_CLAIM.inUse || code === REFUSED_CLAIM.recorded) return 'idempotency-key-claimed';
  if (code === SCHEMA_CHANGED.code && typeof message === 'string' && SCHEMA_CHANGED.message.test(message)) return 'schema-changed';
  if (typeof code === 'string' && (UNREACHABLE_STATES.test(code) || UNREACHABLE_ERRNOS.has(code))) return 'unreachable';
  if (typeof message === 'string' && UNREACHABLE_MESSAGES.test(message)) return 'unreachable';
  // Wrapped errors (GraphQL's originalError, a cause) and a dual-stack connect's AggregateError.
  for (const inner of [originalError, cause, ...(Array.isArray(errors) ? (errors as unknown[]) : [])]) {
    const found = databaseFailureOf(inner, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** The constraint (unique, foreign key, check) whose violation made a statement fail, if that is why. */
export function violatedConstraint(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const code: unknown = Reflect.get(error, 'code');
  const constraint: unknown = Reflect.get(error, 'constraint');
  return typeof code === 'string' && code.startsWith('23') && typeof constraint === 'string' ? constraint : undefined;
}

/**
 * node-postgres's refusal to send a statement on a client whose connection was already lost or
 * closed: answered at once, with no word from the database, so it says nothing of whether the
 * database answers now (the loss it follows was met, and weighed, when it happened).
 */
export function isDeadClientRefusal(error: unknown): boolean {
  return error instanceof Error && /\bis not queryable\b/.test(error.message);
}

/**
 * How a failure to reach the database is logged where it is expected to happen (an outage the
 * availability watch reports): by its message and code, since its stack is the driver's own and
 * says nothing; any other error whole, stack included.
 */
export function loggedFailure(error: unknown): { err: unknown; code?: unknown } {
  if (databaseFailureOf(error) !== 'unreachable' || !(error instanceof Error)) return { err: error };
  return { err: error.message, code: Reflect.get(error, 'code') };
}
