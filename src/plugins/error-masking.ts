// How errors leave GraphQL: domain errors become coded errors with their problem type; errors
// graphql-js raised about the request itself (syntax, validation, variables) are BAD_USER_INPUT;
// anything else is masked to INTERNAL, and the original goes to the log with the request id.
import { GraphQLError, type DocumentNode, type GraphQLHTTPErrorExtensions, type Source, type SourceLocation } from 'graphql';
import { databaseFailureOf } from '../db/failures.ts';
import {
  DomainError,
  ForbiddenError,
  IdempotencyKeyInFlightError,
  PROBLEM_KINDS,
  PROBLEM_TYPE_BASE,
  stopsWholeRequest,
  TimeoutError,
  UNAVAILABLE_RETRY_AFTER_S,
  UnauthenticatedError,
  problemHeaders,
  UnavailableError,
  type ProblemKind,
} from '../errors.ts';
import { BEARER_CHALLENGE } from '../services/request-auth.ts';
import { rootFields } from './root-fields.ts';
import { VALIDATION_ABORTED } from './query-limits.ts';
import { executionArgs, type ServerPlugin } from './server-context.ts';
import { markStatementTimeout } from '../request-context.ts';
import { namedLiteralError } from '../graphql/literal-errors.ts';
import { namedVariableError } from '../graphql/variable-errors.ts';
import { placeOf } from '../graphql/error-place.ts';
import { withoutSuggestions } from '../graphql/suggestions.ts';

function domainErrorOf(error: unknown): DomainError | undefined {
  if (error instanceof DomainError) return error;
  if (error instanceof GraphQLError) return domainErrorOf(error.originalError);
  switch (databaseFailureOf(error)) {
    case 'statement-timeout':
      // Counted once per request when it ends (the HTTP shell's metrics), however often it is mapped.
      markStatementTimeout();
      return new TimeoutError('The request took too long and was stopped; try again, or ask for less at once.');
    case 'unreachable':
      return new UnavailableError(`The database cannot be reached right now; try again in ${UNAVAILABLE_RETRY_AFTER_S} seconds.`);
    case 'schema-changed':
      return new UnavailableError(
        `The database's tables changed shape while the request ran (an upgrade under way); nothing of it was kept. Send it again in ${UNAVAILABLE_RETRY_AFTER_S} seconds.`,
      );
    case 'concurrent-writes':
      return new UnavailableError(
        `The request met concurrent writes to the same data and was undone; nothing of it was kept. Send it again in ${UNAVAILABLE_RETRY_AFTER_S} seconds.`,
      );
    case 'idempotency-key-claimed':
      // The idempotency plugin answers with the key's record or refusal instead.
      return new IdempotencyKeyInFlightError('A request with this Idempotency-Key was answered or is still being processed.');
    default:
      return undefined;
  }
}

/**
 * What the executor (graphql-js's or graphql-jit's) says when the schema's own resolvers broke its
 * contract with it: a null for a non-null field, a value of no possible type, output a scalar cannot
 * represent. The request is not at fault; the service is.
 */
const EXECUTOR_FAULT =
  /^(Cannot return null for non-nullable field |Runtime Object type (.* )?is not a possible type for |Abstract type \S+ (must resolve|was resolved) |Expected Iterable, but did not find one for field |\w+ cannot represent )/;

/** Raised by graphql-js or yoga themselves about the request: a GraphQLError all the way down, wrapping no other error. */
function isGraphQLOwnError(error: unknown): error is GraphQLError {
  return (
    error instanceof GraphQLError &&
    !(error.path !== undefined && EXECUTOR_FAULT.test(error.message)) &&
    (error.originalError == null || isGraphQLOwnError(error.originalError))
  );
}

/**
 * How loudly an error that reached a client is logged: errors the client caused are worth a debug
 * line; a statement that timed out, or a transaction undone by a deadlock, a warning; an unreachable
 * database is reported once per outage where connections fail (db/availability.ts), not once per
 * request; anything else is a bug.
 */
export function logLevelOf(error: unknown): 'debug' | 'warn' | 'error' {
  // Execution the deadline or a departed client cut short: answered (or unheard) already.
  if (
    (error instanceof Error && error.name === 'AbortError') ||
    (error instanceof GraphQLError && error.originalError?.name === 'AbortError')
  ) {
    return 'debug';
  }
  const domain = domainErrorOf(error);
  // Contention worth seeing, though the client was told to retry.
  const failure = databaseFailureOf(error);
  if (domain instanceof TimeoutError || failure === 'concurrent-writes' || failure === 'schema-changed') return 'warn';
  return domain !== undefined || isGraphQLOwnError(error) ? 'debug' : 'error';
}

