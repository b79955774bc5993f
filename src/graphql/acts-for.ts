// The user-token policy: acting on a user's own data needs a token whose subject is that user,
// unless the API key is an `admin` (trusted back-office) key. Reading profiles and signing up need
// only the key's scope.
import { ForbiddenError, UnauthenticatedError } from '../errors.ts';
import type { Scope } from '../services/api-keys.ts';
import type { GraphQLContext } from './context.ts';

export function hasScope(ctx: GraphQLContext, scope: Scope): boolean {
  return ctx.auth.key.scopes.includes(scope) || ctx.auth.key.scopes.includes('admin');
}

/** For reads that no field's `authScopes` guards (`node`, `nodes`): refuses a key without `scope`. */
export function requireScope(ctx: GraphQLContext, scope: Scope, typename: string): void {
  if (!hasScope(ctx, scope)) throw new ForbiddenError(`This API key may not read ${typename} nodes (it needs the scope ${scope}).`);
}

/** Whether the request may act for every user: an admin key. */
export function actsForEveryone(ctx: GraphQLContext): boolean {
  return ctx.auth.key.scopes.includes('admin');
}

export function actsFor(ctx: GraphQLContext, userId: string): boolean {
  return actsForEveryone(ctx) || ctx.auth.userId === userId;
}

/**
 * Why a request may not act for `userId`: no user token at all (401), or a token for someone else
 * (403). Without `userId` (a user the request did not name, like an order's), none is named.
 */
export function actingDenied(ctx: GraphQLContext, userId?: string): UnauthenticatedError | ForbiddenError {
  if (ctx.auth.userId === undefined) {
    const whose = userId === undefined ? "a user's data needs that user's" : `user ${userId}'s data needs their`;
    return new UnauthenticatedError(`This action on ${whose} user token (Authorization: Bearer <jwt>).`);
  }
  return new ForbiddenError(`The user token is for another user; it may not act on user ${userId}'s data.`);
}
