import { describe, expect, it } from 'vitest';
import type { RunResult } from '../src/report/results.js';
import { summary } from '../src/report/summary.js';
import { stageBreakdown } from '../src/stages.js';
import type { DeliveryCounts } from '../src/tracker.js';

const DUE = 1_800_000_000_000;

describe('where lateness arose', () => {
  it('measures from the publish start, so that a consumer that had the message before the call returned is not negative', () => {
    // The emulator puts the message on the consumer's queue before it answers the publish.
    const deliveries = new Map([
      // SNS put a on the consumer's queue 3 ms after its publish started, and the consumer had it 2 ms later.
      ['a', { dueAt: DUE, receivedAt: DUE + 6, queuedAt: DUE + 4 }],
      ['b', { dueAt: DUE, receivedAt: DUE + 40, queuedAt: undefined }],
    ]);
    const traces = {
      a: { queuedAt: DUE - 5000, receivedAt: DUE - 900, publishStartedAt: DUE + 1, publishEndedAt: DUE + 9 },
      b: { receivedAt: DUE - 700, publishStartedAt: DUE + 30, publishEndedAt: DUE + 35 },
    };
    const stages = stageBreakdown(deliveries, traces);
    // Only where its send to the delay queue was seen.
    expect(stages.queuedBeforeDue).toMatchObject({ count: 1, min: 5000 });
    expect(stages.publishStartToConsumer).toMatchObject({ negative: 0, min: 5, max: 10 });
    expect(stages.publishCall).toMatchObject({ min: 5, max: 8 });
    // Split only where the receive carried the queue's SentTimestamp.
    expect(stages.publishStartToQueue).toMatchObject({ count: 1, min: 3, max: 3 });
    expect(stages.queueToConsumer).toMatchObject({ count: 1, min: 2, max: 2 });
    expect(Object.keys(stages).sort()).toEqual([
      'mostLate',
      'publishCall',
      'publishStartLateness',
      'publishStartToConsumer',
      'publishStartToQueue',
      'queueToConsumer',
      'queuedBeforeDue',
      'receivedBeforeDue',
    ]);
    // Most late first; each one's lateness is its two stages added up.
    expect(stages.mostLate.map((event) => event.latenessMs)).toEqual([40, 6]);
    for (const event of stages.mostLate)
      expect((event.publishStartLatenessMs ?? 0) + (event.publishStartToConsumerMs ?? 0)).toBe(event.latenessMs);
    const [, a] = stages.mostLate;
    expect((a?.publishStartToQueueMs ?? 0) + (a?.queueToConsumerMs ?? 0)).toBe(a?.publishStartToConsumerMs);
  });
});

function counts(extra: Partial<DeliveryCounts>): DeliveryCounts {
  return {
    expected: 0,
    publishFailed: 0,
    delivered: 0,
    missing: 0,
    duplicated: 0,
    early: 0,
    earlyPublished: 0,
    late: 0,
    warmup: 0,
    unexpected: 0,
    wrongScheduledAt: 0,
    consumerRedeliveries: 0,
    failed: 0,
    failedByReason: {},
    deliveredAndFailed: 0,
    ...extra,
  };
}

/** A run's result with what the console summary reads. */
function result(delivery: Pick<NonNullable<RunResult['delivery']>, 'counts' | 'stagesMs'>): RunResult {
  const rest = {
    latenessMs: undefined,
    byTenant: undefined,
    cpu: undefined,
    harnessLoopDelayMs: { p50: 0.4, p99: 42, max: 97.5 },
    missingSample: [],
  };
  return {
    title: 'steady: 2,000 events due evenly over 60 s',
    delivery: { ...rest, ...delivery },
    details: {},
    cost: undefined,
    targets: [],
  } as unknown as RunResult;
}

describe('the console summary', () => {
  it('says why more events are expected than the scenario measures', () => {
    const text = summary(result({ counts: counts({ expected: 2_167, delivered: 2_167, warmup: 167 }), stagesMs: undefined }), '/tmp/out');
    expect(text).toContain(
      'events: expected 2,167 (2,000 measured and 167 warm-up events sent first, checked like the others but not in the lateness figures)',
    );
    expect(summary(result({ counts: counts({ expected: 50, delivered: 50 }), stagesMs: undefined }), '/tmp/out')).toContain(
      'events: expected 50, delivered 50,',
    );
  });

  it('lists the stages that are measured, and the most late events by that name', () => {
    const deliveries = new Map([['a', { dueAt: DUE, receivedAt: DUE + 6, queuedAt: DUE + 4 }]]);
    const stagesMs = stageBreakdown(deliveries, {
      a: { queuedAt: DUE - 3000, receivedAt: DUE - 900, publishStartedAt: DUE + 1, publishEndedAt: DUE + 9 },
    });
    const text = summary(result({ counts: counts({ expected: 1, delivered: 1 }), stagesMs }), '/tmp/out');
    expect(text).toContain('most late events, most late first:');
    expect(text).toContain("the harness's own event loop late by (p50 / p99 / max) 0.4 / 42 / 97.5 ms, in every receive time it stamped");
    expect(text).toContain(
      'due 2027-01-15T08:00:00.000Z, 6 ms late: queued 3000 ms before due, received 900 ms before due, publish started 1 ms after due, publish call 8 ms, publish start to consumer 5 ms (to its queue 3 ms, queue to consumer 2 ms)',
    );
    expect(text).not.toMatch(/claim|NaN|undefined|latest/i);
  });
});
