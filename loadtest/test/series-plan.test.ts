import { eventIdFor, occurrenceId, PUBLIC_TENANT_ID, seriesId } from '@adhoc-scheduler/shared';
import { describe, expect, it } from 'vitest';
import { PRECISE_OFFSET_MS, planSeries, seriesRequest } from '../src/scenarios/series.js';

const NOW = Date.UTC(2026, 10, 28, 9, 14, 42, 123);

describe("the series scenario's plan", () => {
  const plan = planSeries({ runId: 'lt-x', user: 'loadtest-x', count: 4, minutes: 3, aheadMs: 180_000, now: NOW });

  it('starts at the first whole minute at least --ahead away, and publishes every series at once', () => {
    expect(plan.firstMinute).toBe(Date.UTC(2026, 10, 28, 9, 18));
    expect(plan.requests.map((request) => request.publishAt)).toEqual([NOW, NOW, NOW, NOW]);
  });

  it('expects each series once a minute at its offset, the first at :00.250 and the others spread over the minute', () => {
    const dueOfSeries = (seq: number) => {
      const series = plan.requests.find((request) => request.seq === seq)?.eventId ?? '';
      const own = plan.occurrences.filter(({ eventId, dueAt }) => eventId === occurrenceId(series, dueAt));
      return own.map(({ dueAt }) => dueAt - plan.firstMinute);
    };
    expect(dueOfSeries(0)).toEqual([PRECISE_OFFSET_MS, 60_000 + PRECISE_OFFSET_MS, 120_000 + PRECISE_OFFSET_MS]);
    expect(dueOfSeries(1)).toEqual([15_000, 75_000, 135_000]);
    expect(dueOfSeries(3)).toEqual([45_000, 105_000, 165_000]);
    expect(plan.occurrences).toHaveLength(12);
    expect(plan.precise.size).toBe(3);
  });

  it('names series and occurrences as the scheduler does', () => {
    const first = plan.requests[0];
    expect(first?.eventId).toBe(seriesId(eventIdFor(PUBLIC_TENANT_ID, 'loadtest-x', 'lt-x-series-0', '')));
    expect(plan.occurrences[0]?.eventId).toBe(occurrenceId(first?.eventId ?? '', plan.firstMinute + PRECISE_OFFSET_MS));
  });

  it('publishes each series as a client would: every minute, from the first minute, as many times as the run lasts', () => {
    const request = JSON.parse(
      seriesRequest(plan.requests[1] as (typeof plan.requests)[number], 'loadtest-x', 'arn:aws:sns:us-east-1:000000000000:out', 64, plan),
    );
    expect(request).toMatchObject({
      schedule: 'cron(* * * * ? *)',
      start: '2026-11-28T09:18:00.000Z',
      count: 3,
      offset: 15_000,
      id: 'lt-x-series-1',
      user: 'loadtest-x',
    });
    expect(request.payload).toHaveLength(64);
    expect(request.date).toBeUndefined();
  });
});
