// What the Node shell hands yoga with each request, and what the plugins add to it before execution;
// every plugin is typed with it, so none casts the context to reach a field.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExecutionArgs } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { RateLimitTicket } from '../rate-limit/ticket.ts';
import type { EntityManager } from '../db/orm.ts';
import type { IdempotencyState } from './idempotency.ts';
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
  /** Set by useIdempotency for every request that may write and carries an Idempotency-Key (or must). */
  idempotency?: IdempotencyState;
  /** Set by useDocumentTransactions for a document with several mutations (and no Idempotency-Key): what they run in. */
  documentTransaction?: EntityManager;
  /**
   * Set by useDocumentTransactions when the document runs several mutations, which hold what each
   * locks until they commit together (with or without an Idempotency-Key).
   */
  severalMutations?: boolean;
}

/**
 * A yoga plugin of this server: its request hooks see the ServerContext, and so do its execution
 * hooks, since yoga builds the execution context on top of it.
 */
export type ServerPlugin = Plugin<ServerContext, ServerContext>;

/**
 * A library's plugin, typed for yoga's bare context, as a plugin of this server: yoga's plugin type
 * is invariant in its context, so it passes as a plain object; its hooks read nothing of ours.
 */
export function fromLibrary(plugin: object): ServerPlugin {
  return plugin;
}

/**
 * A hook's execution arguments as graphql-js types them: envelop declares every field `any`, to fit
 * every graphql-js version, and hands graphql-js's own arguments.
 */
export function executionArgs(args: object): ExecutionArgs {
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- see above
  return args as ExecutionArgs;
}
