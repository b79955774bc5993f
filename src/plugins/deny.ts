// Refusing a request before (or instead of) running it, in the format of the face it came to:
// Problem Details on REST, a GraphQL error response on /graphql.
import { STATUS_CODES } from 'node:http';
import { PROBLEM_TYPE_BASE } from '../errors.ts';
import { problem, type ProblemKind } from '../rest/problem-details.ts';

export type Face = 'graphql' | 'rest';

/** The refusals made outside GraphQL execution, and their GraphQL error codes. */
const CODE_OF_KIND = {
  unauthenticated: 'UNAUTHENTICATED',
  forbidden: 'FORBIDDEN',
  timeout: 'TIMEOUT',
  'uri-too-long': 'BAD_USER_INPUT',
} as const satisfies Partial<Record<ProblemKind, string>>;

export interface Refusal {
  kind: keyof typeof CODE_OF_KIND;
  detail: string;
  headers?: Record<string, string>;
}

/** The refusal as status, headers and body, for writers that are not fetch handlers. */
export function refusalParts(
  face: Face,
  path: string,
  accept: string,
  refusal: Refusal,
): { status: number; headers: Record<string, string>; body: string } {
  const body = { ...problem(refusal.kind, refusal.detail), instance: path };
  if (face === 'rest')
    return { status: body.status, headers: { 'content-type': 'application/problem+json', ...refusal.headers }, body: JSON.stringify(body) };
  const type = accept.includes('application/graphql-response+json') ? 'application/graphql-response+json' : 'application/json';
  const error = { message: refusal.detail, extensions: { code: CODE_OF_KIND[refusal.kind], type: PROBLEM_TYPE_BASE + refusal.kind } };
  return {
    status: body.status,
    headers: { 'content-type': `${type}; charset=utf-8`, ...refusal.headers },
    body: JSON.stringify({ errors: [error] }),
  };
}

/** The refusal as a fetch Response, for plugins. */
export function refuse(face: Face, request: Request, refusal: Refusal): Response {
  const parts = refusalParts(face, new URL(request.url).pathname, request.headers.get('accept') ?? '', refusal);
  return new Response(parts.body, { status: parts.status, statusText: STATUS_CODES[parts.status], headers: parts.headers });
}

export function deny(face: Face, request: Request, status: 401 | 403, detail: string, challenge?: string): Response {
  return refuse(face, request, {
    kind: status === 401 ? 'unauthenticated' : 'forbidden',
    detail,
    headers: challenge ? { 'www-authenticate': challenge } : {},
  });
}
