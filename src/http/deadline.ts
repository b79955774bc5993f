// The overall deadline of a request, from the moment its headers arrived to its response taken by the
// client (a client that stops reading has its connection cut then): past it the
// client gets 503 (Problem Details `…/timeout`, or GraphQL TIMEOUT) at once, however the work is
// going; or, if its body has not all arrived yet, 408 (the delay is the client's), and the
// connection is closed, since what is left of that body would be read as the next request. The
// returned signal aborts then, or when the client goes away first, so the request's reads start no
// further SQL statement (db/sql.ts); a statement already running ends by DB_STATEMENT_TIMEOUT_MS at
// the latest, and the pool gets its connection back then.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../log.ts';
import { refusalParts } from '../refusals.ts';

export function armDeadline(req: IncomingMessage, res: ServerResponse, options: { timeoutMs: number; logger: Logger }): AbortSignal {
  const stop = new AbortController();
  const timer = setTimeout(() => {
    // Answered, but not taken: a client that stopped reading holds the answer in the process's
    // memory (and, pipelining, every answer after it) for as long as it likes. Its connection is cut.
    if (res.headersSent || res.writableEnded) {
      if (!res.writableFinished) {
        options.logger.warn({ timeoutMs: options.timeoutMs }, 'the client did not take its answer within the deadline; connection closed');
        res.destroy();
      }
      return;
    }
    const path = (req.url ?? '/').split('?')[0]!;
    const seconds = options.timeoutMs >= 1000 ? `${options.timeoutMs / 1000} s` : `${options.timeoutMs} ms`;
    const accept = String(req.headers.accept ?? '');
    if (!req.complete) {
      const answer = refusalParts(path, accept, {
        kind: 'request-timeout',
        detail: `The request body did not arrive within the ${seconds} this service allows; send it without pausing.`,
      });
      res
        .writeHead(answer.status, { ...answer.headers, 'content-length': Buffer.byteLength(answer.body), connection: 'close' })
        .end(answer.body);
      stop.abort();
      return;
    }
    options.logger.warn({ timeoutMs: options.timeoutMs }, 'request passed its deadline; answered 503');
    const answer = refusalParts(path, accept, {
      kind: 'timeout',
      detail: `The request took longer than the ${seconds} this service allows and was stopped; try again, or ask for less at once.`,
    });
    res.writeHead(answer.status, answer.headers).end(answer.body);
    stop.abort();
  }, options.timeoutMs);
  res.once('close', () => {
    clearTimeout(timer);
    // Aborting creates an error; only work that is cut short needs one.
    if (!res.writableFinished) stop.abort();
  });
  return stop.signal;
}
