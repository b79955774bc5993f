// The one Pothos builder. Types register themselves on it from their own files in types/.
import SchemaBuilder from '@pothos/core';
import RelayPlugin from '@pothos/plugin-relay';
import type { GraphQLContext } from './context.ts';

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  Scalars: { DateTime: { Input: Date; Output: Date } };
  // Non-null unless a field says otherwise: the schema promises what resolvers always return.
  DefaultFieldNullability: false;
  // Connections never hold null edges or nodes: clients need not null-check every element.
  DefaultEdgesNullability: { list: false; items: false };
  DefaultNodeNullability: false;
}>({
  defaultFieldNullability: false,
  plugins: [RelayPlugin],
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
