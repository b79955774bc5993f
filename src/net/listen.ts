// Listening on a port the configuration names: a port taken, not allowed or on no local address
// stops the start with one sentence naming the variable to change, for the API (PORT) and the
// metrics (METRICS_PORT) alike.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StartupError } from '../errors.ts';
import { boundAddress } from './bound-address.ts';

export function listenOn(server: Server, port: number, host: string, variable: 'PORT' | 'METRICS_PORT'): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') {
        reject(new StartupError(`Port ${port} on ${host} is already in use; stop the other process or set ${variable} to a free port.`));
      } else if (error.code === 'EACCES') {
        reject(new StartupError(`Not allowed to listen on port ${port}; set ${variable} above 1023 or run with the right privileges.`));
      } else if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND') {
        reject(new StartupError(`Cannot listen on ${host}: no such local address; fix HOST.`));
      } else {
        reject(error);
      }
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve(boundAddress(server));
    });
  });
}
