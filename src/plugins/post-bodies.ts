// GraphQL POST bodies, read as they were sent. A body whose bytes are not UTF-8 is refused, where
// yoga's reading would make them U+FFFD and the operation would store that; so is a form body whose
// percent-escapes do not decode to UTF-8. JSON bodies are read with each number's own text at hand
// (http/json-numbers.ts): yoga's parser reads them with JSON.parse, which makes
// `1.0000000000000000001` a 1 that the operation then runs with. What yoga checks of a body is
// checked here the same way, in its words.
import { createGraphQLError } from '@graphql-tools/utils';
import type { GraphQLParams } from 'graphql-yoga';
import { utf8Of } from '../http/body-encoding.ts';
import { inexactDetail, inexactFieldError, parseJson } from '../http/json-numbers.ts';
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

/** The body as text, once its bytes are known to be UTF-8. */
const utf8Text = (request: Request): Promise<string> =>
  request.arrayBuffer().then((bytes) => {
    const text = utf8Of(bytes);
    if (text === undefined) throw badRequest('POST body is not valid UTF-8.', { status: 400 });
    return text;
  });

/** As yoga's parser does, without an async function's promises of its own. */
const parseJsonBody = (request: Request): Promise<GraphQLParams> => utf8Text(request).then(paramsOf);

const FORM = 'application/x-www-form-urlencoded';

/** A form's escapes must decode to UTF-8 too: URLSearchParams makes `%E9` a U+FFFD. */
function checkEscapes(form: string): void {
  try {
    decodeURIComponent(form.replaceAll('+', ' '));
  } catch {
    throw badRequest('POST body holds a percent-escape that is not UTF-8.', { status: 400 });
  }
}

function paramsOf(text: string): GraphQLParams {
  let parsed: ReturnType<typeof parseJson>;
  try {
    parsed = parseJson(text);
  } catch {
    throw badRequest('POST body sent invalid JSON.', { status: 400, spec: true });
  }
  if (parsed.inexact) {
    // One in the variables is named as a variable its type refuses is (graphql/variable-errors.ts).
    const named = inexactFieldError(parsed.inexact, ['variables']);
    const errors = named ? [named] : undefined;
    throw createGraphQLError(`The body holds ${inexactDetail(parsed.inexact)}.`, {
      extensions: { http: { status: 400 }, code: 'BAD_REQUEST', ...(errors ? { errors } : {}) },
    });
  }
  const body = parsed.value;
  if (body === null || typeof body !== 'object') {
    throw badRequest(`POST body is expected to be object but received ${body === null ? 'null' : typeof body}`, { status: 400 });
  }
  // An object, as yoga takes it: its fields are checked by yoga next, as they are of its own parse.
  return body as GraphQLParams;
}

export function usePostBodies(): ServerPlugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      if (!requestParser || request.method !== 'POST') return;
      if (isJsonPost(request)) {
        setRequestParser(parseJsonBody);
        return;
      }
      const form = request.headers.get('content-type')?.startsWith(FORM) === true;
      // Yoga's parser reads the body again, from a request of its own: a body is read once, and a
      // request that came with the key in its URL is a copy whose body cannot be read twice.
      setRequestParser((request) =>
        utf8Text(request).then((text) => {
          if (form) checkEscapes(text);
          return requestParser(new fetchAPI.Request(request.url, { method: 'POST', headers: request.headers, body: text }));
        }),
      );
    },
  };
}
