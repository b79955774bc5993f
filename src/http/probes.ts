// Liveness and readiness for orchestrators and load balancers, answered before any GraphQL work.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HEALTH_PATH, READY_PATH } from '../paths.ts';
import { READ_METHODS, allowHeader, refusalParts } from '../refusals.ts';

export interface Probes {
  /** Resolves to a reason when the service should not receive traffic, undefined when it may. */
  notReadyReason(): Promise<string | undefined>;
  /** Figures for monitoring, added to every /ready answer; they do not decide readiness. */
  details(): Record<string, unknown>;
}

function send(res: ServerResponse, status: number, body: object): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

/** Answers GET /health (the process is up) and GET /ready (it can serve), and OPTIONS on both; false for anything else. */
export function answerProbe(req: IncomingMessage, res: ServerResponse, probes: Probes): boolean {
  const path = req.url?.split('?')[0];
  if (path !== HEALTH_PATH && path !== READY_PATH) return false;
  if (req.method === 'OPTIONS') {
    res.writeHead(204, { allow: allowHeader(READ_METHODS) }).end();
    return true;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    const answer = refusalParts(path, String(req.headers.accept ?? ''), {
      kind: 'method-not-allowed',
      detail: `${path} answers GET and HEAD, not ${req.method}.`,
      headers: { allow: allowHeader(READ_METHODS) },
    });
    res.writeHead(answer.status, answer.headers).end(answer.body);
    return true;
  }
  if (path === HEALTH_PATH) {
    send(res, 200, { status: 'ok' });
    return true;
  }
  probes.notReadyReason().then(
    (reason) =>
      reason === undefined
        ? send(res, 200, { status: 'ready', ...probes.details() })
        : send(res, 503, { status: 'unavailable', reason, ...probes.details() }),
    () => send(res, 503, { status: 'unavailable', reason: 'readiness check failed', ...probes.details() }),
  );
  return true;
}
