// RFC 9457 Problem Details: every REST error is one of these kinds, with a stable type URI.
import { STATUS_CODES } from 'node:http';
import { GraphQLError } from 'graphql';
import { shaped } from '../guards.ts';
import { maskKeysIn } from '../services/api-key-secrets.ts';
import {
  INTERNAL_DETAIL,
  kindOfCode,
  kindOfType,
  problem,
  problemHeaders,
  type FieldError,
  type Problem,
  type ProblemKind,
} from '../errors.ts';

/** A request refused by the REST adapter before it reaches GraphQL, naming fields as the client sent them. */
export class RequestProblem extends Error {
  readonly problem: Problem;
  readonly headers: Record<string, string>;
  constructor(body: Problem, headers: Record<string, string> = {}) {
    super(body.detail);
    this.problem = body;
    this.headers = headers;
  }

  static invalid(errors: FieldError[]): RequestProblem {
    return new RequestProblem(problem('invalid-input', errors.map((e) => `${e.field}: ${e.message}`).join('; '), errors));
  }
}

export function problemResponse(body: Problem, headers: Record<string, string> = {}): Response {
  // Instances and details quote the path, where a client may have put its API key by mistake.
  return new Response(maskKeysIn(JSON.stringify(body)), {
    status: body.status,
    statusText: STATUS_CODES[body.status],
    headers: { 'content-type': 'application/problem+json', ...problemHeaders(kindOfType(body.type)), ...headers },
  });
}

function isFieldError(value: unknown): value is FieldError {
  return shaped(value, { field: 'string', message: 'string' }) !== undefined;
}

/**
 * The fields a service's error is about (maskError copies a DomainError's list). Variables that do
 * not fit their types never get this far: the adapter coerces them first (input-errors.ts).
 */
function fieldErrorsOf(error: GraphQLError): FieldError[] {
  const listed = error.extensions?.errors;
  return Array.isArray(listed) ? listed.filter(isFieldError) : [];
}

/** The problem a failed GraphQL execution is on REST; the first error decides the kind. */
export function problemFromGraphQLErrors(errors: readonly unknown[]): Problem {
  const first = errors[0];
  const error = first instanceof GraphQLError ? first : undefined;
  const { code, type, http } = error?.extensions ?? {};
  const status: unknown = typeof http === 'object' && http !== null ? Reflect.get(http, 'status') : undefined;
  // The type names the kind exactly (several kinds share a code); the code is next best.
  const kind: ProblemKind =
    (typeof type === 'string' ? kindOfType(type) : undefined) ??
    (typeof code === 'string' ? kindOfCode(code) : undefined) ??
    (status === 400 ? 'invalid-input' : 'internal');
  if (kind === 'internal') return problem('internal', INTERNAL_DETAIL);
  // The fields a refusal is about (a refused input, a value in conflict), as the error lists them.
  const fieldErrors = error ? fieldErrorsOf(error) : [];
  const detail =
    kind === 'invalid-input' && fieldErrors.length > 0
      ? fieldErrors.map((e) => `${e.field}: ${e.message}`).join('; ')
      : (error?.message ?? '');
  return problem(kind, detail, fieldErrors);
}
