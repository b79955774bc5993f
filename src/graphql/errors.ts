// How errors leave GraphQL: domain errors become coded errors with their problem type; errors
// graphql-js raised about the request itself (syntax, validation, variables) are BAD_USER_INPUT;
// anything else is masked to INTERNAL, and the original goes to the log with the request id.
import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import {
  DomainError,
  ForbiddenError,
  PROBLEM_TYPE_BASE,
  QueryTooComplexError,
  RateLimitedError,
  TimeoutError,
  UnauthenticatedError,
  ValidationError,
} from '../errors.ts';
import { BEARER_CHALLENGE } from './acts-for.ts';

/** PostgreSQL's "canceling statement due to statement timeout". */
const QUERY_CANCELED = '57014';

function domainErrorOf(error: unknown): DomainError | undefined {
  if (error instanceof DomainError) return error;
  if (error instanceof GraphQLError) return domainErrorOf(error.originalError);
  if ((error as { code?: unknown } | undefined)?.code === QUERY_CANCELED) {
    return new TimeoutError('The request took too long and was stopped; try again, or ask for less at once.');
  }
  return undefined;
}

/** Raised by graphql-js or yoga themselves: a GraphQLError all the way down, wrapping no other error. */
function isGraphQLOwnError(error: unknown): error is GraphQLError {
  return error instanceof GraphQLError && (error.originalError == null || isGraphQLOwnError(error.originalError));
}

/** Errors the client caused: worth a debug line, not an error report. */
export function isClientError(error: unknown): boolean {
  const domain = domainErrorOf(error);
  return (domain !== undefined && !(domain instanceof TimeoutError)) || isGraphQLOwnError(error);
}

export function maskError(error: unknown): GraphQLError {
  const located = error instanceof GraphQLError ? error : undefined;
  const options = { nodes: located?.nodes, source: located?.source, positions: located?.positions, path: located?.path };

  const domain = domainErrorOf(error);
  if (domain) {
    return new GraphQLError(domain.message, {
      ...options,
      extensions: {
        // Set by useWholeRequestDenials when the denial stopped the whole request; a document over
        // a limit is refused as a whole, before execution.
        ...(located?.extensions.http ? { http: located.extensions.http } : {}),
        ...(domain instanceof QueryTooComplexError ? { http: { status: 400 } } : {}),
        ...(domain instanceof TimeoutError ? { http: { status: 503 } } : {}),
        // Retry-After and the RateLimit fields are set on the response by the rate limit plugin.
        ...(domain instanceof RateLimitedError ? { http: { status: 429 } } : {}),
        code: domain.code,
        type: domain.type,
        ...(domain instanceof ValidationError ? { errors: domain.fieldErrors } : {}),
      },
    });
  }
  if (isGraphQLOwnError(error)) return asRequestError(error);
  return new GraphQLError('Unexpected error.', {
    ...options,
    extensions: { code: 'INTERNAL', type: `${PROBLEM_TYPE_BASE}internal` },
  });
}

/**
 * An error graphql-js or yoga raised about the request itself; keeps its extensions (yoga reads `http`).
 * Without a path it rejected the whole request (e.g. a variable of the wrong type): GraphQL over HTTP
 * wants 400 for that with `application/graphql-response+json` and 200 with `application/json`, which
 * yoga does for errors marked `spec`.
 */
function asRequestError(error: GraphQLError): GraphQLError {
  const http = error.extensions.http ?? (error.path === undefined ? { status: 400, spec: true } : undefined);
  // graphql-armor words its rejections as syntax errors; they are limits, and say which.
  const limit = ARMOR_REJECTION.exec(error.message)?.[1];
  const status = (http as { status?: number } | undefined)?.status;
  const [code, kind] = limit
    ? ['QUERY_TOO_COMPLEX', 'query-too-complex']
    : status === 403
      ? ['FORBIDDEN', 'forbidden']
      : status === 413
        ? ['BAD_USER_INPUT', 'payload-too-large']
        : ['BAD_USER_INPUT', 'invalid-input'];
  return new GraphQLError(limit ?? error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    extensions: { ...error.extensions, ...(http ? { http } : {}), code, type: PROBLEM_TYPE_BASE + kind },
  });
}

const ARMOR_REJECTION = /^Syntax Error: ((?:Query depth|Aliases|Token|Directives) limit of \d+ exceeded.*)$/;

/** Validation errors bypass masking in yoga; this gives them the same code as every other input error. */
export function useValidationErrorCodes(): Plugin {
  return {
    onValidate:
      () =>
      ({ result, setResult }) => {
        if (result.length > 0) setResult(result.map((error: Error) => (error instanceof GraphQLError ? asRequestError(error) : error)));
      },
  };
}

/**
 * A request denied everything it asked for gets the HTTP status of the denial (401 when it lacked a
 * user token, else 403), as a client expects of a request that could not run at all; a denial
 * beside data stays a field error in a 200.
 */
export function useWholeRequestDenials(): Plugin {
  return {
    onExecute: () => ({
      onExecuteDone: ({ result, setResult }) => {
        if (!('errors' in result) || !result.errors?.length) return;
        const data = result.data as Record<string, unknown> | null | undefined;
        const nothingRan = data == null || Object.values(data).every((value) => value === null);
        const kinds = result.errors.map((error) => domainErrorOf(error));
        const denied = kinds.every((kind) => kind instanceof ForbiddenError || kind instanceof UnauthenticatedError);
        if (!nothingRan || !denied) return;
        const unauthenticated = kinds.every((kind) => kind instanceof UnauthenticatedError);
        const http = unauthenticated ? { status: 401, headers: { 'www-authenticate': BEARER_CHALLENGE } } : { status: 403 };
        const errors = result.errors.map(
          (error) =>
            new GraphQLError(error.message, {
              nodes: error.nodes,
              source: error.source,
              positions: error.positions,
              path: error.path,
              originalError: error.originalError,
              extensions: { ...error.extensions, http },
            }),
        );
        setResult({ ...result, errors });
      },
    }),
  };
}
