// GraphQL errors are read-only: a different message or other extensions make a new one, which must
// point where the first did.
import type { GraphQLError, GraphQLErrorOptions } from 'graphql';

/** Where an error points (its nodes, or its source and positions) and the path of its field, for a copy of it. */
export function placeOf(error: GraphQLError | undefined): Pick<GraphQLErrorOptions, 'nodes' | 'source' | 'positions' | 'path'> {
  return { nodes: error?.nodes, source: error?.source, positions: error?.positions, path: error?.path };
}
