import type { EntityManager } from '../db/orm.ts';
import type { StatementRunner } from '../db/prepared.ts';
import type { Sql } from '../db/sql.ts';
import type { CursorCodec } from '../pagination/cursor.ts';
import type { RateLimitTicket } from '../rate-limit/ticket.ts';
import type { RequestAuth } from '../services/request-auth.ts';
import type { WebhookSettings } from '../services/webhook-endpoints.ts';
import type { ServerContext } from '../plugins/server-context.ts';
import type { Loaders } from './loaders.ts';

/**
 * What every resolver receives: plain reads, a request-scoped entity manager for writes, and the
 * request's batch loaders; and what the plugins set on the execution context for resolvers to read.
 */
export interface GraphQLContext extends Pick<ServerContext, 'severalMutations'> {
  /** Reads: plain SQL on the pool. */
  sql: Sql;
  /** Writes: the unit of work of this request, made on the first call (reads need none). */
  em(): EntityManager;
  /**
   * Writes that are one statement on their own (a creation with its event): in the request's
   * transaction when it has one (an Idempotency-Key), else straight on the pool, with no unit of
   * work made for them.
   */
  statements(): StatementRunner;
  cursors: CursorCodec;
  loaders: Loaders;
  /** The verified API key (and, later, user) behind the request. */
  auth: RequestAuth;
  /** What managing webhook endpoints needs: the secret box, the URL policy, the limits. */
  webhooks: WebhookSettings;
  /** The request's rate limit check, settled before any resolver runs. */
  rateLimit?: RateLimitTicket;
}
