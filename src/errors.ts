// Error kinds shared by every layer. Services throw these; the GraphQL layer turns them into coded
// errors and the REST layer into Problem Details, so each kind has one stable code and type URI.

export const PROBLEM_TYPE_BASE = 'https://portico.dev/problems/';

/** What a client learns of an unexpected failure: nothing of its internals. */
export const INTERNAL_DETAIL = 'The request could not be completed; it has been logged.';

/** How long a client should wait before retrying when a dependency the request needs is down. */
export const UNAVAILABLE_RETRY_AFTER_S = 2;

/** How long a client should wait before retrying a write whose Idempotency-Key is still being processed. */
export const IN_FLIGHT_RETRY_AFTER_S = 1;

/**
 * Every kind of problem the API reports: its HTTP status and title (REST Problem Details), and its
 * GraphQL error code. The last segment of the problem type URI is the kind's name. A kind marked
 * `wholeRequest` stops a GraphQL request as a whole, so the response takes its HTTP status: a document
 * over a limit is refused before execution, a spent budget runs nothing, and when the database fails
 * nothing the request asked for can be trusted to have run. `retryAfterS` is the Retry-After every
 * answer of the kind carries.
 */
export const PROBLEM_KINDS = {
  'invalid-input': { status: 400, title: 'Invalid input', code: 'BAD_USER_INPUT' },
  'query-too-complex': { status: 400, title: 'Query too complex', code: 'QUERY_TOO_COMPLEX', wholeRequest: true },
  unauthenticated: { status: 401, title: 'Unauthenticated', code: 'UNAUTHENTICATED' },
  forbidden: { status: 403, title: 'Forbidden', code: 'FORBIDDEN' },
  'not-found': { status: 404, title: 'Not found', code: 'NOT_FOUND' },
  'method-not-allowed': { status: 405, title: 'Method not allowed', code: 'BAD_USER_INPUT' },
  'not-acceptable': { status: 406, title: 'Not acceptable', code: 'BAD_USER_INPUT' },
  'request-timeout': { status: 408, title: 'Request timeout', code: 'BAD_USER_INPUT' },
  conflict: { status: 409, title: 'Conflict', code: 'CONFLICT' },
  'idempotency-key-in-flight': {
    status: 409,
    title: 'Idempotency key in use',
    code: 'IDEMPOTENCY_KEY_IN_FLIGHT',
    wholeRequest: true,
    retryAfterS: IN_FLIGHT_RETRY_AFTER_S,
  },
  'precondition-failed': { status: 412, title: 'Precondition failed', code: 'BAD_USER_INPUT' },
  'payload-too-large': { status: 413, title: 'Request body too large', code: 'PAYLOAD_TOO_LARGE' },
  'uri-too-long': { status: 414, title: 'URI too long', code: 'BAD_USER_INPUT' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type', code: 'BAD_USER_INPUT' },
  'idempotency-key-reused': { status: 422, title: 'Idempotency key reused', code: 'IDEMPOTENCY_KEY_REUSED', wholeRequest: true },
  'quota-exceeded': { status: 429, title: 'Too many requests', code: 'RATE_LIMITED', wholeRequest: true },
  'request-header-fields-too-large': { status: 431, title: 'Request header fields too large', code: 'BAD_USER_INPUT' },
  internal: { status: 500, title: 'Internal error', code: 'INTERNAL' },
  unavailable: {
    status: 503,
    title: 'Service unavailable',
    code: 'UNAVAILABLE',
    wholeRequest: true,
    retryAfterS: UNAVAILABLE_RETRY_AFTER_S,
  },
  timeout: { status: 503, title: 'Timed out', code: 'TIMEOUT', wholeRequest: true },
} as const;

export type ProblemKind = keyof typeof PROBLEM_KINDS;
export type ErrorCode = (typeof PROBLEM_KINDS)[ProblemKind]['code'];

/** Whether a kind stops a GraphQL request as a whole (see PROBLEM_KINDS). */
export function stopsWholeRequest(kind: ProblemKind): boolean {
  return 'wholeRequest' in PROBLEM_KINDS[kind];
}

export function isProblemKind(name: string): name is ProblemKind {
  return Object.hasOwn(PROBLEM_KINDS, name);
}

/** The kind a problem type URI names, if it names one. */
export function kindOfType(type: string): ProblemKind | undefined {
  const name = type.startsWith(PROBLEM_TYPE_BASE) ? type.slice(PROBLEM_TYPE_BASE.length) : '';
  return isProblemKind(name) ? name : undefined;
}

/** Headers every answer of a kind carries, on either face. */
export function problemHeaders(kind: ProblemKind | undefined): Record<string, string> {
  const entry = kind && PROBLEM_KINDS[kind];
  return entry && 'retryAfterS' in entry ? { 'retry-after': String(entry.retryAfterS) } : {};
}

/** The kind a GraphQL code stands for when nothing more precise is known: the first listed with it. */
export function kindOfCode(code: string): ProblemKind | undefined {
  return Object.keys(PROBLEM_KINDS)
    .filter(isProblemKind)
    .find((kind) => PROBLEM_KINDS[kind].code === code);
}

export interface FieldError {
  /** Path of the offending input, e.g. `input.email` or `first`. */
  field: string;
  message: string;
}

/** An RFC 9457 Problem Details body: how REST, and every refusal before GraphQL runs, states a problem. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  errors?: FieldError[];
}

export function problem(kind: ProblemKind, detail: string, errors?: FieldError[]): Problem {
  const { status, title } = PROBLEM_KINDS[kind];
  return { type: PROBLEM_TYPE_BASE + kind, title, status, detail, ...(errors && errors.length > 0 ? { errors } : {}) };
}

export abstract class DomainError extends Error {
  abstract readonly kind: ProblemKind;
  /** The fields the error is about, for a client to point at: those refused, or whose value conflicts. */
  readonly fieldErrors: FieldError[];

  constructor(message: string, fieldErrors: FieldError[] = []) {
    super(message);
    this.fieldErrors = fieldErrors;
  }

  get code(): ErrorCode {
    return PROBLEM_KINDS[this.kind].code;
  }

  get type(): string {
    return PROBLEM_TYPE_BASE + this.kind;
  }
}