/**
 * A document over a limit is refused as GraphQL over HTTP refuses one that does not validate, whichever
 * limit it broke (armor's while parsing and validating, cost at execution start): 400 to
 * `application/graphql-response+json`, 200 to `application/json` (yoga applies the rule to errors
 * marked `spec`).
 */
function specRule(kind: ProblemKind): { spec?: true } {
  return kind === 'query-too-complex' ? { spec: true } : {};
}

export function maskError(error: unknown): GraphQLError {
  const located = error instanceof GraphQLError ? error : undefined;
  const options = placeOf(located);

  const domain = domainErrorOf(error);
  if (domain) {
    const whole = stopsWholeRequest(domain.kind);
    return new GraphQLError(domain.message, {
      ...options,
      extensions: {
        // Set by useWholeRequestDenials when the denial stopped the whole request.
        // graphql-jit's errors may carry no extensions at all.
        ...(located?.extensions?.http ? { http: located.extensions.http } : {}),
        ...(whole
          ? { http: { status: PROBLEM_KINDS[domain.kind].status, headers: problemHeaders(domain.kind), ...specRule(domain.kind) } }
          : {}),
        code: domain.code,
        type: domain.type,
        ...(domain.fieldErrors.length > 0 ? { errors: domain.fieldErrors } : {}),
      },
    });
  }
  if (isGraphQLOwnError(error)) return asRequestError(namedVariableError(error));
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
  // Yoga's own failure to pick the operation (an operationName the document lacks, or several
  // operations and no name) is a request that cannot run like one that does not validate; yoga
  // answers it 400 whatever the client accepts.
  // Yoga attaches the JSON parser's own error to a body that does not parse, quoting the body back;
  // it goes.
  const { originalError: _parserError, ...extensions } = error.extensions ?? {};
  const http =
    error.extensions?.code === OPERATION_RESOLUTION_FAILURE
      ? { status: 400, spec: true }
      : error.extensions?.code === NOT_WELL_FORMED
        ? notWellFormed(error.extensions.http)
        : (error.extensions?.http ?? (error.path === undefined ? { status: 400, spec: true } : undefined));
  // graphql-armor words its rejections as syntax errors; they are limits, and say which.
  const rejected = LIMIT_REJECTION.exec(error.message);
  const limit = rejected?.[1] ?? rejected?.[2] ?? (error.message === VALIDATION_ABORTED ? MERGING_LIMIT : undefined);
  const status: unknown = typeof http === 'object' && http !== null ? Reflect.get(http, 'status') : undefined;
  const kind: ProblemKind = limit
    ? 'query-too-complex'
    : (YOGA_REFUSALS.find((refusal) => PROBLEM_KINDS[refusal].status === status) ?? 'invalid-input');
  const { code } = PROBLEM_KINDS[kind];
  // Yoga's words name neither the operation nor the cause.
  const message = error.extensions?.code === OPERATION_RESOLUTION_FAILURE ? OPERATION_UNRESOLVED : (limit ?? error.message);
  return new GraphQLError(message, {
    ...placeOf(error),
    extensions: { ...extensions, ...(http ? { http } : {}), code, type: PROBLEM_TYPE_BASE + kind },
  });
}

/**
 * The code yoga gives a request that is not a well-formed GraphQL request: a body that is not JSON,
 * a batch, `query` missing or not a string, `variables` or `extensions` not objects.
 */
const NOT_WELL_FORMED = 'BAD_REQUEST';

/**
 * Such a request is 400 whatever the client accepts (GraphQL over HTTP keeps 200 for well-formed
 * requests whose document cannot run), where yoga lets a missing `query` be 200 to
 * `application/json`, and it says nothing of methods, where yoga adds `Allow: GET, POST` to a 400;
 * a 405 (a mutation sent with GET) keeps its status and its Allow.
 */
function notWellFormed(http: GraphQLHTTPErrorExtensions | undefined): GraphQLHTTPErrorExtensions {
  return http?.status === 405 ? http : { status: http?.status ?? 400 };
}

/** The code yoga gives its refusal of a request whose operation it cannot determine. */
const OPERATION_RESOLUTION_FAILURE = 'OPERATION_RESOLUTION_FAILURE';
const OPERATION_UNRESOLVED =
  'No operation to run: `operationName` must name one of the operations in the document (and is needed when it holds several).';

/** Statuses yoga itself refuses requests with (CSRF prevention, body size, a mutation sent with GET) besides plain input errors. */
const YOGA_REFUSALS = ['forbidden', 'payload-too-large', 'method-not-allowed'] as const satisfies readonly ProblemKind[];

// graphql-js's own bound on introspection (lists of types within types …) is such a limit too, and
// so is its bound on the work of checking that repeated fields merge, which it words as nothing.
const LIMIT_REJECTION =
  /^(?:Syntax Error: ((?:Query depth|Aliases|Token|Directives) limit of \d+ exceeded.*)|(Maximum introspection depth exceeded))$/;
