// Sending one attempt: an HTTP POST through a keep-alive pool per origin (undici), bounded in time as
// a whole (connecting, sending, the response and its body), never following a redirect, and
// connecting only to an address that passed the SSRF check: the check runs inside the connection's
// own name lookup, so the address checked is the address connected to (no DNS rebinding between the
// two). Literal addresses in URLs are checked by the URL's form before anything is sent.
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns';
import { Agent, type Dispatcher } from 'undici';
import { messageOf } from '../guards.ts';
import { addressRefusal, checkUrlForm, type UrlPolicy } from './url-policy.ts';
import { retryAfterMs } from './schedule.ts';

/** How much of a response body is kept with the attempt. */
export const RESPONSE_BODY_KEPT = 1024;
/** Read at most this much of a response before the connection is given up (keeping it alive is not worth more). */
const RESPONSE_BODY_READ_MAX = 64 * 1024;

export interface AttemptResult {
  /** Whether the receiver took it (a 2xx in time). */
  ok: boolean;
  statusCode: number | null;
  /** What went wrong, in a few words, when it was not taken. */
  error: string | null;
  /** The first KiB of the response body. */
  responseBody: string | null;
  durationMs: number;
  /** What the receiver asked for with Retry-After on a 429 or 503. */
  retryAfterMs?: number;
  /** The receiver answered 410 Gone: it wants no more. */
  gone: boolean;
  /** Nothing was sent: the service could not or would not (a secret that does not open, a URL the policy refuses). */
  notSent?: true;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A name lookup that refuses any address the policy does not allow. */
function checkedLookup(policy: UrlPolicy) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback) => {
    const all: LookupAllOptions = { ...options, all: true };
    dnsLookup(hostname, all, (error, addresses) => {
      if (error) return callback(error, []);
      const host = hostname.toLowerCase();
      if (!policy.allowedHosts.includes(host)) {
        for (const { address } of addresses) {
          const refusal = addressRefusal(address);
          if (refusal) {
            return callback(Object.assign(new Error(`${hostname} resolves to ${address}, ${refusal}`), { code: 'EREFUSEDADDRESS' }), []);
          }
        }
      }
      if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      if (options.all) return callback(null, addresses);
      return callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/** What a failed connection or request was, in a few words (its code when it has one). */
function errorKind(error: unknown): string {
  const code: unknown = error !== null && typeof error === 'object' ? Reflect.get(error, 'code') : undefined;
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return 'timed out';
  const cause: unknown = error instanceof Error ? error.cause : undefined;
  if (cause instanceof Error && cause !== error) return errorKind(cause);
  return typeof code === 'string' ? `${code}: ${messageOf(error)}` : messageOf(error);
}

/** What an attempt's response came to: its status, its Retry-After, and the first KiB of its body. */
interface AttemptResponse {
  statusCode: number;
  retryAfter: string | undefined;
  kept: Buffer[];
  /** What cut the response short after its status came (the connection closed, the time ran out). */
  brokenBy?: Error;
}

/**
 * One POST through the agent's own dispatch, bounded by `timeoutMs` from start to the body's end. A
 * handler takes the status, Retry-After and the first KiB of the body as they come: no response
 * stream, no abort signal, nothing else per attempt.
 */
function post(agent: Agent, url: URL, headers: Record<string, string>, body: string, timeoutMs: number): Promise<AttemptResponse> {
  return new Promise((resolve, reject) => {
    const response: AttemptResponse = { statusCode: 0, retryAfter: undefined, kept: [] };
    let controller: Dispatcher.DispatchController | undefined;
    let settled = false;
    let read = 0;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // A status that came is kept with what broke the answer after it: the receiver did answer.
      if (error && response.statusCode === 0) reject(error);
      else resolve(error ? { ...response, brokenBy: error } : response);
    };
    const timer = setTimeout(() => {
      const error = new DOMException(`no complete answer within ${timeoutMs} ms`, 'TimeoutError');
      finish(error);
      // A request still waiting for its connection is aborted as soon as it starts.
      controller?.abort(error);
    }, timeoutMs);
    // A request undici refuses outright (it throws) must not leave the timer running.
    try {
      agent.dispatch(
        { origin: url.origin, path: `${url.pathname}${url.search}`, method: 'POST', headers, body },
        {
          onRequestStart(started) {
            controller = started;
            if (settled) started.abort(new DOMException('the attempt timed out before it started', 'TimeoutError'));
          },
          onResponseStart(_controller, statusCode, responseHeaders) {
            response.statusCode = statusCode;
            const retryAfter = responseHeaders['retry-after'];
            response.retryAfter = Array.isArray(retryAfter) ? retryAfter[0] : retryAfter;
          },
          onResponseData(current, chunk) {
            // Copied: a chunk may be a view of the connection's read buffer.
            if (read < RESPONSE_BODY_KEPT) response.kept.push(Buffer.from(chunk.subarray(0, RESPONSE_BODY_KEPT - read)));
            read += chunk.length;
            if (read < RESPONSE_BODY_READ_MAX) return;
            // Enough of it: the answer is what came so far, and the connection is not worth keeping.
            finish();
            current.abort(new Error('response body past the read limit'));
          },
          onResponseEnd: () => finish(),
          onResponseError: (_controller, error) => finish(error),
        },
      );
    } catch (error) {
      finish(error instanceof Error ? error : new Error(String(error)));
    }
  });
}

export class WebhookSender {
  readonly #agent: Agent;
  readonly #policy: UrlPolicy;
  readonly #timeoutMs: number;

  constructor(options: { policy: UrlPolicy; timeoutMs: number; connectionsPerOrigin: number }) {
    this.#policy = options.policy;
    this.#timeoutMs = options.timeoutMs;
    this.#agent = new Agent({
      connections: options.connectionsPerOrigin,
      keepAliveTimeout: 30_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connect: { timeout: options.timeoutMs, lookup: checkedLookup(options.policy) },
    });
  }

  /** POSTs `body` to `url` with `headers`; never throws. */
  async send(url: string, headers: Record<string, string>, body: string): Promise<AttemptResult> {
    const started = performance.now();
    const took = () => Math.round(performance.now() - started);
    const form = checkUrlForm(url, this.#policy);
    if ('refusal' in form) {
      return {
        ok: false,
        statusCode: null,
        error: `refused: the URL ${form.refusal}`,
        responseBody: null,
        durationMs: took(),
        gone: false,
        notSent: true,
      };
    }
    try {
      const response = await post(
        this.#agent,
        form.url,
        { 'content-type': 'application/json', 'user-agent': 'Portico-Webhooks/1', ...headers },
        body,
        this.#timeoutMs,
      );
      const { statusCode, kept, brokenBy } = response;
      // An answer cut short is no success, whatever its status: the receiver may not have finished.
      const ok = brokenBy === undefined && statusCode >= 200 && statusCode < 300;
      const retryAfter = statusCode === 429 || statusCode === 503 ? retryAfterMs(response.retryAfter ?? '') : undefined;
      return {
        ok,
        statusCode,
        error: brokenBy
          ? `HTTP ${statusCode}, then ${errorKind(brokenBy)}`
          : ok
            ? null
            : statusCode >= 300 && statusCode < 400
              ? 'redirect (not followed)'
              : `HTTP ${statusCode}`,
        // As text PostgreSQL can store: NUL bytes go (a receiver's body could otherwise stall the record).
        responseBody: kept.length > 0 ? Buffer.concat(kept).toString('utf8').replaceAll('\u0000', '') : null,
        durationMs: took(),
        ...(retryAfter === undefined ? {} : { retryAfterMs: retryAfter }),
        gone: statusCode === 410,
      };
    } catch (error) {
      return { ok: false, statusCode: null, error: errorKind(error), responseBody: null, durationMs: took(), gone: false };
    }
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}