export class ValidationError extends DomainError {
  readonly kind = 'invalid-input' as const;

  constructor(fieldErrors: FieldError[]) {
    super(fieldErrors.map((e) => `${e.field}: ${e.message}`).join('; '), fieldErrors);
  }

  static field(field: string, message: string): ValidationError {
    return new ValidationError([{ field, message }]);
  }
}

export class NotFoundError extends DomainError {
  readonly kind = 'not-found' as const;
}

export class ConflictError extends DomainError {
  readonly kind = 'conflict' as const;
}

/** No credentials, or credentials that do not verify. */
export class UnauthenticatedError extends DomainError {
  readonly kind = 'unauthenticated' as const;
}

/** Valid credentials that do not allow this (scope, source address, another user's data). */
export class ForbiddenError extends DomainError {
  readonly kind = 'forbidden' as const;
}

/** A GraphQL document over a shape or cost limit; the message names the limit and the value. */
export class QueryTooComplexError extends DomainError {
  readonly kind = 'query-too-complex' as const;
}

/** The API key spent its budget for the current window; Retry-After says when it renews. */
export class RateLimitedError extends DomainError {
  readonly kind = 'quota-exceeded' as const;
}

/** The work took longer than the service allows (a statement hit its timeout); worth retrying. */
export class TimeoutError extends DomainError {
  readonly kind = 'timeout' as const;
}

/** Another request with the same Idempotency-Key is still being processed; retry in a moment. */
export class IdempotencyKeyInFlightError extends DomainError {
  readonly kind = 'idempotency-key-in-flight' as const;
}

/** The Idempotency-Key was used before for a different request. */
export class IdempotencyKeyReusedError extends DomainError {
  readonly kind = 'idempotency-key-reused' as const;
}

/** A dependency the request needs (the database) cannot be reached right now; worth retrying shortly. */
export class UnavailableError extends DomainError {
  readonly kind = 'unavailable' as const;
}

/** The process cannot start; the message is one sentence naming the cause and the fix. */
export class StartupError extends Error {
  override name = 'StartupError';
}
