// The request a piece of code runs for, without threading it through every call: logs pick the
// request id up from here, so a line written deep in a service still says which request it served.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

export interface RequestContext {
  requestId: string;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();

// Accept a caller's id only if it is safe to echo into headers and logs.
const INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && INCOMING_ID.test(value) ? value : randomUUID();
}
