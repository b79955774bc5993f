import type { AddressInfo, Server } from 'node:net';

/** The TCP address a listening server is bound to. */
export function boundAddress(server: Server): AddressInfo {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the server is not listening on a TCP port');
  return address;
}
