// A stranger trying random API keys, as its own process (as an attacker would be): sends requests
// with well-formed random keys at RATE a second until told to stop (SIGTERM). Prints a line when it
// starts sending and `{"sent":…,"refused":…}` when it has stopped. Usage: node bench/key-flood.ts URL RATE
//
// It writes raw HTTP/1.1 on a few keep-alive connections rather than using fetch, so that on a
// shared machine its own CPU stays small and the benchmark measures what the flood costs the service.
import net from 'node:net';
import { generateKeySecret } from '../src/services/api-key-secrets.ts';

const [url, rateText] = process.argv.slice(2);
const { hostname, port } = new URL(url!);
const rate = Number(rateText);
/** Ten thousand distinct keys, enough to evict every valid key from a cache that let them in. */
const requests = Array.from(
  { length: 10_000 },
  () => `GET /users?limit=1 HTTP/1.1\r\nHost: ${hostname}\r\nx-api-key: ${generateKeySecret('test').secret}\r\n\r\n`,
);
const CONNECTIONS = 8;
const MAX_IN_FLIGHT = 64;
/** Requests go out in bursts this often, as from an attacker's loop rather than one at a time. */
const TICK_MS = 20;

let stopped = false;
let sent = 0;
let answered = 0;
let refused = 0;
process.on('SIGTERM', () => (stopped = true));

const sockets = await Promise.all(
  Array.from(
    { length: CONNECTIONS },
    () =>
      new Promise<net.Socket>((resolve, reject) => {
        const socket = net.connect(Number(port), hostname, () => resolve(socket));
        socket.once('error', reject);
        let tail = '';
        socket.on('data', (chunk: Buffer) => {
          // Status lines may straddle chunks: keep the end of the last one.
          const text = tail + chunk.toString('latin1');
          answered += text.split('HTTP/1.1 ').length - 1;
          refused += text.split('HTTP/1.1 401 ').length - 1;
          tail = text.slice(-16);
        });
      }),
  ),
);

process.stdout.write('sending\n');
const started = performance.now();
while (!stopped) {
  const due = Math.floor(((performance.now() - started) / 1000) * rate);
  while (sent < due && sent - answered < MAX_IN_FLIGHT) {
    sockets[sent % CONNECTIONS]!.write(requests[sent % requests.length]!);
    sent++;
  }
  await new Promise((resolve) => setTimeout(resolve, TICK_MS));
}
const deadline = performance.now() + 5000;
while (answered < sent && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
for (const socket of sockets) socket.destroy();
process.stdout.write(`${JSON.stringify({ sent, refused })}\n`);
