// A TCP proxy that fault tests put between the service and PostgreSQL or Redis, so that the dependency
// can go away, reset connections, swallow packets or slow down at the network level while the real
// server stays healthy. Stopping the real server (as test/support/redis.ts can) only covers the first
// of those, and a hung or slow network is what timeouts and deadlines exist for. node:net suffices, so
// the tests need no external tool such as toxiproxy.
import net from 'node:net';

export type Fault =
  /** Forward bytes both ways. */
  | 'pass'
  /** The dependency is down: the port refuses new connections and every open one is reset on both sides. */
  | 'refuse'
  /** Still listening, but every open connection is reset at once and every new one as soon as it is accepted. */
  | 'reset'
  /**
   * Packets are dropped: connections stay open (and new ones are accepted), but every byte either way,
   * and every FIN, is discarded, also after a restore. Connections accepted during the blackhole never
   * reach the target.
   */
  | 'blackhole'
  /**
   * Packets are held, not lost: connections stay open (and new ones are accepted), but every byte
   * either way, and every FIN, waits until the fault ends, and then all of it arrives, in the order it
   * was sent over all connections, as a network that retransmits delivers it once the path is back.
   * A statement its client gave up on meanwhile still reaches the server and runs.
   */
  | 'stall'
  /** Forward everything, each chunk delayed by `latencyMs`, order preserved per direction. */
  | { latencyMs: number };

export interface TcpProxy {
  /** The port the proxy listens on (127.0.0.1); stays the same across faults, also across 'refuse'. */
  readonly port: number;
  /** The URL (postgres://, redis://, ...) with host and port replaced by the proxy's, keeping everything else. */
  proxiedUrl(url: string): string;
  /** Switches to a fault (or back to 'pass'); resolves once the change is in effect (e.g. listening again after 'refuse'). */
  set(fault: Fault): Promise<void>;
  readonly fault: Fault;
  /** Client connections currently open through the proxy. */
  readonly openConnections: number;
  /** Chunks (and FINs) a stall holds, either way. */
  readonly held: number;
  /** Stops listening and destroys every connection. */
  close(): Promise<void>;
}

const HOST = '127.0.0.1';

