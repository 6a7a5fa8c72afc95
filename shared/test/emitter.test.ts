import { describe, expect, it } from 'vitest';
import type { SQSRecord } from 'aws-lambda';
import { pino } from 'pino';
import { emitBatch, type EmitterDeps } from '../src/app/emitter.js';
import type { EmissionClaim, EmissionEnd, EmissionEnding, EventStore, TopicPublisher } from '../src/app/ports.js';
import { noMetrics } from '../src/app/ports.js';
import type { ScheduledEvent } from '../src/domain/event.js';
import { EVENT_STATE, type EventState } from '../src/domain/lifecycle.js';
import { encodeDelayQueueMessage } from '../src/domain/messages.js';
import { EventRejectedError, REASON, TransientError } from '../src/domain/reasons.js';
import { topicArn } from './factories.js';

const DUE = 1_900_000_000_000;

type Emissions = Pick<EventStore, 'claimEmission' | 'releaseEmission' | 'endEmissions' | 'claimNotice' | 'markNoticeSent'>;

interface MemoryRecord {
  state?: EventState;
  version?: number;
  owner?: string | undefined;
  until?: number | undefined;
  end?: EmissionEnd;
  sentAt?: number;
}

/** The emitter's view of the store, in memory: versions, claims with leases, ends and sent notices. */
class MemoryEmissions implements Emissions {
  readonly records = new Map<string, MemoryRecord>();

  queue(id: string, version = 1): void {
    this.records.set(id, { state: EVENT_STATE.queued, version });
  }

  async claimEmission(event: Pick<ScheduledEvent, 'id' | 'version'>, claim: EmissionClaim): Promise<'claimed' | 'ended' | 'stale' | 'busy'> {
    const record = this.records.get(event.id) ?? {};
    if (record.state === EVENT_STATE.emitted || record.state === EVENT_STATE.failed) return 'ended';
    if (record.state !== EVENT_STATE.queued || record.version !== event.version) return 'stale';
    if (this.heldByAnother(record, claim)) return 'busy';
    this.records.set(event.id, { ...record, owner: claim.owner, until: claim.leaseUntil });
    return 'claimed';
  }

  async releaseEmission(id: string, owner: string): Promise<void> {
    const record = this.records.get(id);
    if (record?.owner === owner) this.records.set(id, { ...record, owner: undefined, until: undefined });
  }

  readonly endCalls: number[] = [];

  async endEmissions(ends: readonly EmissionEnding[]): Promise<void> {
    this.endCalls.push(ends.length);
    for (const { event, end } of ends) {
      const record = this.records.get(event.id);
      if (record?.state === EVENT_STATE.queued) this.records.set(event.id, { ...record, state: end.state, end });
    }
  }

  async claimNotice(id: string, claim: EmissionClaim): Promise<'claimed' | 'ended' | 'busy'> {
    const record = this.records.get(id) ?? {};
    if (record.sentAt !== undefined) return 'ended';
    if (this.heldByAnother(record, claim)) return 'busy';
    this.records.set(id, { ...record, owner: claim.owner, until: claim.leaseUntil });
    return 'claimed';
  }

  async markNoticeSent(id: string, sentAt: number): Promise<void> {
    this.records.set(id, { ...this.records.get(id), sentAt });
  }

  private heldByAnother(record: MemoryRecord, claim: EmissionClaim): boolean {
    return record.until !== undefined && record.until >= claim.now && record.owner !== claim.owner;
  }
}

/** A publisher that records publishes and fails as scripted. */
class ScriptedPublisher implements TopicPublisher {
  readonly published: { topic: string; message: string; at: number }[] = [];
  constructor(
    private readonly clock: { now(): number },
    private readonly failWith: (topic: string) => Error | undefined = () => undefined,
  ) {}

  async publish(topic: string, message: string): Promise<void> {
    const error = this.failWith(topic);
    if (error) throw error;
    this.published.push({ topic, message, at: this.clock.now() });
  }
}

function fakeClock(start: number) {
  let now = start;
  return { now: () => now, sleep: async (ms: number) => void (now += ms) };
}

function event(overrides: Partial<ScheduledEvent> = {}): ScheduledEvent {
  return {
    id: 'm-1',
    tenant: 'acme',
    user: 'alice',
    target: topicArn('out'),
    payload: 'hello',
    failureTopic: topicArn('failures'),
    dueAt: DUE,
    version: 1,
    ...overrides,
  };
}

function record(body: string, messageId = 'sqs-1', receiveCount = 1): SQSRecord {
  return {
    messageId,
    receiptHandle: `rh-${messageId}`,
    body,
    attributes: { ApproximateReceiveCount: String(receiveCount), SentTimestamp: '0', SenderId: '', ApproximateFirstReceiveTimestamp: '0' },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:delay',
    awsRegion: 'eu-west-1',
  };
}

function setup(failWith?: (topic: string) => Error | undefined) {
  const clock = fakeClock(DUE - 700);
  const store = new MemoryEmissions();
  store.queue('m-1');
  const publisher = new ScriptedPublisher(clock, failWith);
  const deps = {
    config: { emitMaxAttempts: 3, emitClaimLeaseSeconds: 30, retentionSeconds: 3600 },
    store,
    publisher,
    clock,
    logger: pino({ level: 'silent' }),
    metrics: noMetrics,
  } satisfies EmitterDeps;
  return { clock, store, publisher, deps };
}

const delayed = (e: ScheduledEvent) => encodeDelayQueueMessage({ kind: 'event', event: e });

