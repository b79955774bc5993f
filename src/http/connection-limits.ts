// Connections one client may hold open at once. Each costs a file descriptor before any key is
// checked, and one that sends nothing is held until the request deadline: a client that opens
// thousands would take every descriptor the process has, and with them the service from everyone
// (new requests, database connections, webhook sockets). A client is its IPv4 address or IPv6 /64,
// as for unidentified requests' budgets; a reverse proxy in TRUST_PROXY carries many clients, and is
// not held to it. A connection over the bound is closed at once, before a byte is read.
import type net from 'node:net';
import type { Logger } from '../log.ts';
import { clientNetwork, networkMatcher } from '../net/cidr.ts';
import { Tally } from '../tally.ts';

/** Refusals are logged once, then at most once a minute with how many there were: a flood of them is no flood of lines. */
const LOG_EVERY_MS = 60_000;

export interface ConnectionLimits {
  perClient: number;
  trustProxy: readonly string[];
  logger: Logger;
  /** Counts each refused connection (metrics). */
  refused(): void;
}

export function limitConnectionsPerClient(server: net.Server, { perClient, trustProxy, logger, refused }: ConnectionLimits): void {
  const isProxy = networkMatcher(trustProxy);
  const open = new Tally<string>();
  let loggedAt = -Infinity;
  let unlogged = 0;
  server.on('connection', (socket: net.Socket) => {
    const address = socket.remoteAddress ?? '';
    if (isProxy(address)) return;
    const client = clientNetwork(address);
    if ((open.get(client) ?? 0) >= perClient) {
      socket.destroy();
      refused();
      unlogged++;
      const now = Date.now();
      if (now - loggedAt >= LOG_EVERY_MS) {
        logger.warn(
          { client, limit: perClient, refused: unlogged },
          'connection refused: the client holds MAX_CONNECTIONS_PER_CLIENT open',
        );
        loggedAt = now;
        unlogged = 0;
      }
      return;
    }
    open.add(client);
    socket.once('close', () => open.remove(client));
  });
}
