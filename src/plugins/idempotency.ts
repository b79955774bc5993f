// Idempotency keys on both faces. A request that may write (an unsafe REST method, a GraphQL POST)
// and carries `Idempotency-Key` is marked when it arrives; at execution start, where a REST route and
// a GraphQL mutation meet, its key is checked and claimed (services/idempotency.ts) and the operation
// runs inside the key's transaction; when the response exists, its outcome is recorded and committed
// with the write, and only then is it sent. A retry is answered from the record. Queries ignore the
// header. It runs after rate limiting (a refused request is no processing and leaves no record) and
// before usage counting (a replay is not a second use).
import { STATUS_CODES } from 'node:http';
import { GraphQLError, OperationTypeNode, print, type DocumentNode, type ExecutionResult } from 'graphql';
import type { EntityManager } from '../db/orm.ts';
import { crashAt, isArmed } from '../failpoints.ts';
import { INTERNAL_DETAIL, ValidationError, kindOfCode, type ProblemKind } from '../errors.ts';
import { isOneOf, messageOf } from '../guards.ts';
import { accepts } from '../http/accept.ts';
import { isSafeMethod } from '../http/methods.ts';
import type { Logger } from '../log.ts';
import { faceOf, refuse, type Face, type Refusal } from '../refusals.ts';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENT_REPLAYED_HEADER,
  IdempotentWrite,
  KEY_REFUSALS,
  NOT_KEPT,
  RECORDED_HEADERS,
  checkIdempotencyKey,
  fingerprintOf,
  isKept,
  type Recorded,
  type RecordedOutcome,
} from '../services/idempotency.ts';
import { maskError } from './error-masking.ts';
import type { SecretBox } from '../webhooks/secret-box.ts';
import { SIGNING_SECRET_PREFIX } from '../webhooks/signing-secret.ts';
import { rootFields } from './root-fields.ts';
import { reportsNothingDone } from './document-transaction.ts';
import { executionArgs, type ServerPlugin } from './server-context.ts';

type ResponsePayload = Parameters<NonNullable<ServerPlugin['onResponse']>>[0];

/** A request that may write, from its arrival to its response. */
export interface IdempotencyState {
  /** The header as sent; null when absent. */
  header: string | null;
  /** How many times the header was sent. */
  sent: number;
  /** The key, once checked on a mutation (useIdempotencyKeyCheck); a write with one is claimed under it. */
  key?: string;
  face: Face;
  method: string;
  path: string;
  /**
   * Runs once the request is answered with its own outcome, not a recorded one nor a refusal of its
   * key: what must not happen twice for one write (usage counting).
   */
  onOwnOutcome?: () => void;
  /** The claimed key's open transaction, which the operation's writes join. */
  write?: IdempotentWrite;
  /** The API key and idempotency key the write is claimed under: what a sealed answer is bound to. */
  sealedFor?: string;
  result?: ExecutionResult;
}

export interface IdempotencyOptions {
  /**
   * The ORM's entity manager: a claimed key's write opens its transaction there, and forks a unit of
   * work from it only if the operation needs one.
   */
  em: EntityManager;
  ttlMs: number;
  logger: Logger;
  /** Seals a recorded answer that holds a webhook signing secret, which is never stored in plain text. */
  box: SecretBox;
}

/**
 * A refusal of the request itself, before anything ran: GraphQL over HTTP answers it with a 4xx
 * status (there is no `data`), as it does a document that does not validate.
 */
function refusedBeforeRunning(error: unknown): GraphQLError {
  return new GraphQLError(messageOf(error), {
    originalError: error instanceof Error ? error : undefined,
    extensions: { http: { status: 400 } },
  });
}

/** The document as the client sent it, where the parser kept it. */
function sourceOf(document: DocumentNode): string {
  return document.loc?.source.body ?? print(document);
}

/** An error as the client sees it: its problem kind, and what it says. */
function refusalOf(error: unknown): { kind: ProblemKind; detail: string } {
  const masked = maskError(error);
  const kind = kindOfCode(String(masked.extensions.code)) ?? 'internal';
  return { kind, detail: kind === 'internal' ? INTERNAL_DETAIL : masked.message };
}

/** Whether the answer reports nothing done: a refusal, or no root field with a value. */
function wroteNothing(status: number, result: ExecutionResult | undefined): boolean {
  return status >= 400 || reportsNothingDone(result);
}

/**
 * The headers of the request's own answer that any answer to it keeps (rate limit fields, CORS, the
 * request id), not those describing its body or outcome: when the key was refused, that answer is
 * the refused claim's error, whose Retry-After belongs to the 409 alone.
 */
function ownHeaders(response: Response): Record<string, string> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, written) => {
    // Yoga's headers keep the letter case they were set in (`Transfer-Encoding`).
    const name = written.toLowerCase();
    if (!isOneOf(BODY_HEADERS, name) && name !== 'retry-after' && !isOneOf(RECORDED_HEADERS, name)) headers[name] = value;
  });
  return headers;
}

