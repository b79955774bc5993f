// RFC 9457 Problem Details: every REST error is one of these kinds, with a stable type URI.
import { STATUS_CODES } from 'node:http';
import { GraphQLError } from 'graphql';
import { PROBLEM_TYPE_BASE, type FieldError } from '../errors.ts';

export const PROBLEM_KINDS = {
  'invalid-input': { status: 400, title: 'Invalid input' },
  'query-too-complex': { status: 400, title: 'Query too complex' },
  unauthenticated: { status: 401, title: 'Unauthenticated' },
  forbidden: { status: 403, title: 'Forbidden' },
  'not-found': { status: 404, title: 'Not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  conflict: { status: 409, title: 'Conflict' },
  'payload-too-large': { status: 413, title: 'Request body too large' },
  'uri-too-long': { status: 414, title: 'URI too long' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'quota-exceeded': { status: 429, title: 'Too many requests' },
  internal: { status: 500, title: 'Internal error' },
  timeout: { status: 503, title: 'Timed out' },
} as const;

export type ProblemKind = keyof typeof PROBLEM_KINDS;

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  errors?: FieldError[];
}

/** GraphQL error codes and the problem kind each one is on REST. */
const KIND_OF_CODE: Record<string, ProblemKind> = {
  BAD_USER_INPUT: 'invalid-input',
  QUERY_TOO_COMPLEX: 'query-too-complex',
  UNAUTHENTICATED: 'unauthenticated',
  FORBIDDEN: 'forbidden',
  NOT_FOUND: 'not-found',
  CONFLICT: 'conflict',
  INTERNAL: 'internal',
  TIMEOUT: 'timeout',
  RATE_LIMITED: 'quota-exceeded',
};

export function problem(kind: ProblemKind, detail: string, errors?: FieldError[]): Problem {
  const { status, title } = PROBLEM_KINDS[kind];
  return { type: PROBLEM_TYPE_BASE + kind, title, status, detail, ...(errors && errors.length > 0 ? { errors } : {}) };
}

export function problemResponse(body: Problem, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status: body.status,
    statusText: STATUS_CODES[body.status],
    headers: { 'content-type': 'application/problem+json', ...headers },
  });
}

// graphql-js describes bad variables in prose; these patterns recover which input field it means.
const FIELD_PATTERNS: [RegExp, (m: RegExpExecArray) => FieldError][] = [
  [/Field "(\w+)" is not defined by type/, (m) => ({ field: m[1]!, message: 'is not a field that can be set' })],
  [/Field "(\w+)" of required type "[^"]+" was not provided/, (m) => ({ field: m[1]!, message: 'is required' })],
  [/at "\w+\.(\w+)"; (.*)$/, (m) => ({ field: m[1]!, message: m[2]! })],
  [/Expected type "[^"]+" to be an object/, () => ({ field: 'body', message: 'must be a JSON object' })],
];

function fieldErrorsOf(error: GraphQLError): FieldError[] {
  const listed = error.extensions.errors as FieldError[] | undefined;
  if (listed) return listed;
  for (const [pattern, toField] of FIELD_PATTERNS) {
    const match = pattern.exec(error.message);
    if (match) return [toField(match)];
  }
  return [];
}

/** The problem a failed GraphQL execution is on REST; the first error decides the kind. */
export function problemFromGraphQLErrors(errors: readonly unknown[]): Problem {
  const first = errors[0];
  const error = first instanceof GraphQLError ? first : undefined;
  const code = error?.extensions.code as string | undefined;
  const status = (error?.extensions.http as { status?: number } | undefined)?.status;
  const kind = (code && KIND_OF_CODE[code]) || (status === 400 ? 'invalid-input' : 'internal');
  if (kind === 'internal') return problem('internal', 'The request could not be completed; it has been logged.');
  const fieldErrors = kind === 'invalid-input' && error ? fieldErrorsOf(error) : [];
  const detail =
    kind === 'invalid-input' && fieldErrors.length > 0
      ? fieldErrors.map((e) => `${e.field}: ${e.message}`).join('; ')
      : (error?.message ?? '');
  return problem(kind, detail, fieldErrors);
}
