// The load generator: a fixed number of requests, a fixed number in flight, over keep-alive
// connections, timing each. node:http rather than fetch: it costs the generator less CPU per request,
// so on a small machine more of it is left to measure the servers.
import http from 'node:http';

export interface HttpRequest {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface Run {
  requests: number;
  seconds: number;
  /** Milliseconds per request, in the order they completed. */
  latencies: number[];
}

/** Sends `requests` requests, `concurrency` at a time; every answer must be 2xx without GraphQL errors. */
export async function load(baseUrl: string, concurrency: number, requests: number, request: (i: number) => HttpRequest): Promise<Run> {
  const { hostname, port } = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  try {
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < requests) {
          const spec = request(next++);
          const t0 = performance.now();
          await send(agent, hostname, Number(port), spec);
          latencies.push(performance.now() - t0);
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  return { requests, seconds: (performance.now() - started) / 1000, latencies };
}

function send(agent: http.Agent, hostname: string, port: number, spec: HttpRequest): Promise<void> {
  return new Promise((resolve, reject) => {
    const body = spec.body === undefined ? undefined : Buffer.from(spec.body);
    const req = http.request(
      {
        agent,
        hostname,
        port,
        method: spec.method,
        path: spec.path,
        headers: { ...spec.headers, ...(body ? { 'content-type': 'application/json', 'content-length': body.length } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          // A benchmark of failures would measure the wrong thing.
          if ((res.statusCode ?? 0) >= 300 || text.startsWith('{"errors"') || text.includes('"errors":[')) {
            reject(new Error(`${spec.method} ${spec.path} answered ${res.statusCode}: ${text.slice(0, 300)}`));
          } else resolve();
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The value at quantile `q` (0–1) of the latencies. */
export function quantile(latencies: readonly number[], q: number): number {
  const sorted = [...latencies].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}
