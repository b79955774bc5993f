// The log's account of whether spans reach the collector: one line when exports start failing, one
// when they succeed again, and never a credential from the exporter's error. (The service as a
// process, against a collector that refuses, is in test/e2e/tracing.test.ts.)
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.ts';
import { reportingReachability } from '../../src/telemetry/collector-reachability.ts';

/** An exporter that answers each export with the next of `results`. */
function answering(results: ExportResult[]): SpanExporter {
  return {
    export: (_spans: ReadableSpan[], done: (result: ExportResult) => void) => done(results.shift()!),
    shutdown: () => Promise.resolve(),
  };
}

describe('collector reachability in the log', () => {
  it('says once that exports fail, with the reason and no password, and once that they succeed again', () => {
    const lines: { level: number; msg: string; reason?: string; failedExports?: number }[] = [];
    const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line) as (typeof lines)[number]) });
    const refused = {
      code: ExportResultCode.FAILED,
      error: new Error('connect ECONNREFUSED http://otel:hunter2@collector:4318/v1/traces'),
    };
    const exporter = reportingReachability(
      answering([
        { code: ExportResultCode.SUCCESS },
        refused,
        refused,
        refused,
        { code: ExportResultCode.SUCCESS },
        { code: ExportResultCode.SUCCESS },
      ]),
      logger,
    );
    const results: ExportResultCode[] = [];
    for (let i = 0; i < 6; i++) exporter.export([], (result) => results.push(result.code));
    // The exporter's answers pass through unchanged.
    expect(results).toEqual([0, 1, 1, 1, 0, 0].map((code) => (code ? ExportResultCode.FAILED : ExportResultCode.SUCCESS)));
    expect(lines.map(({ msg }) => msg)).toEqual([
      'traces cannot reach the collector; spans are dropped until it answers',
      'traces reach the collector again',
    ]);
    expect(lines[0]!.reason).toBe('connect ECONNREFUSED http://***@collector:4318/v1/traces');
    expect(lines[1]!.failedExports).toBe(3);
    expect(JSON.stringify(lines)).not.toContain('hunter2');
  });
});