/**
 * Headers that describe how the operation's own body travelled (a stream of events, in chunks), not
 * the answer sent in its place, nor that body once read whole: kept, `Transfer-Encoding: chunked`
 * beside the Content-Length a whole body gets was a response no HTTP client reads. `Cache-Control`
 * goes too: every answer then forbids storing (server.ts), where a stream's said `no-cache`; and a
 * stream's `Connection: keep-alive`, which kept open a connection its client asked to close.
 */
const BODY_HEADERS = ['content-length', 'transfer-encoding', 'content-encoding', 'cache-control', 'connection'] as const;

/** The operation's own answer, its body read whole. */
function wholeAnswer(response: Response, body: string | null, ResponseClass: typeof Response): Response {
  const headers = new Headers(response.headers);
  // How the stream travelled: the whole body has a length of its own, and the connection is the client's to keep or close.
  for (const name of ['content-length', 'transfer-encoding', 'connection']) headers.delete(name);
  return new ResponseClass(body, { status: response.status, statusText: response.statusText, headers });
}

/**
 * A recorded answer; on GraphQL, whose answers are negotiated, only in a media type the retry's
 * Accept allows, else a refusal naming that type: the record holds the first request's bytes (a
 * stream of events, say), which a client that asked for another type cannot read. REST answers in
 * JSON whatever Accept says.
 */
function replayedIfAcceptable(
  face: Face,
  request: Request,
  response: Response,
  outcome: RecordedOutcome,
  ResponseClass: typeof Response,
): Response {
  const recorded = outcome.headers['content-type']?.split(';')[0]?.trim();
  if (face === 'rest' || recorded === undefined || accepts(request.headers.get('accept'), recorded))
    return replayed(response, outcome, ResponseClass);
  return refusedAnswer(request, response, {
    kind: 'not-acceptable',
    detail: `The outcome of this Idempotency-Key was recorded as ${recorded}, which this request's Accept does not allow; retry with an Accept that does.`,
  });
}

function replayed(response: Response, outcome: RecordedOutcome, ResponseClass: typeof Response): Response {
  const headers = { ...ownHeaders(response), ...outcome.headers, [IDEMPOTENT_REPLAYED_HEADER.toLowerCase()]: 'true' };
  return new ResponseClass(outcome.body, { status: outcome.status, statusText: STATUS_CODES[outcome.status], headers });
}

/** How a sealed answer starts in the record; a recorded answer is otherwise JSON. */
const SEALED = 'sealed:';

/**
 * The answer as the record keeps it: one that shows a webhook signing secret (an endpoint's creation
 * or rotation) sealed like the secret itself, bound to its keys, so the secret is never at rest in
 * plain text; a retry whose first answer was lost still gets it, opened, byte for byte.
 */
function storedBody(body: string | null, box: SecretBox, sealedFor: string): string | null {
  return body?.includes(SIGNING_SECRET_PREFIX) ? SEALED + box.seal(body, sealedFor) : body;
}

/** A recorded outcome as answered: its body opened if it was sealed. */
function answered(outcome: RecordedOutcome, box: SecretBox, sealedFor: string): RecordedOutcome {
  const { body } = outcome;
  return body?.startsWith(SEALED) ? { ...outcome, body: box.open(body.slice(SEALED.length), sealedFor) } : outcome;
}

/** A refusal in place of the request's answer, keeping that answer's own headers. */
function refusedAnswer(request: Request, response: Response, refusal: Refusal): Response {
  const answer = refuse(request, refusal);
  for (const [name, value] of Object.entries(ownHeaders(response))) if (!answer.headers.has(name)) answer.headers.set(name, value);
  return answer;
}

/**
 * The header of a write, checked before the rate limit weighs it, so that a malformed or missing key
 * costs no unit of the budget: it is refused before anything runs. The key it holds goes on in the
 * request's state, for useIdempotency, after the rate limit, to claim. Only mutations carry one; a
 * query ignores the header, whatever it holds.
 */
export function useIdempotencyKeyCheck(required: boolean): ServerPlugin {
  return {
    onRequest({ request, url, serverContext }) {
      if (isSafeMethod(request.method)) return;
      const header = request.headers.get(IDEMPOTENCY_KEY_HEADER);
      if (header === null && !required) return;
      // Headers sent twice reach the request joined by a comma, which a key may hold.
      const sent = serverContext.req.headersDistinct[IDEMPOTENCY_KEY_HEADER.toLowerCase()]?.length ?? 0;
      serverContext.idempotency = { header, sent, face: faceOf(url.pathname), method: request.method, path: url.pathname };
    },

    onExecute({ args }) {
      const state = args.contextValue.idempotency;
      if (!state || !args.contextValue.auth) return;
      const { document, operationName } = executionArgs(args);
      if (rootFields(document, operationName)?.operation.operation !== OperationTypeNode.MUTATION) return;
      if (state.header === null) {
        // Required for creations: a REST POST, or any GraphQL mutation (always a POST).
        if (state.face === 'graphql' || state.method === 'POST') {
          throw refusedBeforeRunning(
            ValidationError.field(
              IDEMPOTENCY_KEY_HEADER,
              'is required: send a unique value with every write, and the same value when retrying it',
            ),
          );
        }
        return;
      }
      if (state.sent > 1) {
        throw refusedBeforeRunning(ValidationError.field(IDEMPOTENCY_KEY_HEADER, `must be sent once (it came ${state.sent} times)`));
      }
      try {
        state.key = checkIdempotencyKey(state.header);
      } catch (error) {
        throw refusedBeforeRunning(error);
      }
    },
  };
}

