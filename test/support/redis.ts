// A private Redis server for a test file: a real redis-server process on a free loopback port, which
// the test can stop and start again (the machine's shared Redis must not be stopped under others).
// The binary is Debian's redis-server (REDIS_SERVER_PATH overrides); `npm test` installs it when it
// may (scripts/ensure-test-tools.sh).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';

const CANDIDATES = [process.env.REDIS_SERVER_PATH, '/usr/bin/redis-server', '/usr/local/bin/redis-server', '/usr/sbin/redis-server'];

export const REDIS_SERVER_PATH = CANDIDATES.find((candidate): candidate is string => !!candidate && existsSync(candidate));

/** CI must run the Redis tests; elsewhere they are reported skipped when no redis-server is installed. */
export const SKIP_REDIS = !process.env.CI && REDIS_SERVER_PATH === undefined;

export interface TestRedis {
  url: string;
  /** Stops the server (SIGTERM) and waits until its port refuses connections. */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.write('PING\r\n');
      socket.once('data', (data) => {
        socket.destroy();
        // A Redis that asks for a password answers too.
        resolve(/^(\+PONG|-NOAUTH)/.test(data.toString()));
      });
    });
    socket.once('error', () => resolve(false));
  });
}

async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A throw-away redis-server on a free port; with `password`, it asks for that password (`requirepass`). */
export async function startTestRedis({ password }: { password?: string } = {}): Promise<TestRedis> {
  if (!REDIS_SERVER_PATH) {
    throw new Error("No redis-server found: install Debian's redis-server package or set REDIS_SERVER_PATH.");
  }
  const binary = REDIS_SERVER_PATH;
  let port = await freePort();
  let child: ChildProcess | undefined;
  let output = '';

  const start = async () => {
    // Nothing on disk: the server is thrown away with the test.
    const guard = password === undefined ? [] : ['--requirepass', password];
    child = spawn(
      binary,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', ...guard],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    let running = true;
    child.once('exit', () => (running = false));
    await until(async () => {
      if (!running) throw new Error(`redis-server exited before answering:\n${output}`);
      return answers(port);
    }, `redis-server answers on port ${port}`);
  };
  const stop = async () => {
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    await until(async () => !(await answers(port)), `port ${port} is closed`);
  };

  // The port was free when picked, but another test may bind it before redis-server does: then
  // redis-server exits saying so, and another port is picked.
  for (let tries = 1; ; tries++) {
    try {
      await start();
      break;
    } catch (error) {
      if (tries === 5 || !output.includes('Address already in use')) throw error;
      output = '';
      port = await freePort();
    }
  }
  return { url: `redis://127.0.0.1:${port}`, start, stop };
}
