// HTTP/1.1 pipelining: a client may send request after request on one connection without waiting
// for the answers. Node starts each as it is parsed, so one connection could run hundreds at once
// (every pool connection busy, the other clients waiting), though the answers go out one after
// another anyway. Here a connection's requests run one at a time, each once the one before it has
// been answered: MAX_CONNECTIONS_PER_CLIENT then bounds what one client runs at once.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Each busy connection's requests waiting for their turn, oldest first. */
const waiting = new WeakMap<Socket, (() => void)[]>();

/** Runs `serve` for this request once every request before it on its connection has been answered. */
export function inTurn(req: IncomingMessage, res: ServerResponse, serve: () => void): void {
  const socket = req.socket;
  const queue = waiting.get(socket);
  if (queue) {
    queue.push(() => run(socket, res, serve));
    return;
  }
  // Most connections carry one request at a time: it starts at once.
  waiting.set(socket, []);
  run(socket, res, serve);
}

function run(socket: Socket, res: ServerResponse, serve: () => void): void {
  // The client went away before this request's turn: nothing to answer.
  if (res.destroyed) return next(socket);
  res.once('close', () => next(socket));
  serve();
}

function next(socket: Socket): void {
  const queue = waiting.get(socket);
  const following = queue?.shift();
  if (following) following();
  else waiting.delete(socket);
}
