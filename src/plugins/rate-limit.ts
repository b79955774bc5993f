// Per-key rate limits on both faces, through @envelop/rate-limiter's limiter: it runs at execution
// start, where a REST route and a GraphQL request meet, and weighs every root field of the operation.
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
import { Store, type Identity } from '@envelop/rate-limiter';
import { getGraphQLRateLimiter } from '@envelop/rate-limiter/get-graphql-rate-limiter';
import { RateLimitedError } from '../errors.ts';
import { whenSettled, type MaybePromise } from '../maybe-promise.ts';
import type { WindowState } from '../rate-limit/counter.ts';
import type { FailOpenCounter } from '../rate-limit/fail-open.ts';
import type { RateLimitTicket } from '../rate-limit/ticket.ts';
import type { Metrics } from '../telemetry/metrics.ts';
import { fieldsRun, rootFields } from './root-fields.ts';
import { executionArgs, type ServerPlugin } from './server-context.ts';

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

/**
 * Two plugins: `tickets` gives every identified request its ticket as it arrives and the RateLimit
 * fields on its answer, so that it goes right after identification (a request refused before it
 * runs, 412 or 403, still says where its budget stands); `decisions` weighs the operation at
 * execution, after the limits that refuse a document for nothing.
 */
export function useRateLimits(options: RateLimitOptions): { tickets: ServerPlugin; decisions: ServerPlugin } {
  const { counter, windowMs } = options;
  /** Tickets of requests in flight, by id: the library hands its Store only the identity string. */
  const tickets = new Map<string, RateLimitTicket>();
  let sequence = 0;

  class WindowStore extends Store {
    // Synchronous when the counter is in memory: the library then checks the request without a promise.
    getForIdentity(identity: Identity): MaybePromise<readonly number[]> {
      const ticket = tickets.get(identity.contextIdentity);
      if (!ticket) return [];
      ticket.decision ??= whenSettled(counter.consume(ticket.budgetOf, ticket.cost, ticket.limit, windowMs), (state) => {
        ticket.decidedAt = Date.now();
        options.metrics.rateLimitDecisions.inc({ policy: 'per-key', outcome: decisionOf(state) });
        return (ticket.state = state);
      });
      return whenSettled(ticket.decision, (state) => (state && !state.allowed ? [Date.now()] : []));
    }

    // Counting happens in getForIdentity, atomically; fields are configured `readOnly`.
    setForIdentity(): void {}
  }

  // The library's own limiter, which its plugin runs for each field it finds limited (here: every root field).
  const limiter = getGraphQLRateLimiter({
    identifyContext: (context: { rateLimit?: RateLimitTicket }) => context.rateLimit?.id ?? '',
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
  });

  const decisions: ServerPlugin = {
    onExecute({ args }) {
      const ticket = args.contextValue.rateLimit;
      if (!ticket) return;
      const { document, operationName, variableValues } = executionArgs(args);
      const root = rootFields(document, operationName);
      const fields = root ? fieldsRun(root, variableValues).fields : [];
      // Each root field costs one unit: one per name in the answer, as execution runs a field asked
      // twice under one name once. A decision already taken for this request stands as it was weighed.
      if (!ticket.decision) {
        ticket.cost = fields.length < 2 ? fields.length : new Set(fields.map((field) => (field.alias ?? field.name).value)).size;
      }
      // The library's plugin finds limited fields by walking the whole document with type information
      // on every request, and checks each; here every root field is limited, and the request is
      // weighed whole in one step of the counter, so its first root field's check decides it.
      // `{ __typename }` alone runs no operation and spends nothing.
      const first = fields[0];
      if (!first) return;
      return whenSettled(limiter(first.name.value, { args: {}, context: args.contextValue }, { max: 1, readOnly: true }), (message) => {
        // Thrown at execution start: a whole-request denial (plugins/error-masking.ts), nothing runs.
        if (message !== undefined) throw new RateLimitedError(message);
      });
    },
  };

  const tickets$: ServerPlugin = {
    onRequest({ serverContext }) {
      if (!serverContext.auth) return;
      const { key } = serverContext.auth;
      const id = `${key.id}#${++sequence}`;
      const ticket: RateLimitTicket = {
        id,
        budgetOf: key.lineageId,
        limit: key.rateLimitPerMinute ?? options.defaultLimit,
        cost: 1,
        windowMs,
      };
      tickets.set(id, ticket);
      serverContext.rateLimit = ticket;
    },
    onResponse({ serverContext, response }) {
      const ticket = serverContext.rateLimit;
      if (!ticket) return;
      tickets.delete(ticket.id);
      const setHeaders = (state: WindowState | undefined) => {
        if (!state) return;
        for (const [name, value] of Object.entries(rateLimitHeaders(state, windowMs))) response.headers.set(name, value);
        // A request that runs more operations than the whole budget passes after no wait: its
        // refusal says to send fewer at once, and promises no time.
        if (ticket.cost > state.limit) response.headers.delete('retry-after');
      };
      // Most requests were decided during execution: no promise for them. A request refused before
      // execution spent nothing; its answer still says where the budget stands.
      if (ticket.state) return setHeaders(ticket.state);
      return whenSettled(ticket.decision ?? counter.peek(ticket.budgetOf, ticket.limit, windowMs), setHeaders);
    },
  };
  return { tickets: tickets$, decisions };
}
