// Refusing a request before (or instead of) running it, in the format of the face it came to:
// Problem Details on REST, a GraphQL error response on /graphql.
import { STATUS_CODES } from 'node:http';
import { PROBLEM_KINDS, problem, problemHeaders, type ProblemKind } from './errors.ts';
import { GRAPHQL_PATH } from './paths.ts';

export type Face = 'graphql' | 'rest';

/** Which face a request path belongs to: everything but the GraphQL endpoint is REST's to answer. */
export function faceOf(pathname: string): Face {
  return pathname === GRAPHQL_PATH ? 'graphql' : 'rest';
}

export interface Refusal {
  kind: ProblemKind;
  detail: string;
  headers?: Record<string, string>;
}

/** The refusal as status, headers and body, for writers that are not fetch handlers. */
export function refusalParts(
  path: string,
  accept: string,
  refusal: Refusal,
): { status: number; headers: Record<string, string>; body: string } {
  const body = { ...problem(refusal.kind, refusal.detail), instance: path };
  const headers = { ...problemHeaders(refusal.kind), ...refusal.headers };
  if (faceOf(path) === 'rest')
    return { status: body.status, headers: { 'content-type': 'application/problem+json', ...headers }, body: JSON.stringify(body) };
  const type = accept.includes('application/graphql-response+json') ? 'application/graphql-response+json' : 'application/json';
  const error = { message: refusal.detail, extensions: { code: PROBLEM_KINDS[refusal.kind].code, type: body.type } };
  return {
    status: body.status,
    headers: { 'content-type': `${type}; charset=utf-8`, ...headers },
    body: JSON.stringify({ errors: [error] }),
  };
}

/** The refusal as a fetch Response, for plugins. */
export function refuse(request: Request, refusal: Refusal): Response {
  const parts = refusalParts(new URL(request.url).pathname, request.headers.get('accept') ?? '', refusal);
  return new Response(parts.body, { status: parts.status, statusText: STATUS_CODES[parts.status], headers: parts.headers });
}

export function deny(request: Request, status: 401 | 403, detail: string, challenge?: string): Response {
  return refuse(request, {
    kind: status === 401 ? 'unauthenticated' : 'forbidden',
    detail,
    headers: challenge ? { 'www-authenticate': challenge } : {},
  });
}
