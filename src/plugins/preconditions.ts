// Conditional writes on REST (RFC 9110 §13). The service sends no validators (no ETag, no
// Last-Modified), so a precondition on one cannot be evaluated: `If-Match` naming tags names none of
// its representations, `If-Unmodified-Since` has no modification date to compare with, and
// `If-None-Match: *` asks for a representation not to exist where the write needs one. Such a write
// is refused with 412 before anything runs, where it was applied as if unconditional: a client
// relying on the precondition to avoid a lost update was told 2xx. What can hold without a tag of
// ours (`If-Match: *`, `If-None-Match` naming tags) holds. GraphQL's endpoint is no resource with
// representations to condition on, and ignores these headers.
import { isSafeMethod } from '../http/methods.ts';
import { faceOf, refuse } from '../refusals.ts';
import type { ServerPlugin } from './server-context.ts';

/** Why the request's precondition cannot hold, or undefined when it has none that cannot. */
function unevaluable(headers: Headers): string | undefined {
  const ifMatch = headers.get('if-match')?.trim();
  if (ifMatch !== undefined && ifMatch !== '*')
    return "If-Match names entity tags, and this service sends none: no representation of it has that tag. Send the write without If-Match (a representation's updatedAt tells whether it changed since it was read).";
  if (ifMatch === undefined && headers.has('if-unmodified-since'))
    return "If-Unmodified-Since cannot be evaluated: this service sends no Last-Modified. Send the write without it (a representation's updatedAt tells whether it changed since it was read).";
  if (headers.get('if-none-match')?.trim() === '*')
    return 'If-None-Match: * asks that the target not exist, and the resources this service writes to do.';
  return undefined;
}

export function useConditionalWrites(): ServerPlugin {
  return {
    onRequest({ request, url, endResponse }) {
      if (isSafeMethod(request.method) || faceOf(url.pathname) !== 'rest') return;
      const detail = unevaluable(request.headers);
      if (detail !== undefined) endResponse(refuse(request, { kind: 'precondition-failed', detail }));
    },
  };
}
