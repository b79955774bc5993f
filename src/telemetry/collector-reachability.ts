// Whether spans reach the collector, said in the log when it changes: once when exports start
// failing (spans are then dropped, and nothing else would say so) and once when they succeed again,
// never per export, so a collector down for hours writes two lines.
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import type { Logger } from '../log.ts';

/** The longest reason quoted from an export's error. */
const REASON_MAX = 300;

/** Why an export failed, in a few words: its error's message, with any user:password@ in a URL masked. */
function reasonOf(error: Error | undefined): string {
  const message = error?.message ?? 'the exporter gave no reason';
  return message.replace(/\/\/[^\s/@]*@/g, '//***@').slice(0, REASON_MAX);
}

/** `exporter`, logging on `logger` each time its exports start failing and start succeeding again. */
export function reportingReachability(exporter: SpanExporter, logger: Logger): SpanExporter {
  let failedExports = 0;
  return {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
      exporter.export(spans, (result) => {
        if (result.code === ExportResultCode.SUCCESS) {
          if (failedExports > 0) logger.info({ failedExports }, 'traces reach the collector again');
          failedExports = 0;
        } else if (failedExports++ === 0) {
          logger.warn({ reason: reasonOf(result.error) }, 'traces cannot reach the collector; spans are dropped until it answers');
        }
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}
