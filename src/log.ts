import { pino, type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from './config.ts';
import { requestContext } from './request-context.ts';

export type { Logger };

/** JSON lines on stdout, each stamped with the request it belongs to; credentials are redacted. */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'portico' },
      timestamp: pino.stdTimeFunctions.isoTime,
      mixin: () => {
        const context = requestContext.getStore();
        return context ? { requestId: context.requestId } : {};
      },
      redact: {
        paths: ['password', '*.password', 'databaseUrl', 'headers.authorization', 'headers["x-api-key"]'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
