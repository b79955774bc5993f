// Automatic persisted queries (Apollo's `extensions.persistedQuery`, sent by Apollo Client's and
// urql's persisted-query links) are not supported: every request carries its document. A request that
// sends only the hash is refused with the message those links read as "not supported", so that they
// send the document from then on; yoga's "Must provide query string." left urql failing every query.
import { createGraphQLError } from 'graphql-yoga';
import type { ServerPlugin } from './server-context.ts';

/** What the persisted-query links of Apollo Client and urql recognise. */
const PERSISTED_QUERY_NOT_SUPPORTED = 'PersistedQueryNotSupported';

export function usePersistedQueryRefusal(): ServerPlugin {
  return {
    onParams({ params }) {
      if (params.query != null || params.extensions?.persistedQuery == null) return;
      // A request that is not well-formed (no document), refused as yoga refuses the others (error-masking.ts).
      throw createGraphQLError(PERSISTED_QUERY_NOT_SUPPORTED, { extensions: { http: { status: 400 }, code: 'BAD_REQUEST' } });
    },
  };
}
