// Requests Node's HTTP parser refuses before the service sees them: headers over Node's size limit,
// a request that is not HTTP, headers or a body that did not arrive within the deadline. Node would
// answer these with an empty body; clients get Problem Details like for every other refusal. A
// client that went away (reset, closed) gets nothing and is not worth a log line.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { problem, type ProblemKind } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../telemetry/metrics.ts';
import { MAX_HEADER_BYTES, MAX_URL_LENGTH } from '../request-limits.ts';

interface ClientError extends Error {
  code?: string;
  /** What the parser had read when it gave up. */
  rawPacket?: Buffer;
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
      const requestLine =
        error.rawPacket
          ?.subarray(0, MAX_URL_LENGTH + 64)
          .toString('latin1')
          .split('\r\n', 1)[0] ?? '';
      return requestLine.length > MAX_URL_LENGTH
        ? { kind: 'uri-too-long', detail: `The URL must be at most ${MAX_URL_LENGTH} characters; send fewer or shorter parameters.` }
        : {
            kind: 'request-header-fields-too-large',
            detail: `The request line and headers must be at most ${MAX_HEADER_BYTES / 1024} KiB together.`,
          };
    }
    default:
      return { kind: 'invalid-input', detail: 'The request is not valid HTTP/1.1.' };
  }
}

export function answerClientError(error: ClientError, socket: Socket, logger: Logger, metrics: Metrics): void {
  const refusal = refusalOf(error);
  // Node's own rule: answer only if nothing of a response has been written on this connection.
  const response = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (refusal && socket.writable && !response?.headersSent) {
    const body = problem(refusal.kind, refusal.detail);
    // A request like any other for the log and the metrics, though no method or path could be read.
    logger.info({ status: body.status, refusedBy: 'http-parser', code: error.code }, 'request');
    if (metrics.served) metrics.requestEnded({}, body.status, 0);
    const text = JSON.stringify(body);
    socket.end(
      `HTTP/1.1 ${body.status} ${STATUS_CODES[body.status]}\r\nContent-Type: application/problem+json\r\n` +
        `Cache-Control: no-store\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroySoon();
}
