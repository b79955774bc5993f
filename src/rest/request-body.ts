// A REST request body, read and checked before any of it reaches GraphQL: its media type and size,
// that it is a JSON object nested no deeper than a body of ours ever is, and that every member is a
// field the route's input has. Each member is looked up as the string it is, so `__proto__` or
// `constructor` are reported as sent, never resolved against JavaScript's prototypes.
import { getNamedType, getNullableType, isInputObjectType, isListType, type GraphQLSchema } from 'graphql';
import { problem, type FieldError } from '../errors.ts';
import { ACCEPTED_CODINGS, charsetDetail, codingDetail, foreignCharset, foreignCoding, utf8Of } from '../http/body-encoding.ts';
import { inexactDetail, inexactFieldError, parseJson } from '../http/json-numbers.ts';
import { MAX_BODY_BYTES, MAX_BODY_DEPTH } from '../request-limits.ts';
import { RequestProblem } from './problem-details.ts';
import { routeField, type RestRoute } from './routes.ts';

/**
 * How much of a body without a declared length is read past the limit before the 413 is sent:
 * stopping mid-stream tears the connection down before any answer can be written, so a sender of
 * a slightly large body would see a reset instead of the reason. Beyond this, it does.
 */
const MAX_DRAINED_BYTES = 1024 * 1024;

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

async function readBody(request: Request): Promise<Buffer> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  const tooLarge = new RequestProblem(problem('payload-too-large', `The body must be at most ${MAX_BODY_BYTES} bytes.`));
  if (declared > MAX_BODY_BYTES) throw tooLarge;
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- Node's web streams are async iterable; the DOM typings lag
    for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
      else if (size > MAX_DRAINED_BYTES) break;
    }
  }
  if (size > MAX_BODY_BYTES) throw tooLarge;
  return Buffer.concat(chunks);
}

/** The body as text (http/body-encoding.ts); bytes that are not UTF-8 are refused. */
function decodeUtf8(bytes: Uint8Array): string {
  const text = utf8Of(bytes);
  if (text === undefined) throw RequestProblem.invalid([{ field: 'body', message: 'is not valid UTF-8' }]);
  return text;
}

/**
 * How deeply arrays and objects nest in a JSON text, and the first member name an object holds twice,
 * by one pass over it (a text JSON.parse read). JSON.parse keeps the last of a repeated member
 * silently, where a proxy or an audit log reading the first would see another write than the one stored.
 */
function shapeOf(text: string): { depth: number; repeated: string | undefined } {
  let depth = 0;
  let deepest = 0;
  let repeated: string | undefined;
  /** The member names of each open container, innermost last; undefined for an array. */
  const names: (Set<string> | undefined)[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const start = i;
      let escaped = false;
      for (i++; text.charCodeAt(i) !== 0x22; i++) {
        if (text.charCodeAt(i) === 0x5c) {
          escaped = true;
          i++;
        }
      }
      const members = names.at(-1);
      if (members === undefined || repeated !== undefined) continue;
      // A member name is a string followed by a colon.
      let next = i + 1;
      while (/\s/.test(text[next] ?? '')) next++;
      if (text.charCodeAt(next) !== 0x3a) continue;
      const name = escaped ? String(JSON.parse(text.slice(start, i + 1))) : text.slice(start + 1, i);
      if (members.has(name)) repeated = name;
      else members.add(name);
    } else if (c === 0x7b || c === 0x5b) {
      names.push(c === 0x7b ? new Set() : undefined);
      deepest = Math.max(deepest, ++depth);
    } else if (c === 0x7d || c === 0x5d) {
      names.pop();
      depth--;
    }
  }
  return { depth: deepest, repeated };
}

function parse(text: string): Record<string, unknown> {
  let read: ReturnType<typeof parseJson>;
  try {
    read = parseJson(text);
  } catch {
    throw RequestProblem.invalid([{ field: 'body', message: text.trim() === '' ? 'is required' : 'is not valid JSON' }]);
  }
  const { value: parsed, inexact } = read;
  if (inexact) throw RequestProblem.invalid([inexactFieldError(inexact) ?? { field: 'body', message: `is ${inexactDetail(inexact)}` }]);
  const { depth, repeated } = shapeOf(text);
  if (depth > MAX_BODY_DEPTH) {
    throw RequestProblem.invalid([{ field: 'body', message: `is nested ${depth} levels deep; at most ${MAX_BODY_DEPTH} are accepted` }]);
  }
  if (repeated !== undefined) throw RequestProblem.invalid([{ field: repeated, message: 'must be given once' }]);
  if (!isJsonObject(parsed)) throw RequestProblem.invalid([{ field: 'body', message: 'must be a JSON object' }]);
  return parsed;
}

