// The database's availability as the service tracks it: an outage noticed by a request is watched by
// a probe of its own, whose lines belong to no request.
import { describe, expect, it } from 'vitest';
import { DatabaseAvailability } from '../../src/db/availability.ts';
import { requestContext } from '../../src/request-context.ts';
import { captureLogs } from '../support/captured-logs.ts';
import { eventually } from '../support/steady-load.ts';

describe('the availability probe', () => {
  it('logs the end of an outage a request noticed without that request’s id, long after it ended', async () => {
    const { logger, logs } = captureLogs('info');
    let answers = false;
    const availability = new DatabaseAvailability(
      logger,
      async () => {
        if (!answers) throw new Error('still down');
      },
      20,
    );
    try {
      requestContext.run({ requestId: 'the-request-that-noticed' }, () => availability.failed(new Error('connection refused')));
      expect(logs.find((line) => String(line.msg).startsWith('database unreachable'))?.requestId).toBe('the-request-that-noticed');
      answers = true;
      await eventually(() => availability.available, 'the probe to find the database back', 5_000);
      const back = logs.find((line) => line.msg === 'database reachable again');
      expect(back).toBeDefined();
      expect(back!.requestId).toBeUndefined();
    } finally {
      availability.close();
    }
  });

  it('refuses calls only once an outage has outlasted a probe, and until a probe finds the database back', async () => {
    const { logger } = captureLogs('info');
    let answers = false;
    let probes = 0;
    const availability = new DatabaseAvailability(
      logger,
      async () => {
        probes += 1;
        if (!answers) throw new Error('still down');
      },
      20,
    );
    try {
      // One lost connection: not refused, and over with the next call that succeeds.
      availability.failed(new Error('connection reset'));
      expect(availability.refusing).toBe(false);
      availability.succeeded();
      expect([availability.available, availability.refusing]).toEqual([true, false]);

      availability.failed(new Error('connection refused'));
      expect(availability.refusing).toBe(false);
      await eventually(() => availability.refusing, 'calls are refused once probes failed', 5_000);
      expect(probes).toBeGreaterThan(0);
      answers = true;
      await eventually(() => availability.available, 'the probe to find the database back', 5_000);
      expect(availability.refusing).toBe(false);
    } finally {
      availability.close();
    }
  });
});
