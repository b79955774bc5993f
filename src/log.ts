import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './config.ts';
import { requestContext } from './request-context.ts';

export type { Logger };

export type LogFormat = 'json' | 'pretty';

/** Where log lines are written: the service's on stdout; a command's on stderr, its stdout being its output. */
export type LogStream = 'stdout' | 'stderr';

/**
 * Where log lines go in `format`: JSON lines, or, for a person at a terminal, pino-pretty's readable
 * lines (loaded only then), written synchronously so that the last lines before an exit show.
 */
export async function logDestination(format: LogFormat, to: LogStream = 'stdout'): Promise<DestinationStream | undefined> {
  const fd = to === 'stdout' ? 1 : 2;
  if (format === 'json') return to === 'stdout' ? undefined : pino.destination({ fd, sync: true });
  const { default: pretty } = await import('pino-pretty');
  return pretty({
    destination: fd,
    colorize: process[to].isTTY,
    sync: true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service',
  });
}

/** JSON lines (on stdout unless told otherwise), each stamped with the request it belongs to; credentials are redacted. */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'portico' },
      timestamp: pino.stdTimeFunctions.isoTime,
      mixin: () => {
        const context = requestContext.getStore();
        if (!context) return {};
        return context.traceId ? { requestId: context.requestId, traceId: context.traceId } : { requestId: context.requestId };
      },
      redact: {
        paths: ['password', '*.password', 'databaseUrl', 'headers.authorization', 'headers["x-api-key"]'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
