// Refusing a request before it runs, in the format of the face it came to: Problem Details on REST,
// a GraphQL error response on /graphql.
import { PROBLEM_TYPE_BASE } from '../errors.ts';
import { problem, problemResponse } from '../rest/problem-details.ts';

export type Face = 'graphql' | 'rest';

export function deny(face: Face, request: Request, status: 401 | 403, detail: string, challenge?: string): Response {
  const kind = status === 401 ? 'unauthenticated' : 'forbidden';
  const headers: Record<string, string> = challenge ? { 'www-authenticate': challenge } : {};
  if (face === 'rest') return problemResponse({ ...problem(kind, detail), instance: new URL(request.url).pathname }, headers);
  const accept = request.headers.get('accept') ?? '';
  const type = accept.includes('application/graphql-response+json') ? 'application/graphql-response+json' : 'application/json';
  const code = status === 401 ? 'UNAUTHENTICATED' : 'FORBIDDEN';
  return new Response(JSON.stringify({ errors: [{ message: detail, extensions: { code, type: PROBLEM_TYPE_BASE + kind } }] }), {
    status,
    headers: { 'content-type': `${type}; charset=utf-8`, ...headers },
  });
}
