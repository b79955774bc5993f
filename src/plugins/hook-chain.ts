// The server's plugins' per-request hooks run as one hook of each kind, in the plugins' order: the
// HTTP hooks (onRequest, onRequestParse, onResponse) and execution's onExecute with its onExecuteDone.
// Yoga, its server adapter and envelop call every plugin's hook through promise helpers that
// allocate a payload with its closures and a chain of promise-like objects per hook per request:
// with a dozen plugins that was about a tenth of everything a `user(id)` request allocated. Here a
// hook that returns nothing costs a function call, and only a hook that returns a promise makes one.
//
// The chain is also the last line of defence against an exception in a request or response hook:
// the server under yoga would answer it with a 500 whose body is the error's stack. Here it becomes
// a 500 in the face's own error format, with no internals, and the cause is logged with the request
// id. A hook that failed because the client went away (its body stopped mid-way) is not a fault of
// ours. Request-parse and execution hooks refuse requests by throwing GraphQL errors, which yoga and
// envelop answer; those pass through untouched.
import { INTERNAL_DETAIL } from '../errors.ts';
import type { Logger } from '../log.ts';
import { whenSettled } from '../maybe-promise.ts';
import { refuse } from '../refusals.ts';
import type { ServerPlugin } from './server-context.ts';

type RequestPayload = Parameters<NonNullable<ServerPlugin['onRequest']>>[0];
type ResponsePayload = Parameters<NonNullable<ServerPlugin['onResponse']>>[0];
type ParseHook = NonNullable<ServerPlugin['onRequestParse']>;
type ParsePayload = Parameters<ParseHook>[0];
type ParseResult = ReturnType<ParseHook> | Awaited<ReturnType<ParseHook>>;
type OnRequestParseDoneHook = NonNullable<Exclude<Awaited<ReturnType<ParseHook>>, void>['onRequestParseDone']>;
type ExecuteHook = NonNullable<ServerPlugin['onExecute']>;
type ExecutePayload = Parameters<ExecuteHook>[0];
type ExecuteResult = ReturnType<ExecuteHook> | Awaited<ReturnType<ExecuteHook>>;
type ExecuteDoneHook = NonNullable<Exclude<Awaited<ReturnType<ExecuteHook>>, void>['onExecuteDone']>;
type ExecuteDonePayload = Parameters<ExecuteDoneHook>[0];
type ExecuteDoneResult = ReturnType<ExecuteDoneHook> | Awaited<ReturnType<ExecuteDoneHook>>;
type StreamHooks = Exclude<Awaited<ReturnType<ExecuteDoneHook>>, void>;

/** A plugin's hook bound to its plugin, as yoga would call it; none when the plugin has none. */
function bound<P, R>(plugin: ServerPlugin, hook: ((payload: P) => R) | undefined): ((payload: P) => R)[] {
  return hook ? [(payload: P) => hook.call(plugin, payload)] : [];
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && 'then' in value && typeof value.then === 'function';
}

/**
 * Runs `hooks` in order from `from` until one ends the request (`stopped`). Synchronous while the
 * hooks are; `failed` answers a hook's exception, and `null` lets it propagate. `each` sees what
 * each hook returned, awaited.
 */
function runHooks<P, R>(
  hooks: ((payload: P) => R)[],
  payload: P,
  stopped: () => boolean,
  failed: ((error: unknown) => void) | null,
  each?: (result: R | Awaited<R>) => void,
  from = 0,
): void | Promise<void> {
  for (let i = from; i < hooks.length && !stopped(); i++) {
    let result: R;
    try {
      result = hooks[i]!(payload);
    } catch (error) {
      if (!failed) throw error;
      failed(error);
      continue;
    }
    if (isThenable(result)) {
      const next = (value: Awaited<R>) => {
        each?.(value);
        return runHooks(hooks, payload, stopped, failed, each, i + 1);
      };
      const resumed = Promise.resolve(result) as Promise<Awaited<R>>;
      return failed
        ? resumed.then(next, (error: unknown) => {
            failed(error);
            return runHooks(hooks, payload, stopped, failed, each, i + 1);
          })
        : resumed.then(next);
    }
    each?.(result);
  }
}

/** A payload's `endResponse` that also tells the chain the request was answered, so no later hook runs. */
function answering(outer: { endResponse(response: Response): void }): { endResponse(response: Response): void; ended(): boolean } {
  let ended = false;
  return {
    endResponse(response) {
      if (response) ended = true;
      outer.endResponse(response);
    },
    ended: () => ended,
  };
}

