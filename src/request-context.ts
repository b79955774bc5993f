// The request a piece of code runs for, without threading it through every call: logs pick the
// request id up from here, so a line written deep in a service still says which request it served.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { Face } from './telemetry/metrics.ts';

export interface RequestContext {
  requestId: string;
  /**
   * What the request turned out to be, for its metrics: set by the HTTP shell from the path, then by
   * the REST adapter (route id) or at GraphQL execution (root field); bounded values only.
   */
  face?: Face;
  operation?: string;
  /** The REST route's path template (`/users/{user_id}`), for the request's span. */
  route?: string;
  /** The trace the request belongs to, when tracing is on: stamped on its log lines. */
  traceId?: string;
  /** A database statement of this request ran past its timeout. */
  statementTimedOut?: boolean;
  /** The request queued webhook deliveries: the workers are woken once it has ended (webhooks/delivery-notifier.ts). */
  deliveriesQueued?: boolean;
}

export const requestContext = new AsyncLocalStorage<RequestContext>();

// Accept a caller's id only if it is safe to echo into headers and logs.
const INCOMING_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && INCOMING_ID.test(value) ? value : randomUUID();
}

/** Notes on the current request that PostgreSQL cancelled one of its statements for running too long. */
export function markStatementTimeout(): void {
  const request = requestContext.getStore();
  if (request) request.statementTimedOut = true;
}

/** Notes on the current request that it queued webhook deliveries. */
export function markDeliveriesQueued(): void {
  const request = requestContext.getStore();
  if (request) request.deliveriesQueued = true;
}
