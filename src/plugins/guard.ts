// The last line of defence against an exception in a plugin's request or response hook: the server
// under yoga would answer it with a 500 whose body is the error's stack. Here it becomes a 500 in the
// face's own error format, with no internals, and the cause is logged with the request id. A hook
// that failed because the client went away (its body stopped mid-way) is not a fault of ours.
import { INTERNAL_DETAIL } from '../errors.ts';
import type { Logger } from '../log.ts';
import { refuse } from '../refusals.ts';
import type { ServerPlugin } from './server-context.ts';

export function guardHooks(plugins: ServerPlugin[], options: { logger: Logger }): ServerPlugin[] {
  const internal = (request: Request, error: unknown, hook: string) => {
    if (request.signal.aborted) options.logger.debug({ err: error, hook }, 'client went away during the request');
    else options.logger.error({ err: error, hook }, 'unexpected error while handling a request');
    return refuse(request, { kind: 'internal', detail: INTERNAL_DETAIL });
  };
  // Hooks stay synchronous when they are: wrapping every one in an async function would cost a
  // promise per hook per request.
  const guarded = <A extends { request: Request }>(
    hook: (payload: A) => void | Promise<void>,
    plugin: object,
    name: string,
    answer: (payload: A, response: Response) => void,
  ) =>
    function (payload: A): void | Promise<void> {
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
  return plugins.map((plugin): ServerPlugin => {
    const { onRequest, onResponse } = plugin;
    return {
      ...plugin,
      ...(onRequest && { onRequest: guarded(onRequest, plugin, 'onRequest', (payload, response) => payload.endResponse(response)) }),
      ...(onResponse && { onResponse: guarded(onResponse, plugin, 'onResponse', (payload, response) => payload.setResponse(response)) }),
    };
  });
}