/** RST rather than FIN: what a peer that crashed or a firewall that forgot the connection sends. */
function reset(socket: net.Socket): void {
  if (socket.destroyed) return;
  // resetAndDestroy on a socket still connecting would wait for the connection only to reset it.
  if (socket.connecting) socket.destroy();
  else socket.resetAndDestroy();
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let fault: Fault = 'pass';
  let closed = false;
  let server: net.Server | undefined;
  let port = 0;
  const clients = new Set<net.Socket>();
  const upstreams = new Set<net.Socket>();
  /** What a stall holds, over every connection in the order it was sent. */
  let held: { to: net.Socket; chunk: Buffer | 'end' }[] = [];
  // Retransmissions reach the far side one after another, not all at once: what each connection held
  // gets a moment to be read (a statement to run) before the next connection's arrives.
  const deliverHeld = async () => {
    const due = held;
    held = [];
    let previous: net.Socket | undefined;
    for (const { to, chunk } of due) {
      if (previous && previous !== to) await new Promise((resolve) => setTimeout(resolve, 50));
      previous = to;
      if (!to.writable) continue;
      if (chunk === 'end') to.end();
      else to.write(chunk);
    }
  };

  const track = (sockets: Set<net.Socket>, socket: net.Socket) => {
    sockets.add(socket);
    // Errors are answered by the 'close' handlers below; without a listener they would crash the run.
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  };
  // Waits for the sockets' 'close', which comes after the listening server has already let go of them,
  // so that openConnections agrees with the fault once set() or close() resolves.
  const endAll = (end: (socket: net.Socket) => void) =>
    Promise.all(
      [...clients, ...upstreams].map((socket) => {
        const closed = new Promise((resolve) => (socket.closed ? resolve(undefined) : socket.once('close', resolve)));
        end(socket);
        return closed;
      }),
    );

  // One queue per direction, drained by a single timer, so that chunks keep their order even when the
  // latency changes between them (timers of different durations may fire in any order). There is no
  // backpressure: test traffic is small, and a slow reader should slow the proxy no more than a network.
  const forward = (from: net.Socket, to: net.Socket) => {
    const queue: { due: number; chunk: Buffer | 'end' }[] = [];
    let timer: NodeJS.Timeout | undefined;
    const drain = () => {
      timer = undefined;
      while (queue[0] && queue[0].due <= Date.now()) {
        const { chunk } = queue.shift()!;
        // A side may have closed meanwhile; what was still under way is lost, as on a real network.
        if (!to.writable) continue;
        if (chunk === 'end') to.end();
        else to.write(chunk);
      }
      if (queue[0]) timer = setTimeout(drain, queue[0].due - Date.now());
    };
    const enqueue = (chunk: Buffer | 'end') => {
      if (fault === 'stall') {
        held.push({ to, chunk });
        return;
      }
      const latencyMs = typeof fault === 'object' ? fault.latencyMs : 0;
      queue.push({ due: Math.max(Date.now() + latencyMs, queue.at(-1)?.due ?? 0), chunk });
      if (!timer) drain();
    };
    from.on('data', (chunk: Buffer) => {
      if (fault !== 'blackhole') enqueue(chunk);
    });
    // A FIN is a packet too: in a blackhole it is lost, and the other side learns of the close only
    // from its own timeouts (PostgreSQL ending a transaction left idle, say).
    from.on('end', () => {
      if (fault !== 'blackhole') enqueue('end');
    });
    to.on('close', () => clearTimeout(timer));
  };

  const accept = (client: net.Socket) => {
    track(clients, client);
    if (fault === 'reset') return reset(client);
    if (fault === 'blackhole') {
      // Read and drop, so that the client's writes succeed as they would before the packets are lost.
      client.on('data', () => undefined);
      return;
    }
    // The upstream socket holds the client's bytes until it is connected.
    const upstream = net.connect({ host: target.host, port: target.port, noDelay: true });
    track(upstreams, upstream);
    forward(client, upstream);
    forward(upstream, client);
    // An error on one side (a reset, or the target refusing) resets the other, as the target would.
    client.on('close', (hadError) => hadError && reset(upstream));
    upstream.on('close', (hadError) => hadError && reset(client));
  };

  const listen = async () => {
    // Someone else may hold the port for a moment between 'refuse' and the restore.
    for (const deadline = Date.now() + 5000; ; await new Promise((resolve) => setTimeout(resolve, 50))) {
      const candidate = net.createServer({ noDelay: true }, accept);
      try {
        await new Promise<void>((resolve, reject) => candidate.once('error', reject).listen(port, HOST, resolve));
        server = candidate;
        port = (candidate.address() as net.AddressInfo).port;
        return;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || Date.now() > deadline) throw error;
      }
    }
  };
  const unlisten = async () => {
    const closing = server;
    if (!closing) return;
    server = undefined;
    // close() calls back only once every connection it accepted is gone.
    await new Promise((resolve) => closing.close(resolve));
  };

  const apply = async (next: Fault) => {
    if (closed) throw new Error('the TCP proxy is closed');
    fault = next;
    // Stop listening first: a connection accepted while the others are being reset would slip through.
    if (next !== 'stall') await deliverHeld();
    if (next === 'refuse') await Promise.all([unlisten(), endAll(reset)]);
    else if (next === 'reset') await endAll(reset);
    else if (!server) await listen();
  };
  // Changes run one after the other, so that a restore cannot overtake the 'refuse' before it.
  let changes = Promise.resolve();

  await listen();
  return {
    get port() {
      return port;
    },
    proxiedUrl(url) {
      const parsed = new URL(url);
      parsed.hostname = HOST;
      parsed.port = String(port);
      return parsed.toString();
    },
    set(next) {
      const change = changes.then(() => apply(next));
      changes = change.catch(() => undefined);
      return change;
    },
    get fault() {
      return fault;
    },
    get openConnections() {
      return clients.size;
    },
    get held() {
      return held.length;
    },
    async close() {
      closed = true;
      await changes;
      await Promise.all([unlisten(), endAll((socket) => socket.destroy())]);
    },
  };
}
