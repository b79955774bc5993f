// A logger whose lines a test reads back: each line parsed, in the order written.
import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import type { LogLevel } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';

export interface CapturedLogs {
  logger: Logger;
  logs: Record<string, unknown>[];
}

/** `onChunk` sees each chunk as written, before it is parsed (the credential audit does). */
export function captureLogs(level: LogLevel, onChunk?: (chunk: Buffer) => void): CapturedLogs {
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger(
    level,
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        onChunk?.(chunk);
        for (const line of chunk.toString('utf8').split('\n')) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    }),
  );
  return { logger, logs };
}
