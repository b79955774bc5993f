// Error kinds shared by every layer. Services throw these; the GraphQL layer turns them into coded
// errors and the REST layer into Problem Details, so each kind has one stable code and type URI.

export const PROBLEM_TYPE_BASE = 'https://portico.dev/problems/';

export interface FieldError {
  /** Path of the offending input, e.g. `input.email` or `first`. */
  field: string;
  message: string;
}

export abstract class DomainError extends Error {
  abstract readonly code: string;
  /** Last segment of the problem type URI. */
  abstract readonly kind: string;

  get type(): string {
    return PROBLEM_TYPE_BASE + this.kind;
  }
}

export class ValidationError extends DomainError {
  readonly code = 'BAD_USER_INPUT';
  readonly kind = 'invalid-input';
  readonly fieldErrors: FieldError[];

  constructor(fieldErrors: FieldError[]) {
    super(fieldErrors.map((e) => `${e.field}: ${e.message}`).join('; '));
    this.fieldErrors = fieldErrors;
  }

  static field(field: string, message: string): ValidationError {
    return new ValidationError([{ field, message }]);
  }
}

export class NotFoundError extends DomainError {
  readonly code = 'NOT_FOUND';
  readonly kind = 'not-found';
}

export class ConflictError extends DomainError {
  readonly code = 'CONFLICT';
  readonly kind = 'conflict';
}

/** No credentials, or credentials that do not verify. */
export class UnauthenticatedError extends DomainError {
  readonly code = 'UNAUTHENTICATED';
  readonly kind = 'unauthenticated';
}

/** Valid credentials that do not allow this (scope, source address, another user's data). */
export class ForbiddenError extends DomainError {
  readonly code = 'FORBIDDEN';
  readonly kind = 'forbidden';
}

/** A GraphQL document over a shape or cost limit; the message names the limit and the value. */
export class QueryTooComplexError extends DomainError {
  readonly code = 'QUERY_TOO_COMPLEX';
  readonly kind = 'query-too-complex';
}

/** The API key spent its budget for the current window; Retry-After says when it renews. */
export class RateLimitedError extends DomainError {
  readonly code = 'RATE_LIMITED';
  readonly kind = 'quota-exceeded';
}

/** The work took longer than the service allows (a statement hit its timeout); worth retrying. */
export class TimeoutError extends DomainError {
  readonly code = 'TIMEOUT';
  readonly kind = 'timeout';
}

/** The process cannot start; the message is one sentence naming the cause and the fix. */
export class StartupError extends Error {
  override name = 'StartupError';
}
