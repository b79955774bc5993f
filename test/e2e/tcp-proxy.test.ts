// The fault-injection proxy (test/support/tcp-proxy.ts) against a plain echo server: each fault must
// look to a client the way the real failure would, or the fault tests built on it prove nothing.
import net from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

interface EchoServer {
  port: number;
  /** Connections the server has accepted so far. */
  accepted: number;
  /** Its side of the connections still open, so that a test can send unasked. */
  sockets: Set<net.Socket>;
  close(): Promise<void>;
}

async function startEchoServer(): Promise<EchoServer> {
  const sockets = new Set<net.Socket>();
  const echo: EchoServer = { port: 0, accepted: 0, sockets, close: () => Promise.resolve() };
  const server = net.createServer((socket) => {
    echo.accepted++;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  echo.port = (server.address() as net.AddressInfo).port;
  echo.close = async () => {
    sockets.forEach((socket) => socket.destroy());
    await new Promise((resolve) => server.close(resolve));
  };
  return echo;
}

interface Client {
  socket: net.Socket;
  /** Everything received so far. */
  readonly received: string;
  /** Settles once the socket has closed, with the error code that closed it or 'closed'. */
  ended: Promise<string>;
}

/** Connects without waiting for the connection: some faults reset it before or as it is established. */
function open(port: number): Client {
  const socket = net.connect({ port, host: '127.0.0.1', noDelay: true });
  let received = '';
  let error: NodeJS.ErrnoException | undefined;
  socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
  socket.on('error', (cause) => (error = cause));
  const ended = new Promise<string>((resolve) => socket.once('close', () => resolve(error?.code ?? 'closed')));
  return {
    socket,
    get received() {
      return received;
    },
    ended,
  };
}

async function connect(port: number): Promise<Client> {
  const client = open(port);
  await new Promise((resolve, reject) => client.socket.once('connect', resolve).once('error', reject));
  return client;
}

async function until(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await delay(10);
  }
}

async function roundTrip(client: Client, text: string): Promise<void> {
  const before = client.received;
  client.socket.write(text);
  await until(() => client.received === before + text, `"${text}" comes back`);
}

/** Absence can only be shown by waiting: this long, nothing may arrive. */
const SILENCE_MS = 300;

let echo: EchoServer;
let proxy: TcpProxy;
const clients: Client[] = [];

beforeEach(async () => {
  echo = await startEchoServer();
  proxy = await startTcpProxy({ host: '127.0.0.1', port: echo.port });
});

afterEach(async () => {
  clients.splice(0).forEach((client) => client.socket.destroy());
  await proxy.close();
  await echo.close();
});

async function tracked(client: Client | Promise<Client>): Promise<Client> {
  clients.push(await client);
  return client;
}

describe('TCP proxy', () => {
  it('forwards both ways in pass', async () => {
    expect(proxy.fault).toBe('pass');
    const client = await tracked(connect(proxy.port));
    await roundTrip(client, 'hello');
    await roundTrip(client, 'again');
    expect(proxy.openConnections).toBe(1);
    expect(echo.accepted).toBe(1);

    client.socket.end();
    expect(await client.ended).toBe('closed');
    await until(() => proxy.openConnections === 0 && echo.sockets.size === 0, 'both sides are closed');
  });

  it('points URLs at itself, keeping everything else', () => {
    expect(proxy.proxiedUrl('postgres://u:p@db.internal:5432/portico?sslmode=disable')).toBe(
      `postgres://u:p@127.0.0.1:${proxy.port}/portico?sslmode=disable`,
    );
    expect(proxy.proxiedUrl('redis://127.0.0.1:6379')).toBe(`redis://127.0.0.1:${proxy.port}`);
    expect(proxy.proxiedUrl('redis://:secret@[::1]:6379/2')).toBe(`redis://:secret@127.0.0.1:${proxy.port}/2`);
  });

  it('refuses new connections and resets open ones on refuse, and listens on the same port after the restore', async () => {
    const port = proxy.port;
    const client = await tracked(connect(port));
    await roundTrip(client, 'before');

    await proxy.set('refuse');
    expect(proxy.fault).toBe('refuse');
    expect(['ECONNRESET', 'closed']).toContain(await client.ended);
    await until(() => echo.sockets.size === 0, 'the upstream connection is closed too');
    expect(proxy.openConnections).toBe(0);
    await expect(connect(port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });

    await proxy.set('pass');
    expect(proxy.port).toBe(port);
    const again = await tracked(connect(port));
    await roundTrip(again, 'after');
  });

  it('resets open connections and every new one on reset', async () => {
    const client = await tracked(connect(proxy.port));
    await roundTrip(client, 'before');

    await proxy.set('reset');
    expect(await client.ended).toBe('ECONNRESET');
    await until(() => echo.sockets.size === 0, 'the upstream connection is closed too');

    // The kernel completes the handshake before the proxy sees the connection, so the client may
    // well see it established first; either way it must end in a reset without reaching the target.
    const late = open(proxy.port);
    clients.push(late);
    late.socket.on('connect', () => late.socket.write('lost'));
    expect(['ECONNRESET', 'closed']).toContain(await late.ended);
    expect(late.received).toBe('');
    expect(echo.accepted).toBe(1);

    await proxy.set('pass');
    await roundTrip(await tracked(connect(proxy.port)), 'after');
  });

  it('keeps connections open but loses every byte on blackhole, and forwards again after the restore', async () => {
    const client = await tracked(connect(proxy.port));
    await roundTrip(client, 'before');

    await proxy.set('blackhole');
    client.socket.write('lost');
    for (const socket of echo.sockets) socket.write('unasked');
    // Accepted, but never connected to the target.
    const late = await tracked(connect(proxy.port));
    late.socket.write('lost too');
    await delay(SILENCE_MS);
    expect(client.received).toBe('before');
    expect(late.received).toBe('');
    expect(echo.accepted).toBe(1);
    expect(client.socket.destroyed).toBe(false);
    expect(late.socket.destroyed).toBe(false);
    expect(proxy.openConnections).toBe(2);

    await proxy.set('pass');
    await roundTrip(client, 'after');
    expect(client.received).toBe('beforeafter');
    expect(echo.accepted).toBe(1);
    expect(late.received).toBe('');

    // Even a blackholed connection ends when the proxy goes down.
    await proxy.set('refuse');
    expect(['ECONNRESET', 'closed']).toContain(await late.ended);
  });

  it('delays every chunk on latency, keeping their order also when the latency changes', async () => {
    const client = await tracked(connect(proxy.port));
    await roundTrip(client, 'warm');

    const latencyMs = 150;
    await proxy.set({ latencyMs });
    const started = performance.now();
    await roundTrip(client, 'slow');
    // Once each way; a little slack for clocks that count in whole milliseconds.
    expect(performance.now() - started).toBeGreaterThanOrEqual(2 * latencyMs - 5);

    // Chunks sent at a long latency and then at none must still come back in the order sent.
    await proxy.set({ latencyMs: 400 });
    const words = Array.from({ length: 10 }, (_, index) => `<${index}>`);
    for (const [index, word] of words.entries()) {
      if (index === 5) await proxy.set('pass');
      client.socket.write(word);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await until(() => client.received === `warmslow${words.join('')}`, 'every word comes back in order');
  });

  it('resets the client when the target refuses', async () => {
    const unused = await startEchoServer();
    await unused.close();
    const nowhere = await startTcpProxy({ host: '127.0.0.1', port: unused.port });
    try {
      const client = await tracked(connect(nowhere.port));
      expect(await client.ended).toBe('ECONNRESET');
      await until(() => nowhere.openConnections === 0, 'the proxy forgets the connection');
    } finally {
      await nowhere.close();
    }
  });

  it('closes every connection and stops listening on close', async () => {
    const client = await tracked(connect(proxy.port));
    await roundTrip(client, 'hello');
    await proxy.close();
    expect(await client.ended).toBe('closed');
    await until(() => echo.sockets.size === 0, 'the upstream connection is closed too');
    expect(proxy.openConnections).toBe(0);
    await expect(connect(proxy.port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await expect(proxy.set('pass')).rejects.toThrow('closed');
  });
});
