// Refusing a request before (or instead of) running it, in the format of the face it came to:
// Problem Details on REST, a GraphQL error response on /graphql.
import { STATUS_CODES } from 'node:http';
import { PROBLEM_KINDS, problem, problemHeaders, type FieldError, type ProblemKind } from './errors.ts';
import { preferred } from './http/accept.ts';
import { GRAPHQL_PATH } from './paths.ts';
import { maskKeysIn } from './services/api-key-secrets.ts';

export type Face = 'graphql' | 'rest';

/** Which face a request path belongs to: everything but the GraphQL endpoint is REST's to answer. */
export function faceOf(pathname: string): Face {
  return pathname === GRAPHQL_PATH ? 'graphql' : 'rest';
}

export interface Refusal {
  kind: ProblemKind;
  detail: string;
  headers?: Record<string, string>;
  /** The fields of the input it is about, named as the client's input holds them. */
  fieldErrors?: FieldError[];
}

/** What a GraphQL refusal is written in, as Accept prefers (JSON when it weighs both alike, as for `*\/*`). */
const SINGLE_RESULT_TYPES = ['application/json', 'application/graphql-response+json'];

/** The refusal as status, headers and body, for writers that are not fetch handlers. */
export function refusalParts(
  path: string,
  accept: string,
  refusal: Refusal,
): { status: number; headers: Record<string, string>; body: string } {
  const fieldErrors = refusal.fieldErrors?.length ? refusal.fieldErrors : undefined;
  const body = { ...problem(refusal.kind, refusal.detail), instance: path, ...(fieldErrors ? { errors: fieldErrors } : {}) };
  const headers = { ...problemHeaders(refusal.kind), ...refusal.headers };
  if (faceOf(path) === 'rest')
    return {
      status: body.status,
      headers: { 'content-type': 'application/problem+json', ...headers },
      body: maskKeysIn(JSON.stringify(body)),
    };
  const type = preferred(accept, SINGLE_RESULT_TYPES) ?? 'application/json';
  const error = {
    message: refusal.detail,
    extensions: { code: PROBLEM_KINDS[refusal.kind].code, type: body.type, ...(fieldErrors ? { errors: fieldErrors } : {}) },
  };
  return {
    status: body.status,
    headers: { 'content-type': `${type}; charset=utf-8`, ...headers },
    body: maskKeysIn(JSON.stringify({ errors: [error] })),
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

/** `Allow` for a path served by `methods`: and by OPTIONS, which every path the service serves answers (plugins/options.ts). */
export const allowHeader = (methods: readonly string[]) => [...methods, 'OPTIONS'].join(', ');

/** 405 for a method `request`'s path is not served by, naming the methods it is (also in `Allow`). */
export function methodNotAllowed(request: Request, allowed: readonly string[]): Response {
  return refuse(request, {
    kind: 'method-not-allowed',
    detail: `${new URL(request.url).pathname} answers ${allowed.join(' and ')}, not ${request.method}.`,
    headers: { allow: allowHeader(allowed) },
  });
}

/** The methods of a path that only serves documents (the index, the OpenAPI document, the reference pages). */
export const READ_METHODS = ['GET', 'HEAD'];

/** The methods GraphQL is served by. */
export const GRAPHQL_METHODS = ['GET', 'POST'];

/**
 * True for GET and HEAD, which such a path serves. Any other method is answered 405 naming them,
 * rather than passed on to be refused for want of a key or as a path with no route; OPTIONS is
 * answered before (plugins/options.ts).
 */
export function servesRead(request: Request, endResponse: (response: Response) => void): boolean {
  const { method } = request;
  if (method === 'GET' || method === 'HEAD') return true;
  if (method !== 'OPTIONS') endResponse(methodNotAllowed(request, READ_METHODS));
  return false;
}
