// Entry point: `node src/main.ts [all|api|worker]`. When tracing is configured it is installed first,
// so that the service (service.ts) is traced from its first statement; when it is not, no
// OpenTelemetry SDK is loaded at all.
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
