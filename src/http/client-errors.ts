// Requests Node's HTTP parser refuses before the service sees them: headers over Node's size limit,
// a request that is not HTTP, a method Node does not know, headers or a body that did not arrive
// within the deadline; and CONNECT, which Node hands over as a bare socket. Node would
// answer these with an empty body; clients get Problem Details like for every other refusal. A
// client that went away (reset, closed) gets nothing and is not worth a log line.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { problem, type ProblemKind } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../telemetry/metrics.ts';
import { MAX_HEADER_BYTES, MAX_URL_LENGTH } from '../request-limits.ts';
import { GRAPHQL_METHODS, READ_METHODS } from '../refusals.ts';
import { ROUTES } from '../rest/routes.ts';

interface ClientError extends Error {
  code?: string;
  /** What the parser had read when it gave up. */
  rawPacket?: Buffer;
}

const NOT_HTTP = 'The request is not valid HTTP/1.1.';

/** A request line: a method (a token), a target, the version. */
const REQUEST_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ [^ ]+ HTTP\/\d\.\d$/;

/** The first line of what the parser had read (at most a little past the longest URL taken). */
function firstLine(error: ClientError): string {
  return (
    error.rawPacket
      ?.subarray(0, MAX_URL_LENGTH + 64)
      .toString('latin1')
      .split('\r\n', 1)[0] ?? ''
  );
}

function refusalOf(error: ClientError): { kind: ProblemKind; detail: string } | undefined {
  switch (error.code) {
    // Gone: reset, or (HPE_INVALID_EOF_STATE) its side closed in the middle of a request, which,
    // if it had begun, is logged once as abandoned.
    case 'ECONNRESET':
    case 'EPIPE':
    case 'ERR_STREAM_DESTROYED':
    case 'HPE_INVALID_EOF_STATE':
      return undefined;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { kind: 'request-timeout', detail: 'The request did not arrive in time; send its headers and body without pausing.' };
    case 'HPE_HEADER_OVERFLOW': {
      // The request line counts towards the same limit; a URL over our own bound is named as such.
      return firstLine(error).length > MAX_URL_LENGTH
        ? { kind: 'uri-too-long', detail: `The URL must be at most ${MAX_URL_LENGTH} characters; send fewer or shorter parameters.` }
        : {
            kind: 'request-header-fields-too-large',
            detail: `The request line and headers must be at most ${MAX_HEADER_BYTES / 1024} KiB together.`,
          };
    }
    // A well-formed request line whose method Node does not know says so; anything else is no
    // request line at all.
    case 'HPE_INVALID_METHOD':
      return { kind: 'invalid-input', detail: REQUEST_LINE.test(firstLine(error)) ? UNIMPLEMENTED_METHOD : NOT_HTTP };
    default:
      return { kind: 'invalid-input', detail: NOT_HTTP };
  }
}

const SERVED = new Set<string>([...READ_METHODS, ...GRAPHQL_METHODS, ...ROUTES.map((route) => route.method)]);
/** The methods the service answers on some path, besides OPTIONS (each face's), in the order HTTP lists them. */
export const SERVED_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((method) => SERVED.has(method));

const UNIMPLEMENTED_METHOD = `The request method is not one this service implements: it answers ${SERVED_METHODS.join(', ')} and OPTIONS.`;

export function answerClientError(error: ClientError, socket: Socket, logger: Logger, metrics: Metrics): void {
  const refusal = refusalOf(error);
  // Node's own rule: answer only if nothing of a response has been written on this connection.
  const response = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (refusal && socket.writable && !response?.headersSent) {
    answerOnSocket(socket, refusal, { refusedBy: 'http-parser', code: error.code }, logger, metrics);
  }
  socket.destroySoon();
}

/**
 * A CONNECT request (a tunnel): Node hands it over as a bare socket, and without an answer closes
 * it, which a client reads as the server failing. Like a method no one has heard of, it is a
 * client's mistake here: 400, not RFC 9110's suggested 501, since a 5xx says the service failed
 * (and would count towards an alert on server errors every time a scanner came by).
 */
export function answerConnect(socket: Socket, logger: Logger, metrics: Metrics): void {
  if (socket.writable)
    answerOnSocket(socket, { kind: 'invalid-input', detail: UNIMPLEMENTED_METHOD }, { method: 'CONNECT' }, logger, metrics);
  socket.destroySoon();
}

/** Problem Details written on the connection itself, which then closes; logged and counted as a request. */
function answerOnSocket(
  socket: Socket,
  refusal: { kind: ProblemKind; detail: string },
  logged: Record<string, unknown>,
  logger: Logger,
  metrics: Metrics,
): void {
  const body = problem(refusal.kind, refusal.detail);
  // A request like any other for the log and the metrics, though its path may not have been read.
  logger.info({ status: body.status, ...logged }, 'request');
  if (metrics.served) metrics.requestEnded({}, body.status, 0);
  const text = JSON.stringify(body);
  socket.end(
    // Date, as every answer of a server with a clock carries it (RFC 9110 §6.6.1).
    `HTTP/1.1 ${body.status} ${STATUS_CODES[body.status]}\r\nDate: ${new Date().toUTCString()}\r\nContent-Type: application/problem+json\r\n` +
      `Cache-Control: no-store\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
}
