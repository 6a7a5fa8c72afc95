import { describe, expect, it } from 'vitest';
import { estimateCost, usageBetween } from '../src/cost/estimate.js';
import { PRICES } from '../src/cost/prices.js';
import type { UsageSnapshot } from '../src/cost/usage-meter.js';

function usage(
  overrides: {
    sns?: Partial<UsageSnapshot['sns']>;
    emitterMs?: number;
    emitterInvocations?: number;
    writeUnits?: number;
    receives?: number;
    emptyReceives?: number;
  } = {},
): UsageSnapshot {
  const idle = { invocations: 0, durationMs: 0, billedDurationMs: 0, records: 0 };
  return {
    sns: { publishes: 0, publishBatches: 0, publishBatchEntries: 0, billedRequests: 0, ...overrides.sns },
    sqs: {
      requests: overrides.receives ?? 0,
      billedRequests: overrides.receives ?? 0,
      emptyReceives: overrides.emptyReceives ?? 0,
      byOperation: { ReceiveMessage: { requests: overrides.receives ?? 0, billedRequests: overrides.receives ?? 0, messages: 0 } },
      sentByQueue: {},
    },
    dynamodb: {
      requests: 0,
      readUnits: 0,
      writeUnits: overrides.writeUnits ?? 0,
      estimatedWriteUnits: 0,
      requestsWithoutCapacity: 0,
      readsRaisedToMinimum: 0,
      byOperation: {},
      writeUnitsByItemKind: {},
    },
    lambda: {
      ingest: idle,
      loader: idle,
      loading: idle,
      changes: idle,
      emitter: {
        invocations: overrides.emitterInvocations ?? 0,
        durationMs: overrides.emitterMs ?? 0,
        billedDurationMs: overrides.emitterMs ?? 0,
        records: 0,
      },
    },
  };
}

describe('estimateCost', () => {
  it('prices each billed unit at the list price and divides by the events', () => {
    const cost = estimateCost(usage({ sns: { publishes: 1000, billedRequests: 1000 }, writeUnits: 2000 }), 1000);
    expect(cost.lines.find((line) => line.item.startsWith('SNS'))?.perMillionEvents).toBeCloseTo(PRICES.sns.perMillionRequests);
    expect(cost.lines.find((line) => line.item === 'DynamoDB writes')?.perMillionEvents).toBeCloseTo(
      2 * PRICES.dynamodb.perMillionWriteUnits,
    );
    expect(cost.perMillionEvents).toBeCloseTo(PRICES.sns.perMillionRequests + 2 * PRICES.dynamodb.perMillionWriteUnits);
  });

  it('bills Lambda duration by the memory of each function', () => {
    // One second of a 512 MB emitter is half a GB-second.
    const cost = estimateCost(usage({ emitterInvocations: 1, emitterMs: 1000 }), 1, {
      ingest: 256,
      loader: 256,
      loading: 256,
      changes: 256,
      emitter: 512,
    });
    const duration = cost.lines.find((line) => line.item.startsWith('Lambda emitter duration'));
    expect(duration?.quantity).toBeCloseTo(0.5);
    expect(duration?.dollars).toBeCloseTo(0.5 * PRICES.lambda.perGbSecondArm64);
  });

  it('keeps receives that found nothing out of the per-event cost', () => {
    const cost = estimateCost(usage({ receives: 30, emptyReceives: 20 }), 10);
    expect(cost.lines.find((line) => line.item.startsWith('SQS ReceiveMessage'))?.quantity).toBe(10);
    expect(cost.idleReceives.requests).toBe(20);
  });

  it('compares with EventBridge Scheduler plus the SNS publish to the target', () => {
    expect(estimateCost(usage(), 1).eventBridgeSchedulerPerMillion).toBeCloseTo(1.5);
  });
});

describe('usageBetween', () => {
  it('subtracts every counter, including per-operation and per-queue ones that appeared later', () => {
    const before = usage({ writeUnits: 5 });
    const after = { ...usage({ writeUnits: 12 }), sqs: { ...usage().sqs, sentByQueue: { q: 7 } } };
    const delta = usageBetween(after, before);
    expect(delta.dynamodb.writeUnits).toBe(7);
    expect(delta.sqs.sentByQueue).toEqual({ q: 7 });
  });
});