/** The onExecuteDone hooks of one execution as one, with the stream hooks they return combined. */
function executeDone(hooks: ExecuteDoneHook[]): ExecuteDoneHook {
  return (outer) => {
    const streams: StreamHooks[] = [];
    const payload: ExecuteDonePayload = {
      ...outer,
      setResult(result) {
        payload.result = result;
        outer.setResult(result);
      },
    };
    const collect = (result: ExecuteDoneResult) => {
      if (result && !isThenable(result)) streams.push(result);
    };
    const combined = (): StreamHooks | undefined => {
      if (streams.length === 0) return undefined;
      const onNext = streams.flatMap((stream) => (stream.onNext ? [stream.onNext] : []));
      return {
        onNext: (next) => runHooks(onNext, next, () => false, null),
        onEnd: () => streams.forEach((stream) => stream.onEnd?.()),
      };
    };
    return whenSettled(
      runHooks(hooks, payload, () => false, null, collect),
      combined,
    );
  };
}

export function chainHooks(plugins: ServerPlugin[], options: { logger: Logger }): ServerPlugin[] {
  const internal = (request: Request, error: unknown, hook: string) => {
    if (request.signal.aborted) options.logger.debug({ err: error, hook }, 'client went away during the request');
    else options.logger.error({ err: error, hook }, 'unexpected error while handling a request');
    return refuse(request, { kind: 'internal', detail: INTERNAL_DETAIL });
  };
  const onRequest = plugins.flatMap((plugin) => bound(plugin, plugin.onRequest));
  const onRequestParse = plugins.flatMap((plugin) => bound(plugin, plugin.onRequestParse));
  const onResponse = plugins.flatMap((plugin) => bound(plugin, plugin.onResponse));
  const onExecute = plugins.flatMap((plugin) => bound(plugin, plugin.onExecute));

  const chain: ServerPlugin = {
    onRequest(outer) {
      const end = answering(outer);
      // One payload for every hook; what one hook changes, the next sees.
      const payload: RequestPayload = {
        ...outer,
        setRequest(request) {
          payload.request = request;
          outer.setRequest(request);
        },
        setRequestHandler(handler) {
          payload.requestHandler = handler;
          outer.setRequestHandler(handler);
        },
        endResponse: end.endResponse,
      };
      return runHooks(onRequest, payload, end.ended, (error) => payload.endResponse(internal(payload.request, error, 'onRequest')));
    },
    onRequestParse(outer) {
      const end = answering(outer);
      const done: OnRequestParseDoneHook[] = [];
      const payload: ParsePayload = {
        ...outer,
        setRequestParser(parser) {
          payload.requestParser = parser;
          outer.setRequestParser(parser);
        },
        endResponse: end.endResponse,
      };
      const collect = (result: ParseResult) => {
        if (result && !isThenable(result) && result.onRequestParseDone) done.push(result.onRequestParseDone);
      };
      const finished = () =>
        done.length === 0
          ? undefined
          : { onRequestParseDone: (parsed: Parameters<OnRequestParseDoneHook>[0]) => runHooks(done, parsed, () => false, null) };
      return whenSettled(runHooks(onRequestParse, payload, end.ended, null, collect), finished);
    },
    onExecute(outer) {
      let stopped = false;
      const done: ExecuteDoneHook[] = [];
      const payload: ExecutePayload = {
        ...outer,
        setExecuteFn(execute) {
          payload.executeFn = execute;
          outer.setExecuteFn(execute);
        },
        setResultAndStopExecution(result) {
          stopped = true;
          outer.setResultAndStopExecution(result);
        },
      };
      const collect = (result: ExecuteResult) => {
        if (result && !isThenable(result) && result.onExecuteDone) done.push(result.onExecuteDone);
      };
      // What each onExecuteDone sees is the result the one before it set; envelop runs a hook's
      // onExecuteDone even when a later hook stopped execution with a result of its own.
      const finished = () => (done.length === 0 ? undefined : { onExecuteDone: executeDone(done) });
      return whenSettled(
        runHooks(onExecute, payload, () => stopped, null, collect),
        finished,
      );
    },
    onResponse(outer) {
      const payload: ResponsePayload = {
        ...outer,
        setResponse(response) {
          payload.response = response;
          outer.setResponse(response);
        },
      };
      return runHooks(
        onResponse,
        payload,
        () => false,
        (error) => payload.setResponse(internal(payload.request, error, 'onResponse')),
      );
    },
  };
  // The chain stands where the plugins stood: before every hook that yoga adds after them.
  const rest = plugins.map((plugin): ServerPlugin => {
    const others = { ...plugin };
    delete others.onRequest;
    delete others.onRequestParse;
    delete others.onResponse;
    delete others.onExecute;
    return others;
  });
  return [chain, ...rest];
}