/** The fields a route's body may set, and whether each takes a list. */
export type Settable = ReadonlyMap<string, { list: boolean }>;

/** What a route's body may set: the fields of its mutation's `input` argument. Worked out once per route (adapter.ts). */
export function settableFields(schema: GraphQLSchema, route: RestRoute): Settable {
  const input = routeField(schema, route).args.find((arg) => arg.name === 'input');
  const type = input && getNamedType(input.type);
  const fields = type && isInputObjectType(type) ? Object.values(type.getFields()) : [];
  return new Map(fields.map((field) => [field.name, { list: isListType(getNullableType(field.type)) }]));
}

/**
 * The request body as the mutation's `input`, after checking its media type, size and shape; fields
 * that cannot be set are left out of it and named in `errors`, for the caller to report with the rest.
 */
export async function inputFor(
  settable: Settable,
  route: RestRoute,
  request: Request,
  params: Record<string, string>,
): Promise<{ input: Record<string, unknown>; errors: FieldError[] }> {
  const body = route.body!;
  const bytes = await readBody(request);
  // An optional body of JSON whitespace alone holds no value: as absent as an empty one.
  if (body.optional && bytes.every((byte) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d)) {
    return { input: inputFrom({}, body.fromPath, params), errors: [] };
  }
  const contentType = request.headers.get('content-type');
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase();
  const unsupported = (detail: string, headers: Record<string, string> = {}) =>
    new RequestProblem(problem('unsupported-media-type', detail), {
      ...(route.method === 'PATCH' ? { 'accept-patch': body.mediaTypes.join(', ') } : {}),
      ...headers,
    });
  if (!mediaType || !body.mediaTypes.includes(mediaType)) {
    throw unsupported(`Send the body as ${body.mediaTypes.join(' or ')}${mediaType ? `, not ${mediaType}` : ''}.`);
  }
  const coding = foreignCoding(request.headers.get('content-encoding'));
  if (coding !== undefined) throw unsupported(codingDetail(coding), ACCEPTED_CODINGS);
  const charset = foreignCharset(contentType);
  if (charset !== undefined) throw unsupported(charsetDetail(charset));
  const input = parse(decodeUtf8(bytes));
  const errors: FieldError[] = [];
  for (const name of Object.keys(input)) {
    if (Object.values(body.fromPath ?? {}).includes(name)) {
      errors.push({ field: name, message: 'is not a field that can be set; it comes from the path' });
    } else if (!settable.has(name)) errors.push({ field: name, message: 'is not a field that can be set' });
    // GraphQL would take a single value for a list of one; JSON says which it is, and the document asks for an array.
    else if (settable.get(name)!.list && input[name] !== null && !Array.isArray(input[name])) {
      errors.push({ field: name, message: 'must be an array' });
    } else continue;
    delete input[name];
  }
  return { input: inputFrom(input, body.fromPath, params), errors };
}

/**
 * For a write that takes no body (a DELETE, a re-send): what is wrong with the body sent, if one was.
 * Nothing is, for none, an empty one or `{}`, which some clients send by habit; anything else would
 * otherwise be silently ignored, as unknown fields never are.
 */
export async function unexpectedBody(request: Request): Promise<FieldError | undefined> {
  if (request.headers.get('content-length') === null && request.headers.get('transfer-encoding') === null) return undefined;
  const text = decodeUtf8(await readBody(request)).trim();
  return text === '' || text === '{}' ? undefined : { field: 'body', message: 'must be empty: this operation takes no body' };
}

/** The body's fields with the path parameters `fromPath` copies in (REST name → field). */
function inputFrom(
  input: Record<string, unknown>,
  fromPath: Record<string, string> | undefined,
  params: Record<string, string>,
): Record<string, unknown> {
  for (const [rest, field] of Object.entries(fromPath ?? {})) input[field] = params[rest];
  return input;
}
