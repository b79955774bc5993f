// What the Node shell hands yoga with each request, and what the plugins add to it before execution;
// every plugin is typed with it, so none casts the context to reach a field.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Plugin } from 'graphql-yoga';
import type { RateLimitTicket } from '../rate-limit/ticket.ts';
import type { RequestAuth } from '../services/request-auth.ts';

export interface ServerContext {
  req: IncomingMessage;
  res: ServerResponse;
  /** Aborts when the request's deadline passes or its client goes away (http/deadline.ts). */
  deadline: AbortSignal;
  /** Set by useApiKeys once the key verified; every request that reaches execution has it. */
  auth?: RequestAuth;
  /** Set by useRateLimits for every request with a verified key. */
  rateLimit?: RateLimitTicket;
}

/**
 * A yoga plugin of this server: its request hooks see the ServerContext, and so do its execution
 * hooks, since yoga builds the execution context on top of it.
 */
export type ServerPlugin = Plugin<ServerContext, ServerContext>;

/**
 * A library's plugin, typed for yoga's bare context, as a plugin of this server. Its hooks read
 * nothing of ours, and yoga's plugin type is invariant in its context, hence the one cast here.
 */
export function fromLibrary(plugin: object): ServerPlugin {
  return plugin as ServerPlugin;
}