describe('the emitter', () => {
  it('waits for the due time, publishes, then records the emission', async () => {
    const { deps, publisher, store } = setup();
    const response = await emitBatch(deps, [record(delayed(event()))]);
    expect(response.batchItemFailures).toEqual([]);
    expect(publisher.published).toEqual([{ topic: topicArn('out'), message: 'hello', at: DUE }]);
    expect(store.records.get('m-1')?.end).toEqual({ state: EVENT_STATE.emitted, at: DUE });
  });

  it("records the ends of a batch's events together, once", async () => {
    const { deps, publisher, store } = setup();
    store.queue('m-2');
    await emitBatch(deps, [record(delayed(event()), 'a'), record(delayed(event({ id: 'm-2', dueAt: DUE + 400 })), 'b')]);
    expect(publisher.published).toHaveLength(2);
    expect(store.endCalls).toEqual([2]);
    expect([store.records.get('m-1')?.state, store.records.get('m-2')?.state]).toEqual([EVENT_STATE.emitted, EVENT_STATE.emitted]);
  });

  it('drops a redelivery of an event already emitted', async () => {
    const { deps, publisher } = setup();
    await emitBatch(deps, [record(delayed(event()), 'sqs-1')]);
    const again = await emitBatch(deps, [record(delayed(event()), 'sqs-1', 2)]);
    expect(again.batchItemFailures).toEqual([]);
    expect(publisher.published).toHaveLength(1);
  });

  it('retries later, rather than drops, a delivery of an event another attempt holds', async () => {
    const { deps, publisher, store } = setup();
    store.records.set('m-1', { state: EVENT_STATE.queued, version: 1, owner: 'another attempt', until: DUE + 30_000 });
    const response = await emitBatch(deps, [record(delayed(event()))]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'sqs-1' }]);
    expect(publisher.published).toHaveLength(0);
  });

  it('emits once when two copies of an event arrive in one batch', async () => {
    const { deps, publisher } = setup();
    const response = await emitBatch(deps, [record(delayed(event()), 'a'), record(delayed(event()), 'b')]);
    expect(publisher.published).toHaveLength(1);
    expect(response.batchItemFailures).toHaveLength(1);
  });

  it('releases its claim and reports the record for retry when a publish fails before the last attempt', async () => {
    const { deps, store, publisher } = setup((topic) => (topic === topicArn('out') ? new TransientError('throttled') : undefined));
    const response = await emitBatch(deps, [record(delayed(event()), 'sqs-1', 2)]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'sqs-1' }]);
    expect(store.records.get('m-1')?.owner).toBeUndefined();
    expect(publisher.published).toHaveLength(0);
  });

  it('reports PUBLISH_FAILED on the failure topic at the last attempt, and is done with the event', async () => {
    const { deps, store, publisher } = setup((topic) => (topic === topicArn('out') ? new TransientError('throttled') : undefined));
    const response = await emitBatch(deps, [record(delayed(event()), 'sqs-1', 3)]);
    expect(response.batchItemFailures).toEqual([]);
    expect(publisher.published.map((p) => p.topic)).toEqual([topicArn('failures')]);
    expect(JSON.parse(publisher.published[0]?.message ?? '{}')).toMatchObject({ reason: REASON.PUBLISH_FAILED, eventId: 'm-1' });
    expect(store.records.get('m-1')?.end).toMatchObject({ state: EVENT_STATE.failed, reason: REASON.PUBLISH_FAILED });
  });

  it('reports a target that refuses the publish at once, without retrying', async () => {
    const denied = new EventRejectedError(REASON.TARGET_ACCESS_DENIED, 'denied');
    const { deps, publisher } = setup((topic) => (topic === topicArn('out') ? denied : undefined));
    const response = await emitBatch(deps, [record(delayed(event()))]);
    expect(response.batchItemFailures).toEqual([]);
    expect(JSON.parse(publisher.published[0]?.message ?? '{}')).toMatchObject({ reason: REASON.TARGET_ACCESS_DENIED });
  });

  it('publishes a failure notice handed over by ingest to its failure topic, once', async () => {
    const { deps, publisher } = setup();
    const notice = { reason: REASON.INVALID_DATE, message: 'bad date', event: { date: 'x' }, failedAt: '2030-01-01T00:00:00.000Z' };
    const body = encodeDelayQueueMessage({ kind: 'notice', noticeId: 'n-1', failureTopic: topicArn('failures'), notice });
    await emitBatch(deps, [record(body, 'sqs-1')]);
    await emitBatch(deps, [record(body, 'sqs-1', 2)]);
    expect(publisher.published).toEqual([{ topic: topicArn('failures'), message: JSON.stringify(notice), at: DUE - 700 }]);
  });

  it('drops a message of a version that was rescheduled since it was queued', async () => {
    const { deps, publisher, store } = setup();
    store.queue('m-1', 2);
    const response = await emitBatch(deps, [record(delayed(event({ version: 1 })))]);
    expect(response.batchItemFailures).toEqual([]);
    expect(publisher.published).toHaveLength(0);
  });

  it('drops the message of an event cancelled since it was queued', async () => {
    const { deps, publisher, store } = setup();
    store.records.set('m-1', { state: EVENT_STATE.cancelled, version: 1 });
    await emitBatch(deps, [record(delayed(event()))]);
    expect(publisher.published).toHaveLength(0);
  });

  it('fails only the record it cannot read, not its batch', async () => {
    const { deps, publisher } = setup();
    const response = await emitBatch(deps, [record('not a message', 'bad'), record(delayed(event()), 'good')]);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'bad' }]);
    expect(publisher.published).toHaveLength(1);
  });
});
