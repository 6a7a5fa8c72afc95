import { describe, expect, it } from 'vitest';
import { DeliveryTracker, type Receipt } from '../src/tracker.js';

const DUE = 1_800_000_000_000;

function receipt(
  eventId: string | undefined,
  receivedAt: number,
  messageId: string,
  scheduledAt: number | undefined = DUE,
  publishedAt: number | undefined = receivedAt,
  queuedAt: number | undefined = undefined,
): Receipt {
  return { eventId, scheduledAt, publishedAt, receivedAt, queuedAt, messageId };
}

describe('DeliveryTracker', () => {
  it("keeps when each event's first delivery reached the consumer's queue, for the stages", () => {
    const tracker = new DeliveryTracker(100);
    for (const id of ['a', 'b']) tracker.expect(id, DUE);
    tracker.record(receipt('a', DUE + 3, 'm1', DUE, DUE, DUE + 1));
    // A second emission of a, queued later: the first delivery's times stand.
    tracker.record(receipt('a', DUE + 60, 'm2', DUE, DUE, DUE + 50));
    tracker.record(receipt('b', DUE + 4, 'm3'));

    expect(Object.fromEntries(tracker.firstDeliveries())).toEqual({
      a: { dueAt: DUE, receivedAt: DUE + 3, queuedAt: DUE + 1 },
      b: { dueAt: DUE, receivedAt: DUE + 4, queuedAt: undefined },
    });
  });

  it('measures lateness from the scheduled-at attribute of the first delivery of each event', () => {
    const tracker = new DeliveryTracker(100);
    for (const id of ['a', 'b', 'c', 'd']) tracker.expect(id, DUE);
    tracker.record(receipt('a', DUE + 2, 'm1'));
    tracker.record(receipt('b', DUE + 4, 'm2'));
    tracker.record(receipt('c', DUE + 8, 'm3'));
    tracker.record(receipt('d', DUE + 250, 'm4'));

    const lateness = tracker.lateness();
    expect(lateness).toMatchObject({ count: 4, min: 2, p50: 4, max: 250 });
    expect(tracker.counts()).toMatchObject({ expected: 4, delivered: 4, missing: 0, late: 1, early: 0 });
    expect(tracker.distribution()).toEqual([
      [2, 1],
      [4, 1],
      [8, 1],
      [250, 1],
    ]);
  });

  it("splits lateness at the emitter's publish: how late it published, by its own clock, for the same first deliveries", () => {
    const tracker = new DeliveryTracker(100);
    for (const id of ['a', 'b', 'warm']) tracker.expect(id, DUE, { warmup: id === 'warm' });
    tracker.expect('c', DUE);
    tracker.record(receipt('a', DUE + 9, 'm1', DUE, DUE + 1));
    tracker.record(receipt('b', DUE + 30, 'm2', DUE, DUE + 25));
    tracker.record(receipt('b', DUE + 90, 'm3', DUE, DUE + 80));
    tracker.record(receipt('warm', DUE + 500, 'm4', DUE, DUE + 400));
    tracker.record({ ...receipt('c', DUE + 4, 'm5'), publishedAt: undefined });

    expect(tracker.lateness()).toMatchObject({ count: 3, max: 30 });
    // The duplicate, the warm-up event and the delivery without the attribute are not in it.
    expect(tracker.publishLateness()).toMatchObject({ count: 2, min: 1, max: 25 });
    expect(new DeliveryTracker(100).publishLateness()).toBeUndefined();
    expect([tracker.firstPublished('b'), tracker.firstPublished('c'), tracker.firstPublished('never')]).toEqual([
      DUE + 25,
      undefined,
      undefined,
    ]);
  });

  it('counts a second emission of an event as a duplicate, and the queue handing out the same message again as a redelivery', () => {
    const tracker = new DeliveryTracker(100);
    tracker.expect('a', DUE);
    tracker.record(receipt('a', DUE + 3, 'm1'));
    tracker.record(receipt('a', DUE + 3, 'm1'));
    tracker.record(receipt('a', DUE + 900, 'm2'));

    expect(tracker.counts()).toMatchObject({ delivered: 1, duplicated: 1, consumerRedeliveries: 1 });
    expect([tracker.deliveriesOf('a'), tracker.deliveriesOf('other')]).toEqual([2, 0]);
    expect(tracker.lateness()).toMatchObject({ count: 1, max: 3 });
  });

  it('counts early, missing, unknown and mis-scheduled events', () => {
    const tracker = new DeliveryTracker(100);
    tracker.expect('early', DUE);
    tracker.expect('shifted', DUE);
    tracker.expect('never', DUE);
    tracker.record(receipt('early', DUE - 5, 'm1'));
    tracker.record(receipt('shifted', DUE + 1_010, 'm2', DUE + 1_000));
    tracker.record(receipt('stranger', DUE, 'm3'));
    tracker.record(receipt(undefined, DUE, 'm4'));

    expect(tracker.counts()).toMatchObject({ delivered: 2, missing: 1, early: 1, earlyPublished: 1, unexpected: 2, wrongScheduledAt: 1 });
    expect(tracker.lateness()?.min).toBe(-5);
    expect(tracker.missingIds(10)).toEqual(['never']);
  });

  it('counts an event published before its due time, by the publish time it carries, though it was received after it', () => {
    const tracker = new DeliveryTracker(100);
    tracker.expect('a', DUE);
    tracker.expect('b', DUE);
    tracker.record(receipt('a', DUE + 3, 'm1', DUE, DUE - 1));
    tracker.record(receipt('b', DUE + 3, 'm2', DUE, DUE));

    expect(tracker.counts()).toMatchObject({ delivered: 2, early: 0, earlyPublished: 1 });
  });

  it('stops expecting an event whose publish failed', () => {
    const tracker = new DeliveryTracker(100);
    tracker.expect('a', DUE);
    tracker.expect('b', DUE);
    tracker.publishFailed('b');
    tracker.record(receipt('a', DUE + 1, 'm1'));

    expect(tracker.counts()).toMatchObject({ expected: 1, publishFailed: 1, missing: 0 });
  });

  it('checks warm-up events like the others but leaves them out of the lateness figures', () => {
    const tracker = new DeliveryTracker(100);
    tracker.expect('warm', DUE, { warmup: true });
    tracker.expect('measured', DUE);
    tracker.record(receipt('warm', DUE + 500, 'm1'));
    tracker.record(receipt('measured', DUE + 3, 'm2'));

    expect(tracker.counts()).toMatchObject({ expected: 2, delivered: 2, warmup: 1, late: 0 });
    expect(tracker.lateness()).toMatchObject({ count: 1, max: 3 });
    expect([...tracker.firstDeliveries().keys()]).toEqual(['measured']);
  });

  it('never reports a percentile above the exact maximum', () => {
    const tracker = new DeliveryTracker(100);
    tracker.expect('a', DUE);
    tracker.record(receipt('a', DUE + 27_435, 'm1'));
    const lateness = tracker.lateness();
    expect(lateness?.max).toBe(27_435);
    expect(lateness?.['p99.9']).toBeLessThanOrEqual(27_435);
  });

  it('counts an event reported on the failure topic as failed by its reason, not missing, unless it was also delivered', () => {
    const tracker = new DeliveryTracker(100);
    for (const id of ['delivered', 'failed', 'both', 'missing']) tracker.expect(id, DUE);
    tracker.record(receipt('delivered', DUE + 1, 'm1'));
    tracker.recordFailure({ eventId: 'failed', reason: 'PUBLISH_FAILED', messageId: 'n1' });
    tracker.recordFailure({ eventId: 'failed', reason: 'PUBLISH_FAILED', messageId: 'n1' });
    tracker.record(receipt('both', DUE + 2, 'm2'));
    tracker.recordFailure({ eventId: 'both', reason: 'PUBLISH_FAILED', messageId: 'n2' });
    tracker.recordFailure({ eventId: 'stranger', reason: 'PUBLISH_FAILED', messageId: 'n3' });
    tracker.recordFailure({ eventId: undefined, reason: 'INVALID_JSON', messageId: 'n4' });

    expect(tracker.counts()).toMatchObject({
      expected: 4,
      delivered: 2,
      failed: 1,
      failedByReason: { PUBLISH_FAILED: 1 },
      deliveredAndFailed: 1,
      missing: 1,
      unexpected: 2,
      consumerRedeliveries: 1,
    });
    expect(tracker.accountedFor).toBe(3);
    expect(tracker.failedOnly()).toEqual([{ eventId: 'failed', reason: 'PUBLISH_FAILED' }]);
    expect(tracker.missingIds(10)).toEqual(['missing']);
  });

  it('names the events delivered early', () => {
    const tracker = new DeliveryTracker(100);
    tracker.expect('early', DUE);
    tracker.expect('on-time', DUE);
    tracker.record(receipt('early', DUE - 1, 'm1'));
    tracker.record(receipt('on-time', DUE, 'm2'));

    expect(tracker.earlyIds()).toEqual(['early']);
  });

  it('has no lateness before anything arrives', () => {
    expect(new DeliveryTracker(100).lateness()).toBeUndefined();
  });
});