export function useIdempotency(options: IdempotencyOptions): ServerPlugin {
  const { ttlMs, logger, box } = options;
  return {
    onExecute({ args }) {
      const state = args.contextValue.idempotency;
      const auth = args.contextValue.auth;
      const key = state?.key;
      if (!state || !auth || key === undefined) return;
      const { document, operationName, variableValues } = executionArgs(args);
      const variables = variableValues ?? {};
      const request =
        state.face === 'rest'
          ? ['rest', state.method, state.path, variables]
          : ['graphql', sourceOf(document), variables, operationName ?? null];
      // The user a token acts for is part of the request: a replay skips the check that the token's
      // user may do what the write did, so another user's token must not match. Without a token the
      // parts are as they always were, and so are the fingerprints records already hold.
      const fingerprint = fingerprintOf(auth.userId === undefined ? request : [...request, { actingFor: auth.userId }]);
      const earlierFingerprint = auth.userId === undefined ? undefined : fingerprintOf(request);
      return IdempotentWrite.begin(options.em, { apiKeyId: auth.key.id, key, fingerprint, earlierFingerprint }).then((write) => {
        state.write = write;
        state.sealedFor = `idempotency ${auth.key.id} ${key}`;
        return {
          onExecuteDone({ result }: { result: unknown }) {
            // Without @defer or @stream, execution yields one result.
            if (typeof result === 'object' && result !== null && !(Symbol.asyncIterator in result)) state.result = result;
          },
        };
      });
    },

    onResponse(payload) {
      const state = payload.serverContext.idempotency;
      // Synchronous for every other request: no promise where nothing is recorded.
      if (state?.write) {
        return settle(state, state.write, payload).then((own) => {
          if (own) state.onOwnOutcome?.();
        });
      }
    },
  };

  /**
   * Records (or abandons) a claimed write once its response exists, and answers accordingly. False
   * when the answer is not this request's own outcome: a replay, or a refusal of its key.
   */
  async function settle(state: IdempotencyState, write: IdempotentWrite, payload: ResponsePayload): Promise<boolean> {
    const { request, response, setResponse } = payload;
    const ResponseClass = payload.fetchAPI.Response;
    const body = response.body === null ? null : await response.text();
    const answer = wholeAnswer(response, body, ResponseClass);
    // The key was in use or recorded: the operation's answer is not this request's.
    const sealedFor = state.sealedFor!;
    if (write.claimRefused) {
      const refused = await write.refusal();
      setResponse(
        'replay' in refused
          ? replayedIfAcceptable(state.face, request, response, answered(refused.replay, box, sealedFor), ResponseClass)
          : refusedAnswer(request, response, refusalOf(refused.error)),
      );
      return false;
    }
    const failed = (state.result?.errors ?? []).map(refusalOf).find((refusal) => !isKept(refusal.kind));
    if (response.status >= 500 || NOT_KEPT.has(response.status) || failed) {
      // Nothing of it is kept, so the retry runs again; an answer that reported part of the work
      // done must now say it was not.
      await write.abandon();
      setResponse(response.status < 400 && failed ? refusedAnswer(request, response, failed) : answer);
      return true;
    }
    const headers = Object.fromEntries(
      RECORDED_HEADERS.flatMap((name) => (response.headers.has(name) ? [[name, response.headers.get(name)!]] : [])),
    );
    let recorded: Recorded;
    crashAt('crash-before-idempotent-commit');
    try {
      if (isArmed('fail-idempotent-commit')) {
        await write.abandon();
        throw new Error('failpoint fail-idempotent-commit');
      }
      recorded = await write.record(
        { status: response.status, headers, body: storedBody(body, box, sealedFor) },
        ttlMs,
        wroteNothing(response.status, state.result),
      );
    } catch (error) {
      const refusal = refusalOf(error);
      if (refusal.kind === 'internal')
        logger.error({ err: error }, 'a write with an Idempotency-Key could not be committed; it was rolled back');
      setResponse(refusedAnswer(request, response, refusal));
      return !isOneOf(KEY_REFUSALS, refusal.kind);
    }
    if (!recorded.committed) {
      setResponse(replayedIfAcceptable(state.face, request, response, answered(recorded.replay, box, sealedFor), ResponseClass));
      return false;
    }
    // The write is committed and its response not yet sent: where a crash must lead to a replay.
    crashAt('crash-after-idempotent-commit');
    setResponse(answer);
    return true;
  }
}
