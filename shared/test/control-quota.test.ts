import { describe, expect, it } from 'vitest';
import { ingestBatch } from '../src/app/ingest.js';
import { EVENT_STATE } from '../src/domain/lifecycle.js';
import { REASON } from '../src/domain/reasons.js';
import type { TenantsDocument } from '../src/domain/tenants.js';
import { messageEventId, seriesId } from '../src/domain/table-keys.js';
import { inputMessageId, registry, scheduleRequest, sqsRecord, topicArn } from './factories.js';
import { ACME_TOPIC, acmeTarget, later, minuteSeries, NOW, published, setup } from './ingest-kit.js';

/** A tenant's control requests (cancels, reschedules, pauses, resumes, cancels by label, a series' changes) against its maxControlPerSecond. */

const GLOBEX_ACCOUNT = '222222222222';
const GLOBEX_TOPIC = ACME_TOPIC.replace('tenant-acme', 'tenant-globex');
const failureTopic = topicArn('failures', 'eu-west-1', '111111111111');

function withQuota(maxControlPerSecond: number, document: Partial<TenantsDocument> = {}) {
  const context = setup();
  const tenants = registry({
    tenants: [
      { id: 'acme', accounts: ['111111111111'], maxControlPerSecond },
      { id: 'globex', accounts: [GLOBEX_ACCOUNT] },
    ],
    ...document,
  });
  return { ...context, deps: { ...context.deps, tenants } };
}

type Context = ReturnType<typeof withQuota>;

/** Schedules acme's events of these ids, stored for the loader (due in an hour). */
async function scheduled(context: Context, ids: readonly string[], topic = ACME_TOPIC, target = acmeTarget): Promise<void> {
  await ingestBatch(
    context.deps,
    ids.map((id) => published(scheduleRequest({ id, date: later, target }), inputMessageId(), topic)),
  );
}

const stateOf = (context: Context, tenant: string, clientId: string) =>
  [...context.store.records.values()].find((record) => record.tenant === tenant && record.clientId === clientId)?.state;

const quotaRefusals = (context: Context) => context.delayQueue.notices.filter(({ notice }) => notice.reason === REASON.QUOTA_EXCEEDED);

