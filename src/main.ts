// Entry point: `node src/main.ts [all|api|worker]`. When tracing is configured it is installed first:
// its instrumentations see pg and ioredis only if those load after it, so the service itself
// (service.ts) is imported only then.
import { ConfigError, loadConfig, type TracingConfig } from './config.ts';

let tracing: TracingConfig | undefined;
try {
  tracing = loadConfig().tracing;
} catch (error) {
  // A bad setting is reported by the service's own start, with the usual words.
  if (!(error instanceof ConfigError)) throw error;
}
if (tracing) (await import('./telemetry/tracing.ts')).startTracing(tracing);
await import('./service.ts');
