// Starting makes much that is garbage once the service runs: the schema under construction, the
// ORM's metadata discovery, module sources on their way through type stripping. V8 keeps the heap it
// grew for them until a full collection, which a service at rest never triggers: it would hold about
// 180 MB of resident memory indefinitely, 40 MB of it startup's leftovers. One full collection once
// everything has started gives that back. The in-process inspector session runs it without a flag
// such as --expose-gc (which would hand `gc` to every module) and opens no port.
import { Session } from 'node:inspector/promises';

export async function collectStartupGarbage(): Promise<void> {
  const session = new Session();
  session.connect();
  try {
    await session.post('HeapProfiler.collectGarbage');
  } finally {
    session.disconnect();
  }
}
