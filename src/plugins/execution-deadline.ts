// Stops GraphQL execution (no further resolver starts) once the request's deadline has answered or
// its client has gone, on both faces. Yoga's own cancellation hands the executor the fetch request's
// signal, a proxy that the executor consults before every field; the deadline's plain signal, passed
// down in the server context, costs a property read instead.
import type { Plugin } from 'graphql-yoga';

export function useExecutionDeadline(): Plugin {
  return {
    onExecute({ args }) {
      (args as { signal?: AbortSignal }).signal = (args.contextValue as { deadline?: AbortSignal }).deadline;
    },
  };
}
