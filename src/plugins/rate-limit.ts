// Per-key rate limits on both faces, through @envelop/rate-limiter: it runs at execution start, where
// a REST route and a GraphQL request meet, and checks every root field of the operation.
//
// What a request costs: one unit per root field it runs (a REST call runs one, so it costs the same
// as the GraphQL query behind it; `{ a: user … b: user … }` costs 2). A request is admitted or
// refused whole: its root fields are weighed together in one atomic step of the counter, so
// concurrent requests never overshoot the budget and a refused request spends nothing. Documents
// refused before execution (syntax, validation, shape and cost limits) cost nothing.
//
// The library keeps call timestamps through a read-then-write Store, which cannot be exact across
// instances; so its Store here asks the window counter (memory or Redis), which decides atomically
// and with the key's own limit, and answers the library in its terms: no timestamps when the
// request fits, one when it does not (with `max: 1`, that is over the limit).
import { Store, useRateLimiter, type Identity } from '@envelop/rate-limiter';
import type { DocumentNode } from 'graphql';
import { RateLimitedError } from '../errors.ts';
import { whenSettled, type MaybePromise } from '../maybe-promise.ts';
import type { WindowState } from '../rate-limit/counter.ts';
import type { FailOpenCounter } from '../rate-limit/fail-open.ts';
import type { RateLimitTicket } from '../rate-limit/ticket.ts';
import type { Metrics } from '../telemetry/metrics.ts';
import { rootFields } from './root-fields.ts';
import { executionArgs, fromLibrary, type ServerContext, type ServerPlugin } from './server-context.ts';

/** The policies' names in the RateLimit and RateLimit-Policy fields. */
type Policy = 'per-key' | 'per-address';

export interface RateLimitOptions {
  counter: FailOpenCounter;
  /** Units per window for keys without a limit of their own. */
  defaultLimit: number;
  windowMs: number;
  metrics: Metrics;
}

const seconds = (ms: number) => Math.max(Math.ceil(ms / 1000), 1);

function windowText(windowMs: number): string {
  if (windowMs % 60_000 === 0) return windowMs === 60_000 ? 'minute' : `${windowMs / 60_000} minutes`;
  return windowMs % 1000 === 0 ? `${windowMs / 1000} seconds` : `${windowMs} ms`;
}

/** The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers), plus Retry-After on a refusal. */
export function rateLimitHeaders(state: WindowState, windowMs: number, policy: Policy = 'per-key'): Record<string, string> {
  const reset = seconds(state.resetMs);
  return {
    'ratelimit-policy': `"${policy}";q=${state.limit};w=${seconds(windowMs)}`,
    ratelimit: `"${policy}";r=${state.remaining};t=${reset}`,
    ...(state.allowed ? {} : { 'retry-after': String(reset) }),
  };
}

/** How a decision is counted: no state means the store could not be reached and the request went through unmetered. */
export function decisionOf(state: WindowState | undefined): 'admitted' | 'refused' | 'unmetered' {
  if (!state) return 'unmetered';
  return state.allowed ? 'admitted' : 'refused';
}

export function useRateLimits(options: RateLimitOptions): ServerPlugin[] {
  const { counter, windowMs } = options;
  /** Tickets of requests in flight, by id: the library hands its Store only the identity string. */
  const tickets = new Map<string, RateLimitTicket>();
  let sequence = 0;

  class WindowStore extends Store {
    // Synchronous when the counter is in memory: the library then checks the request without a promise.
    getForIdentity(identity: Identity): MaybePromise<readonly number[]> {
      const ticket = tickets.get(identity.contextIdentity);
      if (!ticket) return [];
      ticket.decision ??= whenSettled(counter.consume(ticket.keyId, ticket.cost, ticket.limit, windowMs), (state) => {
        ticket.decidedAt = Date.now();
        options.metrics.rateLimitDecisions.inc({ policy: 'per-key', outcome: decisionOf(state) });
        return (ticket.state = state);
      });
      return whenSettled(ticket.decision, (state) => (state && !state.allowed ? [Date.now()] : []));
    }

    // Counting happens in getForIdentity, atomically; fields are configured `readOnly`.
    setForIdentity(): void {}
  }

  const perRootField = { field: '*', max: 1, readOnly: true };
  const limiter = useRateLimiter({
    // The library types the context as unknown; it is the execution context, built on ServerContext.
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- as said
    identifyFn: (context) => (context as ServerContext).rateLimit?.id ?? '',
    configByField: [
      { type: 'Query', ...perRootField },
      { type: 'Mutation', ...perRootField },
    ],
    store: new WindowStore(),
    // The library asks for the message of every check, and uses it only for a refusal.
    formatError: ({ contextIdentity }) => {
      const ticket = tickets.get(contextIdentity);
      const state = ticket?.state;
      if (state?.allowed) return '';
      if (!ticket || !state) return 'Rate limit exceeded for this API key.';
      const over = ticket.cost > state.limit ? ` This request runs ${ticket.cost} operations; send fewer at once.` : '';
      return (
        `Rate limit of ${state.limit} operations per ${windowText(windowMs)} exceeded for this API key; ` +
        `${state.remaining} left, the budget renews in ${seconds(state.resetMs)} s.${over}`
      );
    },
    transformError: (message) => new RateLimitedError(message),
  });

  const tickets$: ServerPlugin = {
    onRequest({ serverContext }) {
      if (!serverContext.auth) return;
      const { key } = serverContext.auth;
      const id = `${key.id}#${++sequence}`;
      const ticket: RateLimitTicket = { id, keyId: key.id, limit: key.rateLimitPerMinute ?? options.defaultLimit, cost: 1, windowMs };
      tickets.set(id, ticket);
      serverContext.rateLimit = ticket;
    },
    onExecute({ args }) {
      const ticket = args.contextValue.rateLimit;
      // Each root field costs one unit; validation guarantees an operation has at least one.
      if (!ticket || ticket.decision) return;
      const { document, operationName } = executionArgs(args);
      ticket.cost = Math.max(rootFields(document, operationName)?.fields.length ?? 1, 1);
    },
    onResponse({ serverContext, response }) {
      const ticket = serverContext.rateLimit;
      if (!ticket) return;
      tickets.delete(ticket.id);
      const setHeaders = (state: WindowState | undefined) => {
        if (!state) return;
        for (const [name, value] of Object.entries(rateLimitHeaders(state, windowMs))) response.headers.set(name, value);
      };
      // Most requests were decided during execution: no promise for them. A request refused before
      // execution spent nothing; its answer still says where the budget stands.
      if (ticket.state) return setHeaders(ticket.state);
      return whenSettled(ticket.decision ?? counter.peek(ticket.keyId, ticket.limit, windowMs), setHeaders);
    },
  };
  // The limiter weighs root fields only (the configuration names no other), yet walks the whole
  // document with type information on every request, and hands back a copy even when it removed
  // nothing (its visitor returns each node, which graphql-js counts as an edit). So it is shown the
  // operation's root fields alone (built once per document), and the document yoga parsed and cached
  // goes back afterwards: compiled execution is cached by document object, and a request that goes
  // on to run had nothing removed (a refusal stops it whole).
  const parsed = new WeakMap<object, DocumentNode>();
  const remember: ServerPlugin = {
    onExecute({ args }) {
      const { document, operationName } = executionArgs(args);
      parsed.set(args, document);
      args.document = rootFields(document, operationName)?.skeleton ?? document;
    },
  };
  const restore: ServerPlugin = {
    onExecute({ args }) {
      const document = parsed.get(args);
      if (document) args.document = document;
    },
  };
  return [tickets$, remember, fromLibrary(limiter), restore];
}
