// The one adapter between HTTP and SOFA. SOFA turns a route into a GraphQL operation and runs it
// through yoga's plugins; this adapter gives the routes exact HTTP semantics that SOFA lacks:
// 404/405 for unknown paths and methods, 413/415 for bodies, the JSON body as the mutation's
// `input`, strict parameters, 201 with Location, 204 without a body, 404 instead of `200 null`,
// and Problem Details for every error.
import { STATUS_CODES } from 'node:http';
import { useSofa } from '@graphql-yoga/plugin-sofa';
import { GraphQLError, getNamedType, type GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { FieldError } from '../errors.ts';
import { BEARER_CHALLENGE } from '../graphql/acts-for.ts';
import { maskError } from '../graphql/errors.ts';
import type { Logger } from '../log.ts';
import { RequestProblem, problem, problemFromGraphQLErrors, problemResponse, type Problem } from './problem-details.ts';
import { inputFor } from './request-body.ts';
import { restSchema } from './rest-schema.ts';
import { ROUTES, matchRoute, queryParameters, restNames, sofaPath, type RestRoute } from './routes.ts';

const INT32 = /^-?\d{1,10}$/;

const invalid = (field: string, message: string) => RequestProblem.invalid([{ field, message }]);

/** The query string in the field's argument names, with every parameter known, given once and well-typed. */
function queryFor(schema: GraphQLSchema, route: RestRoute, url: URL): URLSearchParams {
  const allowed = new Map(queryParameters(schema, route).map(({ name, argument }) => [name, argument]));
  const query = new URLSearchParams();
  for (const name of new Set(url.searchParams.keys())) {
    const arg = allowed.get(name);
    if (!arg)
      throw invalid(
        name,
        route.body ? 'query parameters are not accepted here; send fields in the body' : 'is not a parameter of this operation',
      );
    const values = url.searchParams.getAll(name);
    if (values.length > 1) throw invalid(name, 'must be given once');
    const value = values[0]!;
    // SOFA drops empty values, which would silently mean "not given".
    if (value === '') throw invalid(name, 'must not be empty; leave the parameter out instead');
    if (getNamedType(arg.type).name === 'Int' && (!INT32.test(value) || Math.abs(Number(value)) > 2 ** 31 - 1)) {
      throw invalid(name, 'must be an integer');
    }
    query.set(arg.name, value);
  }
  return query;
}

function withRestNames(body: Problem, route: RestRoute, instance: string): Problem {
  const names = restNames(route);
  // Messages may mention other arguments; rename the camelCase ones (plain words like "id" stay).
  const inText = (text: string) => text.replace(/\b[a-z]+[A-Z]\w*\b/g, (word) => names.get(word) ?? word);
  const rename = (error: FieldError) => ({ field: names.get(error.field) ?? error.field, message: inText(error.message) });
  const errors = body.errors?.map(rename);
  const detail = errors ? errors.map((e) => `${e.field}: ${e.message}`).join('; ') : body.detail;
  return { ...body, detail, instance, ...(errors ? { errors } : {}) };
}

export function useRest({ logger }: { logger: Logger }): Plugin {
  let schema: GraphQLSchema | undefined;
  const sofa = useSofa({
    basePath: '',
    routes: Object.fromEntries(
      ROUTES.map((route) => [route.field, { method: route.method, path: sofaPath(route), responseStatus: route.status }]),
    ),
    errorHandler: (errors) => {
      // Errors thrown by plugins at execution start (rate and cost limits) reach SOFA unmasked.
      const body = problemFromGraphQLErrors(errors.map((error) => (error instanceof GraphQLError ? error : maskError(error))));
      // Errors masked by yoga were logged there; execution cut short by the deadline or a departed
      // client is no failure; anything else failed inside SOFA itself.
      const cutShort = errors.some((e) => (e as Error).name === 'AbortError');
      if (
        body.status === 500 &&
        !cutShort &&
        !errors.every((e) => (e as { extensions?: { code?: string } }).extensions?.code === 'INTERNAL')
      ) {
        logger.error({ err: errors[0] }, 'unexpected error in a REST route');
      }
      // fets types its own Response; the adapter reads this one back as a plain Fetch Response.
      return problemResponse(body) as never;
    },
  });

  return {
    onYogaInit: (payload) => sofa.onYogaInit?.(payload),
    onSchemaChange: (payload) => {
      schema = restSchema(payload.schema);
      return sofa.onSchemaChange?.({ ...payload, schema });
    },
    async onRequest(payload) {
      const { request, endResponse, fetchAPI } = payload;
      // From the request, not the payload's URL: an earlier plugin may have rewritten the request.
      const url = new URL(request.url);
      if (url.pathname === '/graphql') return;
      const method = request.method === 'HEAD' ? 'GET' : request.method;
      const instance = url.pathname;
      const match = matchRoute(method, url.pathname);
      if (!match) {
        endResponse(problemResponse({ ...problem('not-found', `Nothing is at ${instance}.`), instance }));
        return;
      }
      if ('allow' in match) {
        const allow = [...match.allow, ...(match.allow.includes('GET') ? ['HEAD'] : [])].join(', ');
        endResponse(
          problemResponse(
            { ...problem('method-not-allowed', `${request.method} is not allowed here; use ${allow}.`), instance },
            { allow },
          ),
        );
        return;
      }
      const { route, params, malformed } = match;
      try {
        if (malformed.length > 0) {
          throw RequestProblem.invalid(
            malformed.map((name) => ({ field: name, message: 'holds a malformed percent-escape; encode % as %25' })),
          );
        }
        const query = queryFor(schema!, route, url);
        const target = new URL(url);
        target.search = query.toString();
        const body = route.body ? JSON.stringify({ input: await inputFor(schema!, route, request, params) }) : undefined;
        const headers = new fetchAPI.Headers(request.headers);
        headers.set('content-type', 'application/json');
        headers.delete('content-length');
        // The client's signal goes along, so a request past its deadline stops executing here too.
        const forwarded = new fetchAPI.Request(target.toString(), { method: route.method, headers, body, signal: request.signal });

        let response: Response | undefined;
        await sofa.onRequest?.({ ...payload, request: forwarded, url: target, endResponse: (r: Response) => void (response = r) });
        if (!response) throw new Error(`SOFA did not answer ${route.method} ${route.path}`);
        endResponse(await finish(route, response, instance, request.method === 'HEAD', fetchAPI.Response));
      } catch (error) {
        // These problems already name parameters and body fields as the client sent them.
        if (!(error instanceof RequestProblem)) throw error;
        endResponse(problemResponse({ ...error.problem, instance }, error.headers));
      }
    },
  };
}

async function finish(
  route: RestRoute,
  response: Response,
  instance: string,
  head: boolean,
  ResponseClass: typeof Response,
): Promise<Response> {
  const text = await response.text();
  if (response.status >= 400) {
    const body = withRestNames(JSON.parse(text) as Problem, route, instance);
    // Past the API key check, a 401 means the action needs a user token.
    return problemResponse(body, body.status === 401 ? { 'www-authenticate': BEARER_CHALLENGE } : {});
  }
  if (route.status === 204) return new ResponseClass(null, { status: 204, statusText: STATUS_CODES[204] });
  const data = JSON.parse(text) as { id: string } | null;
  if (data === null) return problemResponse({ ...problem('not-found', `Nothing is at ${instance}.`), instance });
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
  if (route.location) headers.location = route.location(data);
  return new ResponseClass(head ? null : text, { status: route.status, statusText: STATUS_CODES[route.status], headers });
}
