// The last line of defence against an exception in a plugin's request or response hook: the server
// under yoga would answer it with a 500 whose body is the error's stack. Here it becomes a 500 in the
// face's own error format, with no internals, and the cause is logged with the request id. A hook
// that failed because the client went away (its body stopped mid-way) is not a fault of ours.
import type { Plugin } from 'graphql-yoga';
import { INTERNAL_DETAIL } from '../errors.ts';
import type { Logger } from '../log.ts';
import { refuse, type Face } from './deny.ts';

type HookedPlugin = Pick<Plugin, 'onRequest' | 'onResponse'>;

export function guardHooks<P extends HookedPlugin>(plugins: P[], options: { graphqlPath: string; logger: Logger }): P[] {
  const faceOf = (request: Request): Face => (new URL(request.url).pathname === options.graphqlPath ? 'graphql' : 'rest');
  const internal = (request: Request, error: unknown, hook: string) => {
    if (request.signal.aborted) options.logger.debug({ err: error, hook }, 'client went away during the request');
    else options.logger.error({ err: error, hook }, 'unexpected error while handling a request');
    return refuse(faceOf(request), request, { kind: 'internal', detail: INTERNAL_DETAIL });
  };
  // Hooks stay synchronous when they are: wrapping every one in an async function would cost a
  // promise per hook per request.
  const guarded = <A extends { request: Request }>(
    hook: (payload: A) => unknown,
    plugin: object,
    name: string,
    answer: (payload: A, response: Response) => void,
  ) =>
    function (payload: A) {
      try {
        const result = hook.call(plugin, payload);
        return result instanceof Promise
          ? result.catch((error: unknown) => answer(payload, internal(payload.request, error, name)))
          : result;
      } catch (error) {
        answer(payload, internal(payload.request, error, name));
        return undefined;
      }
    };
  return plugins.map((plugin): P => {
    const { onRequest, onResponse } = plugin;
    return {
      ...plugin,
      ...(onRequest && { onRequest: guarded(onRequest, plugin, 'onRequest', (payload, response) => payload.endResponse(response)) }),
      ...(onResponse && { onResponse: guarded(onResponse, plugin, 'onResponse', (payload, response) => payload.setResponse(response)) }),
    };
  });
}