describe("a tenant's control requests", () => {
  it('are taken up to maxControlPerSecond in a second, in batch order, of every kind; the rest refused as QUOTA_EXCEEDED naming it', async () => {
    const context = withQuota(2);
    await scheduled(context, ['a', 'b']);
    const response = await ingestBatch(context.deps, [
      published({ action: 'pause', note: 'maintenance', failure_topic: failureTopic }),
      published({ action: 'cancel', id: 'a', failure_topic: failureTopic }),
      published({ action: 'cancel', id: 'b', failure_topic: failureTopic }),
    ]);
    expect(response.batchItemFailures).toEqual([]);
    expect(context.store.pauses.get('acme')).toMatchObject({ note: 'maintenance' });
    expect(stateOf(context, 'acme', 'a')).toBe(EVENT_STATE.cancelled);
    expect(stateOf(context, 'acme', 'b')).toBe(EVENT_STATE.scheduled);
    const b = [...context.store.records.values()].find(({ clientId }) => clientId === 'b');
    expect(context.delayQueue.notices).toMatchObject([
      {
        failureTopic,
        notice: {
          reason: REASON.QUOTA_EXCEEDED,
          message: 'tenant "acme" is at its maxControlPerSecond quota (2)',
          details: { quota: 'maxControlPerSecond', limit: 2 },
          eventId: b?.id,
        },
      },
    ]);
    expect(context.metrics.counts.EventsRejected).toBe(1);
    expect(context.refusals.kept.get('acme')?.map(({ reason, action }) => [reason, action])).toEqual([[REASON.QUOTA_EXCEEDED, 'cancel']]);
  });

  it('count cancels by label and resumes as any other, and have room again the next second', async () => {
    const context = withQuota(1);
    await ingestBatch(context.deps, [
      published({ action: 'cancel', label: 'billing', failure_topic: failureTopic }),
      published({ action: 'resume', failure_topic: failureTopic }),
    ]);
    expect(context.jobs.jobs.size).toBe(1);
    expect(quotaRefusals(context)).toHaveLength(1);
    context.clock.set(NOW + 1_000);
    await ingestBatch(context.deps, [
      published({ action: 'resume', failure_topic: failureTopic }, inputMessageId(), ACME_TOPIC, NOW + 1_000),
    ]);
    expect(quotaRefusals(context)).toHaveLength(1);
  });

  it("are counted apart for each tenant: one's flood past its quota leaves another's cancels taken", async () => {
    const context = withQuota(1);
    const globexTarget = topicArn('out', 'eu-west-1', GLOBEX_ACCOUNT);
    await scheduled(context, ['a', 'b', 'c']);
    await scheduled(context, ['g1', 'g2'], GLOBEX_TOPIC, globexTarget);
    await ingestBatch(context.deps, [
      ...['a', 'b', 'c'].map((id) => published({ action: 'cancel', id, failure_topic: failureTopic })),
      ...['g1', 'g2'].map((id) => published({ action: 'cancel', id }, inputMessageId(), GLOBEX_TOPIC)),
    ]);
    expect(['a', 'b', 'c'].map((id) => stateOf(context, 'acme', id))).toEqual([
      EVENT_STATE.cancelled,
      EVENT_STATE.scheduled,
      EVENT_STATE.scheduled,
    ]);
    expect(['g1', 'g2'].map((id) => stateOf(context, 'globex', id))).toEqual([EVENT_STATE.cancelled, EVENT_STATE.cancelled]);
    expect(quotaRefusals(context).map(({ tenant }) => tenant)).toEqual(['acme', 'acme']);
  });

  it("are counted with the batch's new events in one store call, and neither quota takes from the other", async () => {
    const context = withQuota(0, {
      tenants: [{ id: 'acme', accounts: ['111111111111'], maxControlPerSecond: 1, maxOpenEvents: 1 }],
    });
    await scheduled(context, ['a']);
    const calls = context.store.calls.admit ?? 0;
    await ingestBatch(context.deps, [
      published(scheduleRequest({ id: 'over', date: later, target: acmeTarget, failure_topic: failureTopic })),
      published({ action: 'cancel', id: 'a', failure_topic: failureTopic }),
      published({ action: 'cancel', id: 'a', failure_topic: failureTopic }),
    ]);
    expect(context.store.calls.admit).toBe(calls + 1);
    // The open events are at their quota: the cancel is taken all the same, and the second cancel is over its own.
    expect(stateOf(context, 'acme', 'a')).toBe(EVENT_STATE.cancelled);
    expect(quotaRefusals(context).map(({ notice }) => notice.details)).toEqual([
      { quota: 'maxOpenEvents', limit: 1 },
      { quota: 'maxControlPerSecond', limit: 1 },
    ]);
  });

  it('that are refused cost one notice each and no read of the store on their first delivery', async () => {
    const context = withQuota(0);
    await scheduled(context, ['a']);
    const reads = context.store.calls.read ?? 0;
    await ingestBatch(
      context.deps,
      Array.from({ length: 5 }, () => published({ action: 'cancel', id: 'a', failure_topic: failureTopic })),
    );
    expect(quotaRefusals(context)).toHaveLength(5);
    expect(context.delayQueue.notices).toHaveLength(5);
    expect(context.store.calls.read ?? 0).toBe(reads);
    expect(context.store.calls.cancel).toBeUndefined();
  });

  it("that name nothing of the tenant's are refused as EVENT_NOT_FOUND after one read of each kind for the batch, with no write", async () => {
    const context = withQuota(1_000);
    const globexTarget = topicArn('out', 'eu-west-1', GLOBEX_ACCOUNT);
    await scheduled(context, ['a']);
    await scheduled(context, ['g1'], GLOBEX_TOPIC, globexTarget);
    const g1 = [...context.store.records.values()].find(({ clientId }) => clientId === 'g1');
    let seriesReads = 0;
    const series = context.deps.series;
    const deps = {
      ...context.deps,
      series: {
        ...series,
        read: (ids: readonly string[]) => {
          seriesReads += 1;
          return series.read(ids);
        },
      } as typeof series,
    };
    const reads = context.store.calls.read ?? 0;
    await ingestBatch(deps, [
      ...Array.from({ length: 20 }, (_, i) => published({ action: 'cancel', id: `stale-${i}`, failure_topic: failureTopic })),
      ...Array.from({ length: 20 }, (_, i) =>
        published({ action: 'reschedule', id: `stale-${i}`, date: later, failure_topic: failureTopic }),
      ),
      // Another tenant's event, by its own id: not found, and left as it is.
      published({ action: 'cancel', event_id: g1?.id, failure_topic: failureTopic }),
      published({ action: 'cancel', id: 'a', failure_topic: failureTopic }),
    ]);
    expect(context.store.calls.read).toBe(reads + 1);
    expect(seriesReads).toBe(1);
    // Only acme's own event was written to: the others' refusals cost no write.
    expect(context.store.calls.cancel).toBe(1);
    expect(context.store.calls.reschedule).toBeUndefined();
    expect(stateOf(context, 'acme', 'a')).toBe(EVENT_STATE.cancelled);
    expect(stateOf(context, 'globex', 'g1')).toBe(EVENT_STATE.scheduled);
    const notices = context.delayQueue.notices.map(({ notice }) => notice);
    expect(notices).toHaveLength(41);
    expect(new Set(notices.map(({ reason }) => reason))).toEqual(new Set([REASON.EVENT_NOT_FOUND]));
    expect(notices.find(({ eventId }) => eventId === g1?.id)).toMatchObject({
      message: `cannot cancel ${g1?.id}: the tenant has no event with that id (or it ended longer ago than the retention period)`,
      details: { field: 'event_id' },
    });
  });

  it('that name an event the same batch creates wait for the create: they are written, not refused ahead', async () => {
    const context = withQuota(1_000);
    await ingestBatch(context.deps, [
      published(scheduleRequest({ id: 'new', date: later, target: acmeTarget })),
      published({ action: 'cancel', id: 'new', user: 'alice', failure_topic: failureTopic }),
    ]);
    expect(context.store.calls.cancel).toBe(1);
  });

  describe('delivered again once the quota is used up', () => {
    /** The same input message as SQS hands it out a second time. */
    const again = (message: unknown, messageId: string) => sqsRecord(published(message, messageId).body, `sqs-${messageId}`, 2);

    it('are taken when their first delivery applied their change: a cancel, a reschedule, a pause', async () => {
      const context = withQuota(3);
      await scheduled(context, ['a', 'b']);
      const cancel = { action: 'cancel', id: 'a', failure_topic: failureTopic };
      const reschedule = { action: 'reschedule', id: 'b', date: new Date(NOW + 7_200_000).toISOString(), failure_topic: failureTopic };
      const pause = { action: 'pause', failure_topic: failureTopic };
      const ids = [inputMessageId(), inputMessageId(), inputMessageId()] as const;
      await ingestBatch(context.deps, [published(cancel, ids[0]), published(reschedule, ids[1]), published(pause, ids[2])]);
      expect(context.delayQueue.notices).toEqual([]);
      // Their answers were lost: SQS hands them out again, within the same second, with the quota used up.
      const response = await ingestBatch(context.deps, [again(cancel, ids[0]), again(reschedule, ids[1]), again(pause, ids[2])]);
      expect(response.batchItemFailures).toEqual([]);
      expect(context.delayQueue.notices).toEqual([]);
      expect(stateOf(context, 'acme', 'a')).toBe(EVENT_STATE.cancelled);
      expect([...context.store.records.values()].find(({ clientId }) => clientId === 'b')?.dueAt).toBe(NOW + 7_200_000);
    });

    it("are taken when their first delivery applied their change: a series' pause, a series' cancel, a cancel by label, a resume", async () => {
      const context = withQuota(5);
      await ingestBatch(context.deps, [
        published(minuteSeries(), 'msg-paused'),
        published(minuteSeries({ id: 'daily' }), 'msg-cancelled'),
        published({ action: 'pause' }),
      ]);
      context.clock.set(NOW + 1_000);
      const pauseSeries = { action: 'pause', event_id: seriesId(messageEventId('msg-paused')), failure_topic: failureTopic };
      const cancelSeries = { action: 'cancel', id: 'daily', failure_topic: failureTopic };
      const byLabel = { action: 'cancel', label: 'billing', failure_topic: failureTopic };
      const resume = { action: 'resume', failure_topic: failureTopic };
      const requests = [pauseSeries, cancelSeries, byLabel, resume];
      const ids = requests.map(() => inputMessageId());
      const at = (message: unknown, messageId: string, count: number) =>
        sqsRecord(published(message, messageId, ACME_TOPIC, NOW + 1_000).body, `sqs-${messageId}`, count);
      await ingestBatch(
        context.deps,
        requests.map((request, index) => at(request, ids[index] as string, 1)),
      );
      // One more control request uses up the second's quota.
      await ingestBatch(context.deps, [published({ action: 'cancel', id: 'none' }, inputMessageId(), ACME_TOPIC, NOW + 1_000)]);
      expect(context.delayQueue.notices.map(({ notice }) => notice.reason)).toEqual([]);
      const response = await ingestBatch(
        context.deps,
        requests.map((request, index) => at(request, ids[index] as string, 2)),
      );
      expect(response.batchItemFailures).toEqual([]);
      expect(quotaRefusals(context)).toEqual([]);
      expect(context.series.records.get(seriesId(messageEventId('msg-paused')))).toMatchObject({ pausedAt: NOW + 1_000 });
      expect(context.jobs.jobs.size).toBe(1);
      expect(context.store.pauses.get('acme')).toBeUndefined();
    });

    it('are refused when their change was not applied: the quota counts what is done again', async () => {
      const context = withQuota(1);
      await scheduled(context, ['a', 'b']);
      await ingestBatch(context.deps, [published({ action: 'cancel', id: 'a' })]);
      const messageId = inputMessageId();
      await ingestBatch(context.deps, [again({ action: 'cancel', id: 'b', failure_topic: failureTopic }, messageId)]);
      expect(stateOf(context, 'acme', 'b')).toBe(EVENT_STATE.scheduled);
      expect(quotaRefusals(context)).toMatchObject([{ notice: { details: { quota: 'maxControlPerSecond', limit: 1 } } }]);
    });
  });
});
