// Serving the metrics off the public API: on a port of their own (METRICS_PORT, for a network only
// Prometheus reaches), or on the service's port behind a bearer token (METRICS_TOKEN); with both,
// the own port also asks for the token. Neither set: not served at all.
import { timingSafeEqual } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOn } from '../net/listen.ts';
import { METRICS_PATH } from '../paths.ts';
import type { Metrics } from './metrics.ts';

export interface MetricsAccess {
  port: number | undefined;
  token: string | undefined;
}

function authorized(req: IncomingMessage, token: string | undefined): boolean {
  if (token === undefined) return true;
  // The scheme's name is case-insensitive (RFC 9110 §11.1); the token is compared in constant time.
  const match = /^bearer (.*)$/i.exec(req.headers.authorization ?? '');
  const sent = Buffer.from(match?.[1] ?? '');
  const expected = Buffer.from(token);
  return sent.length === expected.length && timingSafeEqual(sent, expected);
}

/** Answers GET /metrics; false for any other path. */
export function answerMetrics(req: IncomingMessage, res: ServerResponse, metrics: Metrics, token: string | undefined): boolean {
  if (req.url?.split('?')[0] !== METRICS_PATH) return false;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD' }).end();
  } else if (!authorized(req, token)) {
    res
      .writeHead(401, { 'www-authenticate': 'Bearer realm="metrics"', 'content-type': 'text/plain' })
      .end('Send the metrics token: Authorization: Bearer <METRICS_TOKEN>.\n');
  } else {
    metrics.exposition().then(
      ({ contentType, body }) =>
        res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : body),
      () => res.writeHead(500, { 'content-type': 'text/plain' }).end('Metrics could not be collected.\n'),
    );
  }
  return true;
}

/** Whether /metrics is served anywhere: if not, nothing reads what a request would count (Metrics.served). */
export function metricsServed(access: MetricsAccess): boolean {
  return access.port !== undefined || access.token !== undefined;
}

/** Whether the service's own port serves /metrics: only behind a token, and only when no port of its own is set. */
export function metricsOnServicePort(access: MetricsAccess): boolean {
  return access.port === undefined && access.token !== undefined;
}

/** The metrics port's server: /metrics and nothing else. */
export async function startMetricsServer(
  metrics: Metrics,
  access: MetricsAccess & { port: number },
  host: string,
): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer({ requestTimeout: 10_000, headersTimeout: 10_000 }, (req, res) => {
    if (!answerMetrics(req, res, metrics, access.token))
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`Only ${METRICS_PATH} is served here.\n`);
  });
  const { port } = await listenOn(server, access.port, host, 'METRICS_PORT');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
