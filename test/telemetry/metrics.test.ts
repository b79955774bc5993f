// The metrics' own rules, without a server: labels stay bounded whatever the traffic.
import parsePrometheus from 'parse-prometheus-text-format';
import { describe, expect, it } from 'vitest';
import { newId } from '../../src/db/ids.ts';
import { ENDPOINT_LABELS_MAX, Metrics } from '../../src/telemetry/metrics.ts';

describe('metrics', () => {
  it(`name at most ${ENDPOINT_LABELS_MAX} failing endpoints, counting failures at any further one as "other"`, async () => {
    const metrics = new Metrics();
    const endpoints = Array.from({ length: ENDPOINT_LABELS_MAX + 50 }, () => newId('webhookEndpoint'));
    for (const endpoint of endpoints) metrics.attempted('http_status', endpoint, Date.now());
    // An endpoint named once keeps its own label.
    metrics.attempted('no_response', endpoints[0]!, Date.now());
    const family = parsePrometheus((await metrics.exposition()).body).find((f) => f.name === 'portico_webhook_endpoint_failures_total')!;
    const byEndpoint = new Map(family.metrics.map((sample) => [sample.labels?.endpoint, Number(sample.value)]));
    expect(byEndpoint.size).toBe(ENDPOINT_LABELS_MAX + 1);
    expect(byEndpoint.get('other')).toBe(50);
    expect(byEndpoint.get(endpoints[0])).toBe(2);
  });

  it('count a successful attempt in the latency histogram, not as an endpoint failure', async () => {
    const metrics = new Metrics();
    metrics.attempted('succeeded', newId('webhookEndpoint'), Date.now() - 1500);
    const text = (await metrics.exposition()).body;
    expect(text).toMatch(/^portico_webhook_delivery_latency_seconds_count 1$/m);
    expect(text).toMatch(/^portico_webhook_delivery_latency_seconds_bucket\{le="2.5"\} 1$/m);
    expect(text).toMatch(/^portico_webhook_delivery_latency_seconds_bucket\{le="1"\} 0$/m);
    expect(text).not.toMatch(/^portico_webhook_endpoint_failures_total\{/m);
  });
});
