// GraphQL's phases (parse, validate, execute) timed for Prometheus, in the series yoga's Prometheus
// plugin exposes (`graphql_envelop_phase_*`: its names, help, buckets and `operationType` label, so
// dashboards made for the plugin read them), timed here instead of by the plugin. Its hooks cost a
// request about 6 µs on a bare yoga server (a WeakMap entry per request, label sets copied and
// filtered per phase, arrays of handlers filtered per phase); these do one cached look-up and one
// observation per phase, and time each phase in microseconds where the plugin's whole milliseconds
// (`Date.now()`) counted a cached parse or validation as 0.
import { Kind, type DocumentNode } from 'graphql';
import type { PhaseHistograms } from '../telemetry/metrics.ts';
import { rootFields } from './root-fields.ts';
import { executionArgs, type ServerPlugin } from './server-context.ts';

/**
 * The type of the operation a document runs: `query`, `mutation` or `subscription`, or `undefined`
 * (as the plugin writes it) for a document that did not parse or names no operation it holds.
 * Documents are cached by yoga, so this is a look-up after a document's first request.
 */
function operationTypeOf(document: unknown, operationName: string | null | undefined): string {
  return (isDocument(document) && rootFields(document, operationName)?.operation.operation) || 'undefined';
}

/** envelop types a parse's result and a validation's document `any`: a document, or the parse's error. */
function isDocument(value: unknown): value is DocumentNode {
  return typeof value === 'object' && value !== null && 'kind' in value && value.kind === Kind.DOCUMENT;
}

function secondsSince(start: number): number {
  return (performance.now() - start) / 1000;
}

export function usePhaseMetrics(histograms: PhaseHistograms): ServerPlugin {
  return {
    onParse({ context }) {
      const start = performance.now();
      return ({ result }: { result: unknown }) => {
        histograms.parse.observe({ operationType: operationTypeOf(result, context.params.operationName) }, secondsSince(start));
      };
    },
    onValidate({ params: { documentAST }, context }) {
      const start = performance.now();
      const document: unknown = documentAST;
      return () => {
        histograms.validate.observe({ operationType: operationTypeOf(document, context.params.operationName) }, secondsSince(start));
      };
    },
    onExecute({ args }) {
      const start = performance.now();
      const { document, operationName } = executionArgs(args);
      return {
        onExecuteDone() {
          histograms.execute.observe({ operationType: operationTypeOf(document, operationName) }, secondsSince(start));
        },
      };
    },
  };
}
