// A webhook receiver on 127.0.0.1 for tests: records every request (headers and the raw body), answers
// as the test tells it, and notices when one event is being delivered twice at the same time.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
  /** When its connection closed: answered, or given up by the sender. */
  closedAt?: number;
}

/** How to answer a request: a status (and headers, a body), or a misbehaviour. */
export type Answer =
  | { status: number; headers?: Record<string, string>; body?: string }
  | { hang: true }
  | { reset: true }
  | { slowBody: true }
  /** 200 and the start of its body, then the connection closed. */
  | { cut: true }
  /** `status` once `until` settles. */
  | { until: Promise<void>; status: number };

export interface Receiver {
  url: string;
  received: Received[];
  /** Deliveries (path and event id) that arrived again while the first was still being answered. */
  overlaps: string[];
  /** Decides each answer; by default, 200 at once. */
  answer: (request: Received, index: number) => Answer;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const inFlight = new Map<string, number>();
  const hanging = new Set<http.ServerResponse>();
  const receiver: Receiver = {
    url: '',
    received: [],
    overlaps: [],
    answer: () => ({ status: 200 }),
    close: async () => {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received: Received = {
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      const index = receiver.received.push(received) - 1;
      // One delivery is an event at one endpoint: the same event sent to two endpoints at once is no overlap.
      const delivery = `${received.path} ${String(request.headers['x-portico-event-id'] ?? '')}`;
      if ((inFlight.get(delivery) ?? 0) > 0) receiver.overlaps.push(delivery);
      inFlight.set(delivery, (inFlight.get(delivery) ?? 0) + 1);
      response.once('close', () => {
        inFlight.set(delivery, inFlight.get(delivery)! - 1);
        received.closedAt = Date.now();
      });
      const answer = receiver.answer(received, index);
      if ('hang' in answer) {
        hanging.add(response);
      } else if ('reset' in answer) {
        request.socket.destroy();
      } else if ('until' in answer) {
        void answer.until.then(() => response.writeHead(answer.status).end());
      } else if ('cut' in answer) {
        response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100' });
        response.write('partial', () => request.socket.destroy());
      } else if ('slowBody' in answer) {
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.write('partial');
        hanging.add(response);
      } else {
        response.writeHead(answer.status, answer.headers);
        response.end(answer.body ?? '');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}
