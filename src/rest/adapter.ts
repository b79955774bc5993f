// The one adapter between HTTP and GraphQL for the REST routes. Each route's operation is built once
// from the REST view of the schema by SOFA's operation builder (every scalar field of the resource)
// and run through yoga's enveloped executor, so a REST call passes the same plugins (keys, limits,
// usage, masking) and resolvers as the GraphQL query behind it, without a second HTTP round inside
// the server. The adapter gives the routes exact HTTP semantics: 404/405 for unknown paths and
// methods, 413/415 for bodies, the JSON body as the mutation's `input`, strict parameters, 201 with
// Location, 204 without a body, 404 instead of `200 null`, and Problem Details for every error.
import { STATUS_CODES } from 'node:http';
import { buildOperationNodeForField } from '@graphql-tools/utils';
import { Kind, assertSchema, getNamedType, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import type { YogaServer } from 'graphql-yoga';
import { createSofa } from 'sofa-api';
import { problem, type FieldError, type Problem } from '../errors.ts';
import { logLevelOf, maskError } from '../plugins/error-masking.ts';
import { coercedVariables } from '../plugins/variables.ts';
import { BEARER_CHALLENGE } from '../services/request-auth.ts';
import type { Logger } from '../log.ts';
import { GRAPHQL_PATH } from '../paths.ts';
import { allowHeader } from '../refusals.ts';
import { RequestProblem, problemFromGraphQLErrors, problemResponse } from './problem-details.ts';
import { inputFor, settableFields, unexpectedBody, type Settable } from './request-body.ts';
import { restSchema } from './rest-schema.ts';
import {
  PARAMETER_IDS,
  ROUTES,
  matchRoute,
  queryParameters,
  restMethods,
  restNames,
  routeField,
  routeRoot,
  type RestRoute,
} from './routes.ts';
import { idError } from '../services/validation.ts';
import { isSafeMethod } from '../http/methods.ts';
import { fieldErrorsOfCoercion } from './input-errors.ts';
import { integerRange, parameterWords } from './openapi.ts';
import { CURSOR_REFUSAL, isCursorShaped } from '../pagination/cursor.ts';
import { requestContext } from '../request-context.ts';
import type { ServerContext, ServerPlugin } from '../plugins/server-context.ts';

const WHOLE_NUMBER = /^-?\d{1,10}$/;

/**
 * The query string as the field's arguments: every parameter known, given once and well-typed. Every
 * problem is gathered (the caller reports them with the body's, at once); a parameter with one is left out.
 */
function queryVariables(schema: GraphQLSchema, route: RestRoute, url: URL, variables: Record<string, unknown>): FieldError[] {
  if (url.search === '') return [];
  const errors: FieldError[] = [];
  const allowed = new Map(queryParameters(schema, route).map(({ name, argument }) => [name, argument]));
  for (const name of new Set(url.searchParams.keys())) {
    const arg = allowed.get(name);
    const values = url.searchParams.getAll(name);
    const value = values[0]!;
    if (!arg) {
      errors.push({
        field: name,
        message: route.body ? 'query parameters are not accepted here; send fields in the body' : 'is not a parameter of this operation',
      });
    } else if (values.length > 1) errors.push({ field: name, message: 'must be given once' });
    // An empty value would silently mean "not given".
    else if (value === '') errors.push({ field: name, message: 'must not be empty; leave the parameter out instead' });
    else if (getNamedType(arg.type).name === 'Int') {
      const { minimum = -(2 ** 31), maximum = 2 ** 31 - 1 } = integerRange(undefined, name);
      if (!WHOLE_NUMBER.test(value) || Number(value) < minimum || Number(value) > maximum) {
        errors.push({ field: name, message: `must be a whole number from ${minimum} to ${maximum}` });
      } else variables[arg.name] = Number(value);
    } else {
      const error = textError(name, value);
      if (error) errors.push(error);
      else variables[arg.name] = value;
    }
  }
  return errors;
}

/**
 * What the OpenAPI document refuses in a text parameter (an id of another kind, a word outside its
 * list, what cannot be a cursor), said before the operation runs, so that it costs nothing of the
 * rate limit budget. What needs the data (a cursor's signature and list) is checked as it runs.
 */
function textError(name: string, value: string): FieldError | undefined {
  const kind = PARAMETER_IDS[name];
  if (kind) return idError(kind, name, value);
  if (name === 'cursor') return isCursorShaped(value) ? undefined : { field: name, message: CURSOR_REFUSAL };
  const words = parameterWords(name);
  return words && !words.includes(value) ? { field: name, message: `must be one of ${words.join(', ')}` } : undefined;
}

/** The input type a route's body is coerced to, for the ranges its errors state. */
function inputTypeOf(schema: GraphQLSchema, route: RestRoute): string | undefined {
  const input = routeField(schema, route).args.find((arg) => arg.name === 'input');
  return input ? getNamedType(input.type).name : undefined;
}

/** A route's operation, built once per schema. */
interface Operation {
  document: DocumentNode;
  name: string | undefined;
  /** The root field whose value is the response body. */
  field: string;
  /** What the route's body may set. */
  settable: Settable;
}

/** Each route's operation, as SOFA builds it: every scalar field of the resource, one level deep. */
function operationsOf(schema: GraphQLSchema): Map<RestRoute, Operation> {
  const sofa = createSofa({ schema, basePath: '' });
  return new Map(
    ROUTES.map((route) => {
      const { operation, fieldName: field } = routeRoot(route);
      const node = buildOperationNodeForField({
        kind: operation,
        schema: sofa.schema,
        field,
        models: sofa.models,
        ignore: sofa.ignore,
        circularReferenceDepth: sofa.depthLimit,
      });
      const settable = settableFields(schema, route);
      return [route, { document: { kind: Kind.DOCUMENT, definitions: [node] }, name: node.name?.value, field, settable }];
    }),
  );
}

function withRestNames(body: Problem, route: RestRoute, instance: string): Problem {
  const names = restNames(route);
  // The root field behind the route (`Query.user`, in a scope refusal) is the route itself on REST.
  const field = new RegExp(`\\b(?:Query|Mutation)\\.${routeRoot(route).fieldName}\\b`, 'g');
  // Messages may mention other arguments; rename the camelCase ones (plain words like "id" stay).
  const inText = (text: string) =>
    text.replace(field, `${route.method} ${route.path}`).replace(/\b[a-z]+[A-Z]\w*\b/g, (word) => names.get(word) ?? word);
  const rename = (error: FieldError) => ({ field: names.get(error.field) ?? error.field, message: inText(error.message) });
  const errors = body.errors?.map(rename);
  const detail = errors ? errors.map((e) => `${e.field}: ${e.message}`).join('; ') : inText(body.detail);
  return { ...body, detail, instance, ...(errors ? { errors } : {}) };
}

export function useRest({ logger }: { logger: Logger }): ServerPlugin {
  let schema: GraphQLSchema | undefined;
  let operations = new Map<RestRoute, Operation>();
  let getEnveloped: YogaServer<ServerContext, object>['getEnveloped'] | undefined;

  /** Runs a route's operation through the same envelop as GraphQL requests, plugins and masking included. */
  async function run(operation: Operation, variableValues: Record<string, unknown>, serverContext: ServerContext, request: Request) {
    const context = Object.assign(serverContext, { request });
    const enveloped = getEnveloped!(context);
    const contextValue = await enveloped.contextFactory(context);
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- envelop types execute `any`; without @defer or @stream it resolves to one result
    return (await enveloped.execute({
      schema: schema!,
      document: operation.document,
      contextValue,
      variableValues,
      operationName: operation.name,
    })) as ExecutionResult;
  }

  return {
    onYogaInit({ yoga }) {
      getEnveloped = yoga.getEnveloped;
    },
    onSchemaChange(payload) {
      schema = restSchema(assertSchema(payload.schema));
      operations = operationsOf(schema);
    },
    onRequest({ request, endResponse, serverContext, fetchAPI }) {
      // From the request, not the payload's URL: an earlier plugin may have rewritten the request.
      const url = new URL(request.url);
      if (url.pathname === GRAPHQL_PATH) return;
      const method = request.method === 'HEAD' ? 'GET' : request.method;
      const instance = url.pathname;
      const match = matchRoute(method, url.pathname);
      if (!match) {
        endResponse(problemResponse({ ...problem('not-found', `Nothing is at ${instance}.`), instance }));
        return;
      }
      if ('allow' in match) {
        const methods = restMethods(url.pathname)!;
        endResponse(
          problemResponse(
            { ...problem('method-not-allowed', `${request.method} is not allowed here; use ${methods.join(', ')}.`), instance },
            { allow: allowHeader(methods) },
          ),
        );
        return;
      }
      const { route, params, malformed } = match;
      const labels = requestContext.getStore();
      if (labels) Object.assign(labels, { face: 'rest', operation: route.operationId, route: route.path });
      const answer = async () => {
        if (malformed.length > 0) {
          throw RequestProblem.invalid(
            malformed.map((name) => ({ field: name, message: 'holds a malformed percent-escape; encode % as %25' })),
          );
        }
        const variables: Record<string, unknown> = {};
        // Every problem with the parameters and the body, at once: unknown or malformed parameters and
        // fields, then what GraphQL's coercion finds in the rest (types, required fields, null).
        const errors = queryVariables(schema!, route, url, variables);
        for (const [name, value] of Object.entries(params)) {
          const kind = PARAMETER_IDS[name];
          const error = kind && idError(kind, name, value);
          if (error) errors.push(error);
        }
        for (const [rest, argument] of Object.entries(route.rename ?? {})) if (rest in params) variables[argument] = params[rest];
        const operation = operations.get(route)!;
        if (route.body) {
          const body = await inputFor(operation.settable, route, request, params);
          variables.input = body.input;
          errors.push(...body.errors);
        } else if (!isSafeMethod(request.method)) {
          const error = await unexpectedBody(request);
          if (error) errors.push(error);
        }
        // Coerced here once; execution finds the result (plugins/variables.ts).
        const coerced = coercedVariables({
          schema: schema!,
          document: operation.document,
          operationName: operation.name,
          variableValues: variables,
        });
        // Those name fields as the client sent them; coercion's name arguments, which get their REST names.
        if ('errors' in coerced) {
          const named = withRestNames(
            problem('invalid-input', '', fieldErrorsOfCoercion(schema!, coerced.errors, inputTypeOf(schema!, route))),
            route,
            instance,
          );
          errors.push(...(named.errors ?? []));
        }
        if (errors.length > 0) throw RequestProblem.invalid(errors);
        let result: ExecutionResult;
        try {
          result = await run(operation, variables, serverContext, request);
        } catch (error) {
          // Errors thrown at execution start (rate and cost limits, idempotency keys) come unmasked;
          // one that is not a client's doing is logged here, since nothing else saw it.
          if (logLevelOf(error) === 'error') logger.error({ err: error }, 'unexpected error starting a REST route');
          result = { errors: [maskError(error)] };
        }
        return respond(route, result, operation.field, instance, request.method === 'HEAD', fetchAPI.Response, logger);
      };
      return answer().then(endResponse, (error: unknown) => {
        // These problems already name parameters and body fields as the client sent them.
        if (!(error instanceof RequestProblem)) throw error;
        endResponse(problemResponse({ ...error.problem, instance }, error.headers));
      });
    },
  };
}

/** A created resource: it has an id, which its Location names. */
function isCreated(data: object): data is { id: string } {
  return typeof Reflect.get(data, 'id') === 'string';
}

function respond(
  route: RestRoute,
  result: ExecutionResult,
  field: string,
  instance: string,
  head: boolean,
  ResponseClass: typeof Response,
  logger: Logger,
): Response {
  if (result.errors?.length) {
    const errors = result.errors;
    // Execution cut short by the deadline or a departed client is no failure, and nobody waits for it.
    const cutShort = errors.some((e) => (e.originalError ?? e).name === 'AbortError');
    const body = withRestNames(problemFromGraphQLErrors(errors), route, instance);
    if (body.status === 500 && !cutShort && !errors.every((e) => e.extensions?.code === 'INTERNAL')) {
      logger.error({ err: errors[0] }, 'unexpected error in a REST route');
    }
    // Past the API key check, a 401 means the action needs a user token.
    return problemResponse(body, body.status === 401 ? { 'www-authenticate': BEARER_CHALLENGE } : {});
  }
  if (route.status === 204) return new ResponseClass(null, { status: 204, statusText: STATUS_CODES[204] });
  const data = result.data?.[field];
  // A missing resource resolves to null.
  if (typeof data !== 'object' || data === null)
    return problemResponse({ ...problem('not-found', `Nothing is at ${instance}.`), instance });
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
  if (route.location && isCreated(data)) headers.location = route.location(data);
  const text = JSON.stringify(data);
  // HEAD says how long the GET's body is (RFC 9110 §9.3.2), without sending it.
  if (head) headers['content-length'] = String(Buffer.byteLength(text));
  return new ResponseClass(head ? null : text, { status: route.status, statusText: STATUS_CODES[route.status], headers });
}
