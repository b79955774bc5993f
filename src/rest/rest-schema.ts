// The schema as REST sees it: only the routed root fields, and resources without their relation
// fields (a user's orders and an order's user are routes of their own, not embedded copies).
// SOFA builds each route's GraphQL operation, and the OpenAPI components, from this view; the
// resolvers are the schema's own.
import { MapperKind, mapSchema, pruneSchema } from '@graphql-tools/utils';
import type { GraphQLSchema } from 'graphql';
import { ROUTES } from './routes.ts';

const RELATIONS = new Set(['User.orders', 'Order.user']);

export function restSchema(schema: GraphQLSchema): GraphQLSchema {
  const routed = new Set<string>(ROUTES.map((route) => route.field));
  const roots = new Set([schema.getQueryType()?.name, schema.getMutationType()?.name]);
  return pruneSchema(
    mapSchema(schema, {
      [MapperKind.OBJECT_FIELD]: (config, fieldName, typeName) => {
        const coordinate = `${typeName}.${fieldName}`;
        if (roots.has(typeName)) return routed.has(coordinate) ? config : null;
        return RELATIONS.has(coordinate) ? null : config;
      },
    }),
  );
}
