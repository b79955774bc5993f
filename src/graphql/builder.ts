// The one Pothos builder. Types register themselves on it from their own files in types/.
import SchemaBuilder from '@pothos/core';
import RelayPlugin from '@pothos/plugin-relay';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { ForbiddenError } from '../errors.ts';
import type { Scope } from '../services/api-keys.ts';
import type { GraphQLContext } from './context.ts';

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  Scalars: { DateTime: { Input: Date; Output: Date } };
  // Non-null unless a field says otherwise: the schema promises what resolvers always return.
  DefaultFieldNullability: false;
  // Connections never hold null edges or nodes: clients need not null-check every element.
  DefaultEdgesNullability: { list: false; items: false };
  DefaultNodeNullability: false;
  // Fields name the API key scope they need: `authScopes: { scope: 'users:read' }`.
  AuthScopes: { scope: Scope };
}>({
  defaultFieldNullability: false,
  plugins: [ScopeAuthPlugin, RelayPlugin],
  scopeAuth: {
    // `admin` is a trusted back-office client: it holds every scope.
    authScopes: (ctx) => ({ scope: (scope) => ctx.auth.key.scopes.includes(scope) || ctx.auth.key.scopes.includes('admin') }),
    unauthorizedError: (_parent, _ctx, info, result) => {
      const failure = result.failure as { parameter?: unknown };
      const needed = typeof failure.parameter === 'string' ? ` (it needs the scope ${failure.parameter})` : '';
      return new ForbiddenError(`This API key may not use ${info.parentType.name}.${info.fieldName}${needed}.`);
    },
  },
  relay: {
    cursorType: 'String',
    // Ids are already global (type-prefixed); a `node` field adds nothing clients asked for yet.
    nodeQueryOptions: false,
    nodesQueryOptions: false,
    edgesFieldOptions: { nullable: { list: false, items: false } },
    nodeFieldOptions: { nullable: false },
  },
});

builder.queryType({});
builder.mutationType({});
