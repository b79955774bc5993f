// graphql-js suggests names close to a misspelt one ("Did you mean …?"): of fields, arguments, types,
// input fields and enum values, in validation and in the coercion of variables alike. Suggestions map
// a schema for whoever probes it, so production hides them from every message graphql-js writes.
import { GraphQLError } from 'graphql';
import { placeOf } from './error-place.ts';

const SUGGESTION = /\s*Did you mean [^?]*\?/g;
export const SUGGESTION_HIDDEN = '[Suggestion hidden]';

/** The error with any suggestion in its message replaced by a mark that one was hidden. */
export function withoutSuggestions(error: GraphQLError): GraphQLError {
  if (!error.message.includes('Did you mean')) return error;
  return new GraphQLError(error.message.replace(SUGGESTION, ` ${SUGGESTION_HIDDEN}`).trim(), {
    ...placeOf(error),
    originalError: error.originalError,
    extensions: error.extensions,
  });
}
