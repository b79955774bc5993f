// GraphQL over HTTP: `operationName`, when given, is a string or null. Yoga checks the other
// parameters' types but not this one, and ran `{"operationName": 1}` as if no name were given; it is
// a request that is not well-formed, refused as yoga refuses the others (400 whatever the client
// accepts, error-masking.ts).
import { createGraphQLError } from 'graphql-yoga';
import type { ServerPlugin } from './server-context.ts';

export function useOperationNameCheck(): ServerPlugin {
  return {
    onParams({ params }) {
      const name: unknown = params.operationName;
      if (name == null || typeof name === 'string') return;
      throw createGraphQLError(
        `Expected "operationName" param to be a string or null, but given ${Array.isArray(name) ? 'array' : typeof name}.`,
        {
          extensions: { http: { status: 400 }, code: 'BAD_REQUEST' },
        },
      );
    },
  };
}
