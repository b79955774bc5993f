// The one Pothos builder. Types register themselves on it from their own files in types/.
import SchemaBuilder from '@pothos/core';
import RelayPlugin from '@pothos/plugin-relay';
import ScopeAuthPlugin, { type AuthFailure } from '@pothos/plugin-scope-auth';
import type { Instant } from '../db/records.ts';
import { ForbiddenError, ValidationError } from '../errors.ts';
import { NODES_MAX } from '../services/limits.ts';
import type { Scope } from '../services/api-keys.ts';
import { actingDenied, actsFor, hasScope } from './acts-for.ts';
import type { GraphQLContext } from './context.ts';
import { decodeGlobalID, encodeGlobalID, nodeIdProblems } from './global-id.ts';
import { shaped } from '../guards.ts';

/** The leaf scopes that failed, however deeply `$all`/`$any` nest them. */
function failedScopes(failure: AuthFailure): { scope: string; parameter: unknown }[] {
  if ('failures' in failure) return failure.failures.flatMap(failedScopes);
  return 'parameter' in failure ? [{ scope: failure.scope, parameter: failure.parameter }] : [];
}

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  // JSON: values passed through as they are (an event's `data`).
  Scalars: { DateTime: { Input: Date; Output: Instant }; JSON: { Input: unknown; Output: unknown } };
  // Non-null unless a field says otherwise: the schema promises what resolvers always return.
  DefaultFieldNullability: false;
  // Connections never hold null edges or nodes: clients need not null-check every element.
  DefaultEdgesNullability: { list: false; items: false };
  DefaultNodeNullability: false;
  // Fields name the API key scope they need (`{ scope: 'users:read' }`) and, for a user's own data,
  // the user the request must act for (`{ actsFor: userId }`).
  AuthScopes: { scope: Scope; actsFor: string };
}>({
  defaultFieldNullability: false,
  plugins: [ScopeAuthPlugin, RelayPlugin],
  scopeAuth: {
    // `admin` is a trusted back-office client: it holds every scope.
    authScopes: (ctx) => ({
      scope: (scope) => hasScope(ctx, scope),
      actsFor: (userId) => actsFor(ctx, userId),
    }),
    unauthorizedError: (_parent, ctx, info, result) => {
      const field = `${info.parentType.name}.${info.fieldName}`;
      const failed = failedScopes(result.failure);
      const scope = failed.find((f) => f.scope === 'scope');
      if (scope) return new ForbiddenError(`This API key may not use ${field} (it needs the scope ${String(scope.parameter)}).`);
      const userId = failed[0]?.parameter;
      return actingDenied(ctx, typeof userId === 'string' ? userId : '');
    },
  },
  relay: {
    cursorType: 'String',
    // Global ids are the TypeIDs themselves (global-id.ts): no client's ids change.
    encodeGlobalID,
    decodeGlobalID,
    idFieldOptions: { description: 'Its id, the same everywhere (`usr_…`, `ord_…`).' },
    nodeTypeOptions: {
      // The plugin tags each loaded record with its type, but a second field asking for a node the
      // request is still loading is handed the record before the tag: its type is its id's prefix.
      resolveType: (record) => {
        const id = shaped(record, { id: 'string' })?.id;
        return id === undefined ? undefined : decodeGlobalID(id).typename || undefined;
      },
      description:
        'An object with a global id, for clients that cache and refetch by id (Relay): a User or an Order. The id is the one it has everywhere (`usr_…`, `ord_…`).',
    },
    nodeQueryOptions: {
      args: { id: { description: 'The id of a user or an order (`usr_…`, `ord_…`).' } },
      resolve: (_root, args, _ctx, _info, resolveNode) => {
        const problems = nodeIdProblems([args.id], () => 'id');
        if (problems.length > 0) throw new ValidationError(problems);
        return resolveNode(args.id);
      },
      description:
        'The User or Order with this id (`usr_…` or `ord_…`), or null if there is none or it is not visible to the request; the same rules as `user` and `order`.',
    },
    nodesQueryOptions: {
      args: { ids: { description: `Ids of users or orders (\`usr_…\`, \`ord_…\`), 1 to ${NODES_MAX}.` } },
      description: `The nodes with these ids, in the order given, null where there is none or it is not visible; 1 to ${NODES_MAX} ids.`,
      resolve: (_root, args, _ctx, _info, resolveNodes) => {
        if (args.ids.length < 1 || args.ids.length > NODES_MAX) {
          throw ValidationError.field('ids', `must hold 1 to ${NODES_MAX} ids (got ${args.ids.length})`);
        }
        // Every id that names no node, each by its place in the list.
        const problems = nodeIdProblems(args.ids, (index) => `ids[${index}]`);
        if (problems.length > 0) throw new ValidationError(problems);
        return resolveNodes(args.ids);
      },
    },
    edgesFieldOptions: { nullable: { list: false, items: false }, description: 'The items of this page, in order, each with its cursor.' },
    nodeFieldOptions: { nullable: false, description: 'The item.' },
    cursorFieldOptions: {
      description: 'Opaque and signed: pass it as `after` to page on from this item (or as `before`, to the lists that take one).',
    },
    pageInfoFieldOptions: { description: 'Where this page stands in the list.' },
    pageInfoTypeOptions: { description: 'Where a page of a Relay connection stands in its list.' },
    hasNextPageFieldOptions: { description: 'Whether items follow this page.' },
    hasPreviousPageFieldOptions: {
      // The Relay specification lets a connection paged forward only say false here.
      description: 'Whether items come before this page: exact on `users`; always false on `events`, which is paged forward only.',
    },
    startCursorFieldOptions: { description: "The first item's cursor (for `before`, on the lists that take one); null on an empty page." },
    endCursorFieldOptions: { description: "The last item's cursor (for `after`); null on an empty page." },
  },
});

builder.queryType({
  description: "Reads: users and their orders, the event feed, webhook endpoints and their deliveries, and the calling key's rate limit.",
});
builder.mutationType({
  description:
    'Writes. Send an `Idempotency-Key` header (1 to 255 printable ASCII characters, a new value per write) to make a retry safe: ' +
    'the write runs once, and a retry with the same key and the same request gets the first response, marked `Idempotent-Replayed: true`. ' +
    'The same key for a different request is refused with IDEMPOTENCY_KEY_REUSED; while the first request runs, with IDEMPOTENCY_KEY_IN_FLIGHT.',
});