const MERGING_LIMIT =
  'Validation limit exceeded: the document repeats fields or fragments more often than can be checked; select each field once.';

/**
 * Validation errors bypass masking in yoga; this gives them the same code as every other input error,
 * and names the field of a value a scalar refused. In production they suggest no names.
 */
export function useValidationErrorCodes(production: boolean): ServerPlugin {
  const told = production ? withoutSuggestions : (error: GraphQLError) => error;
  return {
    onValidate:
      ({ params }) =>
      ({ result, setResult }) => {
        if (result.length === 0) return;
        // envelop types the validate function's parameters loosely; yoga validates a parsed document.
        // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion
        const document = params.documentAST as DocumentNode;
        setResult(
          result.map((error: Error) => (error instanceof GraphQLError ? asRequestError(namedLiteralError(told(error), document)) : error)),
        );
      },
  };
}

/** Line breaks as GraphQL counts lines (spec §2.1.3), which graphql-js's `getLocation` follows. */
const LINE_BREAK = /\r\n|[\n\r]/g;

/** The offset in `body` of a line and column counted as graphql-js counts them. */
function offsetOf(body: string, { line, column }: SourceLocation): number {
  let lineStart = 0;
  LINE_BREAK.lastIndex = 0;
  for (let at = 1; at < line; at++) {
    const found = LINE_BREAK.exec(body);
    if (!found) break;
    lineStart = found.index + found[0].length;
  }
  return lineStart + column - 1;
}

function locatedIn(error: GraphQLError, source: Source): GraphQLError {
  return new GraphQLError(error.message, {
    source,
    positions: error.locations!.map((location) => offsetOf(source.body, location)),
    path: error.path,
    originalError: error.originalError,
    extensions: error.extensions,
  });
}

/**
 * graphql-jit's errors carry their \`locations\` alone, without the nodes or source graphql-js works
 * them out from, and yoga remakes every error from those: where in the document an error arose
 * would be lost. Each gets its positions in the document's source instead.
 */
export function useErrorLocations(): ServerPlugin {
  return {
    onExecute: ({ args }) => ({
      onExecuteDone: ({ result, setResult }) => {
        if (!('errors' in result) || !result.errors?.length) return;
        const source = executionArgs(args).document.loc?.source;
        if (!source) return;
        const errors: readonly unknown[] = result.errors;
        setResult({
          ...result,
          errors: errors.map((error) =>
            error instanceof GraphQLError && error.locations?.length && !error.source && !error.nodes ? locatedIn(error, source) : error,
          ),
        });
      },
    }),
  };
}

/**
 * A request denied everything it asked for gets the HTTP status of the denial (401 when it lacked a
 * user token, else 403), as a client expects of a request that could not run at all, and no `data`;
 * a denial beside data stays a field error in a 200.
 */
export function useWholeRequestDenials(): ServerPlugin {
  return {
    onExecute: ({ args }) => ({
      onExecuteDone: ({ result, setResult }) => {
        if (!('errors' in result)) return;
        // Envelop types results loosely; execution's errors are GraphQLErrors, and anything else is left be.
        const found: readonly unknown[] = result.errors ?? [];
        if (found.length === 0 || !found.every((error): error is GraphQLError => error instanceof GraphQLError)) return;
        // Nothing ran when every root field was refused itself: a field that was allowed ran, though
        // it answered null (no such user) or a field below it was refused, and its answer stands.
        const { document, operationName } = executionArgs(args);
        const keys = rootFields(document, operationName)?.fields.map((field) => (field.alias ?? field.name).value) ?? [];
        const data: unknown = result.data;
        const nothingRan =
          keys.length > 0 &&
          keys.every((key) => found.some((error) => error.path?.length === 1 && error.path[0] === key)) &&
          (data == null || (typeof data === 'object' && keys.every((key) => Reflect.get(data, key) === null)));
        const kinds = found.map((error) => domainErrorOf(error));
        const denied = kinds.every((kind) => kind instanceof ForbiddenError || kind instanceof UnauthenticatedError);
        if (!nothingRan || !denied) return;
        const kind: ProblemKind = kinds.every((each) => each instanceof UnauthenticatedError) ? 'unauthenticated' : 'forbidden';
        const http = {
          status: PROBLEM_KINDS[kind].status,
          ...(kind === 'unauthenticated' ? { headers: { 'www-authenticate': BEARER_CHALLENGE } } : {}),
        };
        const errors = found.map(
          (error) =>
            new GraphQLError(error.message, {
              ...placeOf(error),
              originalError: error.originalError,
              extensions: { ...error.extensions, http },
            }),
        );
        // No `data` entry: GraphQL over HTTP allows a status other than 2xx only for an answer
        // without one, and nothing of the request ran.
        const { data: _nothing, ...rest } = result;
        setResult({ ...rest, errors });
      },
    }),
  };
}
