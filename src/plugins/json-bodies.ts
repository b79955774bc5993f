// GraphQL POST bodies read with each number's own text at hand (http/json-numbers.ts): yoga's parser
// reads them with JSON.parse, which makes `1.0000000000000000001` a 1 that the operation then runs
// with. What yoga checks of a body is checked here the same way, in its words.
import { createGraphQLError } from '@graphql-tools/utils';
import type { GraphQLParams } from 'graphql-yoga';
import { inexactDetail, parseJson } from '../http/json-numbers.ts';
import type { ServerPlugin } from './server-context.ts';

/** The media types yoga reads as a JSON body (its isPOSTJsonRequest). */
const JSON_TYPES = ['application/json', 'application/graphql+json'];

function isJsonPost(request: Request): boolean {
  if (request.method !== 'POST') return false;
  const sent = request.headers.get('content-type');
  if (sent === 'application/json') return true;
  const type = sent?.split(',')[0];
  return type !== undefined && JSON_TYPES.some((json) => type === json || type.startsWith(`${json};`));
}

const badRequest = (message: string, http: { status: 400; spec?: true }) =>
  createGraphQLError(message, { extensions: { http, code: 'BAD_REQUEST' } });

/** As yoga's parser does, without an async function's promises of its own. */
const parseBody = (request: Request): Promise<GraphQLParams> => request.text().then(paramsOf);

function paramsOf(text: string): GraphQLParams {
  let parsed: ReturnType<typeof parseJson>;
  try {
    parsed = parseJson(text);
  } catch {
    throw badRequest('POST body sent invalid JSON.', { status: 400, spec: true });
  }
  if (parsed.inexact) throw badRequest(`The body holds ${inexactDetail(parsed.inexact)}.`, { status: 400 });
  const body = parsed.value;
  if (body === null || typeof body !== 'object') {
    throw badRequest(`POST body is expected to be object but received ${body === null ? 'null' : typeof body}`, { status: 400 });
  }
  // An object, as yoga takes it: its fields are checked by yoga next, as they are of its own parse.
  return body as GraphQLParams;
}

export function useJsonBodies(): ServerPlugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser }) {
      if (requestParser && isJsonPost(request)) setRequestParser(parseBody);
    },
  };
}
