// Errors the executor raises when the schema's own resolvers break its contract are the service's
// fault: masked as INTERNAL and logged as errors, never handed to the client as its bad input.
import { buildSchema, execute, GraphQLError, parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { logLevelOf, maskError } from '../../src/plugins/error-masking.ts';

const schema = buildSchema(`
  interface Node { id: ID! }
  type User implements Node { id: ID! }
  type Query { name(id: ID!): String!  node: Node  count: Int  list: [Int] }
`);

async function errorsOf(
  query: string,
  root: Record<string, unknown>,
  variables?: Record<string, unknown>,
): Promise<readonly GraphQLError[]> {
  const result = await execute({ schema, document: parse(query), rootValue: root, variableValues: variables });
  return result.errors ?? [];
}

describe('errors of the executor', () => {
  it('are INTERNAL and logged as errors when a resolver broke the schema', async () => {
    const faults = [
      ...(await errorsOf('{ name(id: "1") }', { name: () => null })),
      ...(await errorsOf('{ node { id } }', { node: () => ({ id: '1', __typename: 'Order' }) })),
      ...(await errorsOf('{ node { id } }', { node: () => ({ id: '1' }) })),
      // graphql-jit's words, as the service runs documents through it.
      new GraphQLError('Runtime Object type is not a possible type for "Node".', { path: ['node'] }),
      ...(await errorsOf('{ count }', { count: () => 1.5 })),
      ...(await errorsOf('{ list }', { list: () => 7 })),
    ];
    expect(faults).toHaveLength(6);
    for (const fault of faults) {
      expect(maskError(fault).extensions).toEqual({ code: 'INTERNAL', type: 'https://portico.dev/problems/internal' });
      expect(maskError(fault).message).toBe('Unexpected error.');
      expect(logLevelOf(fault)).toBe('error');
    }
  });

  it('about the request itself stay BAD_USER_INPUT, logged at debug', async () => {
    const [refused] = await errorsOf('query ($id: ID) { name(id: $id) }', { name: () => 'x' }, { id: null });
    expect(refused!.path).toEqual(['name']);
    expect(maskError(refused).extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(logLevelOf(refused)).toBe('debug');
  });
});
