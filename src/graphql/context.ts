import type { EntityManager } from '../db/orm.ts';
import type { CursorCodec } from '../pagination/cursor.ts';
import type { RequestAuth } from '../plugins/api-key.ts';
import type { RateLimitTicket } from '../plugins/rate-limit.ts';
import type { Loaders } from './loaders.ts';

/** What every resolver receives: a request-scoped entity manager and the request's batch loaders. */
export interface GraphQLContext {
  em: EntityManager;
  cursors: CursorCodec;
  loaders: Loaders;
  /** The verified API key (and, later, user) behind the request. */
  auth: RequestAuth;
  /** The request's rate limit check, settled before any resolver runs. */
  rateLimit?: RateLimitTicket;
}
