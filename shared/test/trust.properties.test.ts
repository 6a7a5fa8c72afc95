import { randomUUID } from 'node:crypto';
import type { SQSRecord } from 'aws-lambda';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { emitBatch, PausedTenants, type EmitterDeps } from '../src/app/emitter.js';
import { EndWriter } from '../src/app/end-writer.js';
import { NoticePace } from '../src/app/notice-pace.js';
import { PublishWindow } from '../src/app/publish-window.js';
import { ingestBatch, type IngestDeps } from '../src/app/ingest.js';
import { loadChunks } from '../src/app/loading.js';
import type { TopicPublisher } from '../src/app/ports/queues.js';
import type { TenantDirectory } from '../src/app/ports/tenants.js';
import { EMISSION_ATTRIBUTE, snsMessageBytes, type ScheduledEvent } from '../src/domain/event.js';
import type { FailureNotice, NoticeDestination } from '../src/domain/failure.js';
import { EVENT_STATE, type EventRecord, type EventState } from '../src/domain/lifecycle.js';
import { SNS_MAX_MESSAGE_BYTES, SQS_MAX_MESSAGE_BYTES } from '../src/domain/limits.js';
import { encodeLoadingChunk } from '../src/domain/messages.js';
import { EventRejectedError, REASON, TransientError } from '../src/domain/reasons.js';
import { MemorySeriesStore } from './memory-series-store.js';
import { parseTenantsDocument, TenantRegistry, type TenantsDocument } from '../src/domain/tenants.js';
import { firstIllFormedString } from '../src/domain/unicode.js';
import { MAX_NESTING_DEPTH } from '../src/domain/validation.js';
import { REGION, sqsRecord } from './factories.js';
import {
  FakeClock,
  MemoryDelayQueue,
  MemoryRefusalLog,
  RecordingChangesQueue,
  RecordingLogger,
  RecordingMetrics,
  RecordingPublisher,
  type Publish,
} from './fakes.js';
import {
  ACCOUNT,
  ACCOUNT_OF,
  body,
  bodyText,
  hostileString,
  inputTopicOf,
  mayReceive,
  messageIdOf,
  MISSING_TOPIC_PREFIX,
  OPS_ALARMS,
  REGISTRIES,
  REGISTRY_NAMES,
  SCHEDULER,
  source,
  TENANT_IDS,
  topic,
  withOwnAccount,
  type BodySpec,
  type RegistryName,
  type Source,
} from './hostile-input.js';
import { MemoryBulkCancelJobs, MemoryEventStore, MemoryNoticeMarks, MemoryTenantPauses } from './memory-event-store.js';

/**
 * Properties of ingest and the emitter under hostile input (see hostile-input.ts): whatever
 * arrives, on whichever topic, the scheduler's trust rules hold, every refusal has a stable reason
 * code, and no message fails its batch. Each run plays batches against in-memory fakes with a
 * fake clock whose timers fire early, and checks every publish as it is made.
 *
 * A failure prints fast-check's seed and path. To replay it, run this file with them:
 *   FC_SEED=<seed> FC_PATH=<path> pnpm exec vitest run shared/test/trust.properties.test.ts
 * FC_RUNS=<n> runs each property n times instead, for a longer search (5,000 take about a minute).
 */
const REPLAY =
  process.env.FC_SEED === undefined ? {} : { seed: Number(process.env.FC_SEED), path: process.env.FC_PATH, endOnFailure: true };
/** Runs per property: together the properties take about two seconds. */
const runs = (usual: number) => ({ numRuns: Number(process.env.FC_RUNS) || usual, ...REPLAY });

const NOW = 1_900_000_000_000;
const MAX_AHEAD_SECONDS = 365 * 24 * 3600;
const CONFIG = {
  region: REGION,
  ...SCHEDULER,
  nearPathWindowSeconds: 600,
  loaderLookaheadSeconds: 540,
  emitterLeadMs: 300,
  bucketSeconds: 60,
  shardCount: 4,
  indexQueuedEvents: false,
  retentionSeconds: 3600,
  changeCutoffSeconds: 5,
  maxScheduleAheadSeconds: MAX_AHEAD_SECONDS,
  emitMaxAgeSeconds: 86_400,
  endsRetryMaxSeconds: 30,
  repairAfterSeconds: 300,
  repairDelaySeconds: 60,
};
/** How far ahead the loader hands stored events to loading (its lookahead). */
const LOADER_LOOKAHEAD_MS = 540_000;
/** The characters SQS takes in a message (XML's). */
const SQS_CHARACTERS = /^[\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]*$/u;
const REASONS = new Set<string>(Object.values(REASON));
/** A topic in the scheduler's partition and region, where SNS can publish. */
const PUBLISHABLE_TOPIC = /^arn:aws:sns:([a-z0-9-]+):([0-9]{12}):([A-Za-z0-9_-]{1,256})$/;

/**
 * Why SNS, in the scheduler's partition and region and with the emitter's IAM policy, would
 * refuse a publish to this topic: it is elsewhere or missing, or it is one of the scheduler's own.
 */
function snsRefusal(topicArn: string): typeof REASON.TARGET_NOT_FOUND | typeof REASON.TARGET_ACCESS_DENIED | undefined {
  const parts = PUBLISHABLE_TOPIC.exec(topicArn);
  if (parts === null || parts[1] !== REGION || parts[3]?.startsWith(MISSING_TOPIC_PREFIX)) return REASON.TARGET_NOT_FOUND;
  if (SCHEDULER.ownTopicArns.includes(topicArn) || (parts[2] === SCHEDULER.accountId && parts[3]?.startsWith(`${SCHEDULER.topicPrefix}-`)))
    return REASON.TARGET_ACCESS_DENIED;
  return undefined;
}

/** When a record that failed comes back, unless put off: the stack's visibility timeout. */
const VISIBILITY_TIMEOUT_SECONDS = 90;
/** Deliveries a record may take before it counts as failing for good (it only ever fails for a retry to fix). */
const MAX_RECEIVES = 5;

/**
 * The scheduler's world in memory: the store, the delay queue, SNS (which refuses what SNS and the
 * emitter's IAM policy would: other regions and partitions, missing topics, the scheduler's own
 * topics, strings no request can carry), the registry as it stands, and the clock.
 */
class World {
  readonly clock: FakeClock;
  readonly store: MemoryEventStore;
  readonly metrics = new RecordingMetrics();
  readonly logger = new RecordingLogger();
  readonly delayQueue: MemoryDelayQueue;
  readonly violations: string[] = [];
  private sns: RecordingPublisher | undefined;
  registryName: RegistryName;
  registry: TenantRegistry;

  constructor(registryName: RegistryName, early: number) {
    this.clock = new FakeClock(NOW, early);
    this.store = new MemoryEventStore(this.clock);
    this.delayQueue = new MemoryDelayQueue(this.clock);
    this.registryName = registryName;
    this.registry = new TenantRegistry(REGISTRIES[registryName], SCHEDULER.topicPrefix);
  }

  get document(): TenantsDocument {
    return REGISTRIES[this.registryName];
  }

  useRegistry(name: RegistryName): void {
    this.registryName = name;
    this.registry = new TenantRegistry(REGISTRIES[name], SCHEDULER.topicPrefix);
  }

  violation(what: string, detail: unknown = undefined): void {
    this.violations.push(detail === undefined ? what : `${what}: ${JSON.stringify(detail)?.slice(0, 500)}`);
  }

  /** The registry as it stands, for ingest and the emitter alike. */
  readonly tenants: TenantDirectory = {
    lookup: () => this.registry.lookup(),
    ids: () => this.registry.ids(),
  };

  /** Checks a delay-queue body against what SQS takes. */
  checkQueued(body: string): void {
    if (Buffer.byteLength(body) > SQS_MAX_MESSAGE_BYTES)
      this.violation('a delay-queue message larger than SQS takes', Buffer.byteLength(body));
    if (!SQS_CHARACTERS.test(body)) this.violation('a delay-queue message with characters SQS refuses', body.slice(0, 200));
  }

  /**
   * The fake SNS, which refuses what SNS and the emitter's IAM policy would; `onAttempt` checks
   * each publish before SNS answers.
   */
  publisher(onAttempt: (publish: Publish) => void): RecordingPublisher {
    this.sns = new RecordingPublisher(this.clock, (publish) => {
      onAttempt(publish);
      const { topic, message, attributes } = publish;
      if (![message, ...Object.values(attributes)].every((text) => text.isWellFormed())) {
        return new EventRejectedError(REASON.PAYLOAD_NOT_PUBLISHABLE, 'not well-formed');
      }
      if (snsMessageBytes(message, attributes) > SNS_MAX_MESSAGE_BYTES) return new EventRejectedError(REASON.PUBLISH_FAILED, 'too large');
      const refusal = snsRefusal(topic);
      return refusal === undefined ? undefined : new EventRejectedError(refusal, `SNS refuses to publish to ${topic}`);
    });
    return this.sns;
  }

  /** The publishes SNS took. */
  get delivered(): readonly Publish[] {
    return this.sns?.published ?? [];
  }

  emitterDeps(publisher: TopicPublisher): EmitterDeps {
    const { store, delayQueue, logger, metrics } = this;
    const endWriter = new EndWriter({ store, delayQueue, logger, metrics });
    return {
      config: CONFIG,
      store,
      pausedTenants: new PausedTenants(new MemoryTenantPauses(store), this.clock),
      notices: new MemoryNoticeMarks(),
      delayQueue,
      publisher,
      endWriter,
      publishWindow: new PublishWindow(0),
      noticePace: new NoticePace(),
      tenants: this.tenants,
      clock: this.clock,
      logger,
      metrics,
      random: () => 0.5,
    };
  }

  /**
   * Runs the loader, loading and the emitter on what is due, moving the clock to each next
   * moment something is, until `done` holds or nothing is left to do.
   */
  async run(deps: EmitterDeps, done: (next: number) => boolean): Promise<void> {
    for (;;) {
      const next = Math.min(
        ...this.delayQueue.messages.map(({ visibleAt }) => visibleAt),
        ...this.stored().map(({ dueAt }) => dueAt - LOADER_LOOKAHEAD_MS),
      );
      if (next === Infinity || done(next)) return;
      this.clock.set(next);
      await this.load();
      await this.emitVisible(deps);
    }
  }

  private stored(): EventRecord[] {
    return [...this.store.records.values()].filter(({ state }) => state === EVENT_STATE.scheduled);
  }

  private async load(): Promise<void> {
    const ids = this.stored()
      .filter(({ dueAt }) => dueAt - LOADER_LOOKAHEAD_MS <= this.clock.now())
      .map(({ id }) => id);
    if (ids.length === 0) return;
    const { store, delayQueue, clock, logger, metrics } = this;
    const deps = { config: CONFIG, tenants: this.tenants, store, series: new MemorySeriesStore(store), delayQueue, clock, logger, metrics };
    const response = await loadChunks(deps, [sqsRecord(encodeLoadingChunk({ ids, chunkId: randomUUID() }), randomUUID())]);
    if (response.batchItemFailures.length > 0) this.violation('a loading chunk failed', response);
  }

  /**
   * Hands the visible messages to the emitter in batches of 10, as SQS does: a record the batch
   * reports failed comes back after its put-off (or the visibility timeout), the rest are deleted.
   * Each message is checked against what SQS takes when it is first received.
   */
  private async emitVisible(deps: EmitterDeps): Promise<void> {
    const queue = this.delayQueue.messages;
    const visible = queue.filter(({ visibleAt }) => visibleAt <= this.clock.now());
    for (const message of visible) queue.splice(queue.indexOf(message), 1);
    for (const { body, receives } of visible) if (receives === 0) this.checkQueued(body);
    for (let i = 0; i < visible.length; i += 10) {
      const received = visible.slice(i, i + 10).map((message) => ({ ...message, receives: message.receives + 1 }));
      const records = received.map(({ body, messageId, sentAt, receives }): SQSRecord => {
        const record = sqsRecord(body, messageId, receives);
        return { ...record, attributes: { ...record.attributes, SentTimestamp: String(sentAt) } };
      });
      const response = await emitBatch(deps, records);
      for (const { itemIdentifier } of response.batchItemFailures) {
        const message = received.find(({ messageId }) => messageId === itemIdentifier);
        if (message === undefined) this.violation('a failure reported for no record of the batch', itemIdentifier);
        else if (message.receives >= MAX_RECEIVES) this.violation('a delay-queue message that keeps failing', message.body.slice(0, 300));
        else {
          const delaySeconds = this.delayQueue.putOff(`rh-${message.messageId}`) ?? VISIBILITY_TIMEOUT_SECONDS;
          queue.push({ ...message, visibleAt: this.clock.now() + delaySeconds * 1000 });
        }
      }
    }
  }

  /**
   * Log lines: a record may fail only for a reason a retry fixes (with fakes that never fail, a
   * copy of the same message handled at the same time), and every reason is a stable code.
   */
  checkLogs(): void {
    for (const { level, fields, message } of this.logger.lines) {
      const { err, reason } = fields as { err?: unknown; reason?: unknown };
      if (level === 'error' && !(err instanceof TransientError)) this.violation('an error logged', { message, err });
      if (reason !== undefined && !REASONS.has(String(reason))) this.violation('a reason that is no stable code', reason);
    }
  }

  /** A published notice: JSON, its reason a stable code (also in its attribute), and well-formed once parsed. */
  checkNotice(publish: Publish): FailureNotice | undefined {
    let notice: FailureNotice;
    try {
      notice = JSON.parse(publish.message) as FailureNotice;
    } catch {
      this.violation('a notice that is not JSON', publish.message.slice(0, 200));
      return undefined;
    }
    if (!REASONS.has(notice.reason) || publish.attributes['scheduler-reason'] !== notice.reason)
      this.violation('a notice without its stable reason', notice.reason);
    const illFormed = firstIllFormedString(notice);
    if (illFormed !== undefined) this.violation('a notice holding a string that is not well-formed', illFormed);
    return notice;
  }

  /** What every publish the scheduler means to make must be: well-formed, within SNS's size. */
  checkPublish(publish: Publish): void {
    const { message, attributes } = publish;
    if (!message.isWellFormed() || !Object.values(attributes).every((value) => value.isWellFormed()))
      this.violation('a publish that is not well-formed', publish.topic);
    const bytes = snsMessageBytes(message, attributes);
    if (bytes > SNS_MAX_MESSAGE_BYTES) this.violation('a publish larger than SNS takes', bytes);
  }

  /** After everything has run: every event ended, none delivered twice. */
  checkEnded(): void {
    for (const record of this.store.records.values()) {
      if (record.state !== EVENT_STATE.emitted && record.state !== EVENT_STATE.failed && record.state !== EVENT_STATE.cancelled) {
        this.violation('an event left open', { id: record.id, state: record.state, dueAt: record.dueAt });
      }
      const deliveries = this.delivered.filter(({ attributes }) => attributes[EMISSION_ATTRIBUTE.eventId] === record.id).length;
      if (deliveries !== (record.state === EVENT_STATE.emitted ? 1 : 0))
        this.violation('an event delivered other than once', { id: record.id, state: record.state, deliveries });
    }
    const left = this.delayQueue.messages.length;
    if (left > 0) this.violation('messages left on the delay queue', left);
  }
}

// ---------------------------------------------------------------------------------------------
// Ingest, then the emitter, on hostile input.

interface Message {
  readonly from: Source;
  readonly body: BodySpec;
  /** How long before its batch SNS received it (its Timestamp, in ms): reschedules arrive in any order. */
  readonly publishedAgoMs: number;
}

type Step =
  | {
      readonly kind: 'batch';
      readonly messages: readonly (Message | { readonly redeliver: number })[];
      /** Afterwards: run until the delay queue is empty, for a while, or not at all (the emitter lags behind). */
      readonly afterwards: 'drain' | number | 'hold';
    }
  | { readonly kind: 'wait'; readonly ms: number }
  | { readonly kind: 'registry'; readonly to: RegistryName };

const message: fc.Arbitrary<Message> = fc.record({
  from: source,
  body: body(NOW, MAX_AHEAD_SECONDS),
  publishedAgoMs: fc.nat({ max: 2_000 }),
});

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('batch' as const),
      messages: fc.array(
        fc.oneof({ weight: 9, arbitrary: message }, { weight: 1, arbitrary: fc.nat({ max: 30 }).map((redeliver) => ({ redeliver })) }),
        {
          minLength: 1,
          maxLength: 10,
        },
      ),
      afterwards: fc.oneof(
        { weight: 1, arbitrary: fc.constantFrom('drain' as const, 'hold' as const) },
        { weight: 3, arbitrary: fc.nat({ max: 10_000 }) },
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('wait' as const), ms: fc.oneof(fc.nat({ max: 10_000 }), fc.nat({ max: 3_600_000 })) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('registry' as const), to: fc.constantFrom(...REGISTRY_NAMES) }) },
);

/** What the test knows of each input message, apart from the code under test: where it came from, and what it said. */
interface Input {
  readonly from: Source;
  /** The tenant whose input topic it came through, by the registry when it last arrived; undefined: no tenant's. */
  owner: string | undefined;
  readonly text: string;
}

/** The SQS record SNS puts on the ingest queue for one publish (or a bare message, not from SNS). */
function inputRecord(from: Source, text: string, messageId: string, publishedAt: number): SQSRecord {
  if (from === 'not-sns') return sqsRecord(text, messageId);
  const envelope = {
    Type: 'Notification',
    MessageId: messageId,
    TopicArn: inputTopicOf(from),
    Timestamp: new Date(publishedAt).toISOString(),
    Message: text,
  };
  return sqsRecord(JSON.stringify(envelope), `sqs-${messageId}`);
}

function parsedJson(text: string): { readonly value?: unknown } {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return {};
  }
}

/** Whether a parsed JSON value nests arrays and objects at most `limit` deep (looking no deeper). */
function nestsAtMost(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return true;
  return limit > 0 && Object.values(value).every((item) => nestsAtMost(item, limit - 1));
}

/** The fields of a record that no later request may change: the first request wins. */
function immutable(record: EventRecord, payload: string | undefined) {
  const { tenant, target, user, failureTopic, requestHash, inputMessageId, clientId } = record;
  return JSON.stringify([tenant, target, user, failureTopic, requestHash, inputMessageId, clientId, payload]);
}

class Pipeline {
  readonly world: World;
  readonly inputs = new Map<string, Input>();
  /** SNS envelopes, by their text, and the MessageId in them. */
  private readonly inputIds = new Map<string, string>();
  /** Bodies of the notices ingest handed over, and whose they are. */
  private readonly noticeOwners = new Map<string, Set<string>>();
  private readonly records: SQSRecord[] = [];
  private readonly emitter: EmitterDeps;
  private readonly ingest: IngestDeps;
  readonly refusals = new MemoryRefusalLog();
  private tokens = 0;
  private redeliveries = 0;
  /** The notices ingest handed over that were checked. */
  private noticesChecked = 0;

  constructor(registry: RegistryName, early: number) {
    const world = new World(registry, early);
    this.world = world;
    this.emitter = world.emitterDeps(world.publisher((publish) => this.checkPublish(publish)));
    this.ingest = {
      config: CONFIG,
      tenants: world.tenants,
      store: world.store,
      series: new MemorySeriesStore(world.store),
      delayQueue: world.delayQueue,
      jobs: new MemoryBulkCancelJobs(),
      pauses: new MemoryTenantPauses(world.store),
      changesQueue: new RecordingChangesQueue(),
      refusals: this.refusals,
      clock: world.clock,
      logger: world.logger,
      metrics: world.metrics,
      newToken: () => `token-${++this.tokens}`,
    };
  }

  /** The tenant whose input topic `from` is, by the registry as it stands. */
  private ownerOf(from: Source): string | undefined {
    if (from === 'nobody' || from === 'alarms' || from === 'not-sns') return undefined;
    return this.world.registry.tenant(from)?.id;
  }

  private input(inputMessageId: string | undefined): Input | undefined {
    return inputMessageId === undefined ? undefined : this.inputs.get(inputMessageId);
  }

  async play(steps: readonly Step[]): Promise<void> {
    const { world } = this;
    for (const step of steps) {
      if (step.kind === 'registry') world.useRegistry(step.to);
      else if (step.kind === 'wait') await this.runFor(step.ms);
      else {
        await this.ingestBatch(step.messages);
        if (step.afterwards === 'drain') await world.run(this.emitter, () => world.delayQueue.messages.length === 0);
        else if (step.afterwards !== 'hold') await this.runFor(step.afterwards);
      }
      world.checkLogs();
      expect(world.violations).toEqual([]);
    }
    await world.run(this.emitter, () => false);
    world.checkEnded();
    expect(world.violations).toEqual([]);
  }

  private async runFor(ms: number): Promise<void> {
    const until = this.world.clock.now() + ms;
    await this.world.run(this.emitter, (next) => next > until);
    this.world.clock.set(until);
  }

  private async ingestBatch(messages: readonly (Message | { readonly redeliver: number })[]): Promise<void> {
    const { world } = this;
    const now = world.clock.now();
    const batch: SQSRecord[] = [];
    let fresh = 0;
    for (const each of messages) {
      if ('redeliver' in each) {
        // SNS delivers a message again as another SQS message, with the same envelope; SQS keeps its message id.
        const again = this.records[each.redeliver % Math.max(1, this.records.length)];
        const fromSns = again !== undefined && this.inputIds.has(again.body);
        if (again !== undefined)
          batch.push({ ...again, messageId: fromSns ? `${again.messageId}-again-${++this.redeliveries}` : again.messageId });
        continue;
      }
      const messageId = messageIdOf(this.records.length);
      const text = bodyText(each.body, this.records.length, ACCOUNT_OF[each.from]);
      const record = inputRecord(each.from, text, messageId, now - each.publishedAgoMs);
      this.inputs.set(messageId, { from: each.from, owner: undefined, text });
      if (each.from !== 'not-sns') this.inputIds.set(record.body, messageId);
      this.records.push(record);
      batch.push(record);
      fresh += 1;
    }
    await this.deliver(batch, fresh);
  }

  /**
   * Ingests a batch and checks what it did; records it reports failed are delivered again at once
   * (they may fail only for a retry to fix, see World.checkLogs).
   */
  private async deliver(batch: readonly SQSRecord[], fresh: number, receives = 1): Promise<void> {
    const { world } = this;
    const now = world.clock.now();
    for (const record of batch) {
      const input = this.inputs.get(this.inputIdOf(record));
      if (input !== undefined) input.owner = this.ownerOf(input.from);
    }
    const before = new Map(
      [...world.store.records.values()].map((record) => [
        record.id,
        { record, fixed: immutable(record, world.store.payloads.get(record.id)) },
      ]),
    );
    const counted = () =>
      (['EventsIngested', 'DuplicatesSuppressed', 'EventsRejected', 'EventsCancelled', 'EventsRescheduled'] as const).reduce(
        (sum, name) => sum + (world.metrics.counts[name] ?? 0),
        0,
      );
    const countedBefore = counted();

    const response = await ingestBatch(this.ingest, batch);
    for (const { noticeId, tenant, notice, ...destination } of world.delayQueue.notices.slice(this.noticesChecked))
      this.checkIngestNotice(noticeId, tenant, destination, notice);
    this.noticesChecked = world.delayQueue.notices.length;

    const failed = new Set(response.batchItemFailures.map(({ itemIdentifier }) => itemIdentifier));
    // Nothing silent: each new message is counted once as taken, suppressed, refused, or applied (or fails, to be retried).
    const handled = counted() - countedBefore;
    if (handled < fresh - failed.size || handled > batch.length)
      world.violation('messages handled without a trace', { handled, fresh, batch: batch.length });
    this.checkStore(before, now, new Set(batch.map((record) => this.inputIdOf(record))));
    if (failed.size === 0) return;
    if (receives >= MAX_RECEIVES) world.violation('an input message that keeps failing', [...failed]);
    else
      await this.deliver(
        batch.filter(({ messageId }) => failed.has(messageId)),
        0,
        receives + 1,
      );
  }

  /** The input message id ingest takes a record for: SNS's MessageId, or the SQS message id of a message not from SNS. */
  private inputIdOf(record: SQSRecord): string {
    return this.inputIds.get(record.body) ?? record.messageId;
  }

  /**
   * What one ingest batch may have done to the store: new events only of the tenant whose topic
   * their request came through, to topics it may use, within the horizon; no existing event's
   * content changed; a cancel or reschedule only by its own tenant, on the shared topic only by
   * `m-` event id.
   */
  private checkStore(
    before: ReadonlyMap<string, { readonly record: EventRecord; readonly fixed: string }>,
    now: number,
    batch: ReadonlySet<string>,
  ): void {
    const { world } = this;
    const latest = now + MAX_AHEAD_SECONDS * 1000;
    for (const record of world.store.records.values()) {
      const previous = before.get(record.id);
      if (previous === undefined) {
        const input = this.input(record.inputMessageId);
        const request = parsedJson(input?.text ?? '').value as Record<string, unknown> | undefined;
        if (input === undefined || !batch.has(record.inputMessageId ?? ''))
          world.violation('an event created by no message of the batch', record.id);
        else if (input.owner === undefined || record.tenant !== input.owner)
          world.violation("an event created for a tenant other than its topic's", {
            id: record.id,
            tenant: record.tenant,
            from: input.from,
          });
        else if (!mayReceive(world.document, input.owner, record.target))
          world.violation('an event accepted with a target its tenant may not use', { tenant: record.tenant, target: record.target });
        else if (record.failureTopic !== undefined && !mayReceive(world.document, input.owner, record.failureTopic)) {
          world.violation('an event accepted with a failure topic its tenant may not use', {
            tenant: record.tenant,
            failureTopic: record.failureTopic,
          });
        } else if (request?.target !== record.target || request?.user !== record.user || request?.failure_topic !== record.failureTopic) {
          world.violation('an event that is not what its request said', record.id);
        }
        if (record.dueAt > latest) world.violation('an event accepted beyond the horizon', { dueAt: record.dueAt, latest });
        if (firstIllFormedString(request) !== undefined)
          world.violation('an event accepted from a request that is not well-formed', record.id);
        continue;
      }
      if (immutable(record, world.store.payloads.get(record.id)) !== previous.fixed)
        world.violation("an event's content changed by a later request", record.id);
      const cancelled = record.state === EVENT_STATE.cancelled && previous.record.state !== EVENT_STATE.cancelled;
      const rescheduled = record.version !== previous.record.version;
      if (!cancelled && !rescheduled) {
        if (record.state !== previous.record.state)
          world.violation('an event whose state ingest changed other than by a cancel or reschedule', {
            from: previous.record.state,
            to: record.state,
          });
        continue;
      }
      const changedBy = cancelled ? record.cancelledBy : record.lastChangeBy;
      const change = this.input(changedBy);
      if (change === undefined || !batch.has(changedBy ?? '')) world.violation('an event changed by no message of the batch', record.id);
      else if (change.owner !== record.tenant)
        world.violation("an event changed by another tenant's message", { id: record.id, tenant: record.tenant, by: change.owner });
      else if (change.from === 'public') {
        const request = parsedJson(change.text).value as { event_id?: unknown } | undefined;
        if (!record.id.startsWith('m-') || request?.event_id !== record.id)
          world.violation('an event changed on the shared topic other than by its m- event id', { id: record.id, request: change.text });
      }
      if (rescheduled && record.dueAt > latest) world.violation('an event rescheduled beyond the horizon', { dueAt: record.dueAt, latest });
    }
  }

  /** A notice ingest hands over: only for an owned message, only to the tenant's own usable topics. */
  private checkIngestNotice(noticeId: string, tenant: string, destination: NoticeDestination, notice: FailureNotice): void {
    const { world } = this;
    const input = this.input(noticeId.slice('n-'.length));
    if (input?.owner === undefined || input.owner !== tenant) {
      world.violation('a notice for a message of no tenant, or of another', { noticeId, tenant, owner: input?.owner });
      return;
    }
    if (!REASONS.has(notice.reason)) world.violation('a refusal without a stable reason', notice.reason);
    for (const topicArn of [destination.failureTopic, destination.deadLetterTopic]) {
      if (topicArn !== undefined && !mayReceive(world.document, tenant, topicArn))
        world.violation('a notice bound for a topic its tenant may not use', { tenant, topicArn, reason: notice.reason });
    }
    const { value } = parsedJson(input.text);
    if (
      value !== undefined &&
      nestsAtMost(value, MAX_NESTING_DEPTH) &&
      firstIllFormedString(value) !== undefined &&
      notice.reason !== REASON.INVALID_UNICODE
    ) {
      world.violation('a request holding a lone surrogate refused other than as INVALID_UNICODE', notice.reason);
    }
    const text = JSON.stringify(notice);
    this.noticeOwners.set(text, new Set([...(this.noticeOwners.get(text) ?? []), tenant]));
  }

  /** Every publish, as it is attempted: to whom, when, and what. */
  private checkPublish(publish: Publish): void {
    const { world } = this;
    world.checkPublish(publish);
    const eventId = publish.attributes[EMISSION_ATTRIBUTE.eventId];
    if (eventId !== undefined) {
      this.checkEmission(publish, eventId);
      return;
    }
    const notice = world.checkNotice(publish);
    if (notice === undefined) return;
    const owners = this.noticeOwners.get(publish.message);
    if (owners !== undefined) {
      if (![...owners].some((owner) => mayReceive(world.document, owner, publish.topic)))
        world.violation('a notice published to a topic its tenant may not use', { topic: publish.topic, owners: [...owners] });
      return;
    }
    const record = notice.eventId === undefined ? undefined : world.store.records.get(notice.eventId);
    // Whose it is was checked when it was created (checkStore).
    const owner = record?.tenant;
    if (record === undefined || owner === undefined) {
      world.violation('a notice of no known event or request', publish.message.slice(0, 200));
      return;
    }
    const deadLetterTopic = world.registry.tenant(owner)?.deadLetterTopic;
    if (!mayReceive(world.document, owner, publish.topic) || (publish.topic !== record.failureTopic && publish.topic !== deadLetterTopic)) {
      world.violation("an event's notice published to a topic that is not its tenant's usable failure or dead-letter topic", {
        owner,
        topic: publish.topic,
      });
    }
  }

  private checkEmission(publish: Publish, eventId: string): void {
    const { world } = this;
    const record = world.store.records.get(eventId);
    const input = this.input(record?.inputMessageId);
    if (record === undefined || input === undefined) {
      world.violation('a publish of no known event', eventId);
      return;
    }
    // Whose it is was checked when it was created (checkStore).
    const owner = record.tenant;
    const request = parsedJson(input.text).value as { payload?: unknown } | undefined;
    if (publish.at < record.dueAt) world.violation('published early', { eventId, at: publish.at, dueAt: record.dueAt });
    if (!(Date.parse(publish.attributes[EMISSION_ATTRIBUTE.publishedAt] ?? '') >= record.dueAt))
      world.violation('a publish time before the due time, or none', {
        eventId,
        publishedAt: publish.attributes[EMISSION_ATTRIBUTE.publishedAt],
      });
    if (publish.attributes[EMISSION_ATTRIBUTE.scheduledAt] !== new Date(record.dueAt).toISOString())
      world.violation('a copy of another version published', eventId);
    if (record.state !== EVENT_STATE.queued) world.violation('an event published that is not queued', { eventId, state: record.state });
    if (publish.attributes[EMISSION_ATTRIBUTE.tenant] !== owner) world.violation("an event published as another tenant's", eventId);
    if (!mayReceive(world.document, owner, publish.topic))
      world.violation('a publish to a topic its tenant may not use (now)', { tenant: owner, topic: publish.topic });
    if (publish.message !== request?.payload) world.violation('a payload that is not the first request’s, byte for byte', eventId);
  }
}

// ---------------------------------------------------------------------------------------------
// The emitter alone, on copies an earlier version may have left on the delay queue.

/** What the record of a copy's event says when the copy arrives: as the copy left it, nothing, or that the copy is stale. */
const RECORD_STATES = ['as-queued', 'none', 'cancelled', 'emitted', 'rescheduled', 'sent-again'] as const;

/**
 * A copy of an event stored before today's rules: of any tenant (one removed since, too), to
 * any topic, with any payload and user, due long ago or in a while.
 */
/** Bytes a string takes in a JSON body. */
function escapedBytes(text: string): number {
  return Buffer.byteLength(JSON.stringify(text));
}

const legacyCopy = fc.record({
  tenant: fc.constantFrom(...TENANT_IDS, 'removed'),
  target: fc.oneof(
    { weight: 5, arbitrary: topic },
    { weight: 1, arbitrary: fc.constantFrom(inputTopicOf('public'), inputTopicOf('acme'), OPS_ALARMS) },
  ),
  failureTopic: fc.option(topic, { nil: undefined }),
  // A copy SQS held: its body, payload and user escaped in it, within SQS's message size.
  payload: fc.oneof(
    fc.constant('hello'),
    hostileString.filter((text) => text.length > 0 && escapedBytes(text) <= 200_000),
  ),
  user: fc.oneof(
    fc.constant('alice'),
    hostileString.filter((text) => text.length > 0 && escapedBytes(text) <= 20_000),
  ),
  dueInMs: fc.integer({ min: -3 * 86_400_000, max: 900_000 }),
  record: fc.constantFrom(...RECORD_STATES),
});

type LegacyCopy = typeof legacyCopy extends fc.Arbitrary<infer T> ? T : never;

/** The record a copy's event has, by what the copy's test case says (undefined: none at all). */
function recordOf(event: ScheduledEvent, record: LegacyCopy['record']): EventRecord | undefined {
  if (record === 'none') return undefined;
  const { payload: _payload, ...rest } = event;
  const state: EventState =
    record === 'cancelled' ? EVENT_STATE.cancelled : record === 'emitted' ? EVENT_STATE.emitted : EVENT_STATE.queued;
  return {
    ...rest,
    state,
    version: record === 'rescheduled' ? 2 : 1,
    queuedBy: record === 'sent-again' ? 'copy-2' : 'copy-1',
    payloadKept: 'queue',
    createdAt: NOW - 86_400_000,
    expiresAt: NOW / 1000 + 86_400,
  };
}

async function emitLegacy(registry: RegistryName, early: number, copies: readonly LegacyCopy[]): Promise<void> {
  const world = new World(registry, early);
  const events = copies.map(({ tenant, target, failureTopic, payload, user, dueInMs }, index): ScheduledEvent => {
    const own = (ACCOUNT_OF as Readonly<Record<string, string>>)[tenant] ?? ACCOUNT.acme;
    return {
      id: `m-legacy-${index}`,
      tenant,
      user,
      target: withOwnAccount(target, own),
      payload,
      failureTopic: failureTopic === undefined ? undefined : withOwnAccount(failureTopic, own),
      dueAt: NOW + dueInMs,
      version: 1,
    };
  });
  const emitted = (index: number) => copies[index]?.record === 'as-queued' || copies[index]?.record === 'none';
  events.forEach((event, index) => {
    const record = recordOf(event, copies[index]?.record ?? 'none');
    if (record !== undefined) world.store.put(record);
  });
  const eventOf = (id: string | undefined) => events.findIndex((event) => event.id === id);
  const deps = world.emitterDeps(
    world.publisher((publish) => {
      const eventId = publish.attributes[EMISSION_ATTRIBUTE.eventId];
      const notice = eventId === undefined ? world.checkNotice(publish) : undefined;
      if (notice !== undefined) world.checkPublish(publish);
      const index = eventOf(eventId ?? notice?.eventId);
      const event = events[index];
      if (event === undefined || !emitted(index)) {
        world.violation('a publish for a copy that is stale, or of no event', publish.message.slice(0, 200));
        return;
      }
      if (eventId !== undefined && publish.at < event.dueAt)
        world.violation('published early', { eventId, at: publish.at, dueAt: event.dueAt });
      if (eventId !== undefined && publish.attributes[EMISSION_ATTRIBUTE.tenant] !== event.tenant)
        world.violation("an event published as another tenant's", eventId);
      // SNS refuses what is elsewhere, missing or the scheduler's own; anything it would take must be the tenant's, by the registry now.
      if (snsRefusal(publish.topic) === undefined && !mayReceive(world.document, event.tenant, publish.topic)) {
        world.violation('a publish to a topic the tenant may not use (now)', {
          tenant: event.tenant,
          topic: publish.topic,
          notice: notice?.reason,
        });
      }
      const deadLetterTopic = world.registry.tenant(event.tenant)?.deadLetterTopic;
      if (notice !== undefined && publish.topic !== event.failureTopic && publish.topic !== deadLetterTopic)
        world.violation("a notice to neither the event's failure topic nor its tenant's dead-letter topic", publish.topic);
    }),
  );
  for (const [index, event] of events.entries()) {
    // Sent with the delay that makes it visible just before its due time, as loading does (a copy of an event long overdue at once).
    const delaySeconds = Math.max(0, Math.min(900, Math.floor((event.dueAt - NOW - CONFIG.emitterLeadMs) / 1000)));
    await world.delayQueue.send([{ event, queuedBy: 'copy-1', delaySeconds }]);
    const record = world.store.records.get(event.id);
    if (copies[index]?.record === 'as-queued' && record === undefined) world.violation('no record of a queued event', event.id);
  }

  await world.run(deps, () => false);
  if (world.delayQueue.notices.length > 0) world.violation('a notice queued by the emitter, which publishes its own');

  world.checkLogs();
  events.forEach((event, index) => {
    const record = world.store.records.get(event.id);
    if (copies[index]?.record === 'as-queued' && record?.state !== EVENT_STATE.emitted && record?.state !== EVENT_STATE.failed)
      world.violation('an event left open', { id: event.id, state: record?.state });
    const deliveries = world.delivered.filter(({ attributes }) => attributes[EMISSION_ATTRIBUTE.eventId] === event.id).length;
    if (deliveries > 1) world.violation('an event delivered more than once', event.id);
  });
  const left = world.delayQueue.messages.length;
  if (left > 0) world.violation('messages left on the delay queue', left);
  expect(world.violations).toEqual([]);
}

describe('ingest and the emitter, on hostile input', () => {
  it('start from registries that are valid', () => {
    for (const name of REGISTRY_NAMES)
      expect(() => parseTenantsDocument(REGISTRIES[name], { region: REGION, schedulerTopics: SCHEDULER })).not.toThrow();
  });

  it('keep every trust rule, refuse with stable codes, never fail a batch, and deliver every accepted event once, never early', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.constant('base' as const), fc.constantFrom(...REGISTRY_NAMES)),
        fc.integer({ min: 0, max: 3 }),
        fc.array(step, { minLength: 1, maxLength: 6 }),
        async (registry, early, steps) => {
          await new Pipeline(registry, early).play(steps);
        },
      ),
      runs(100),
    );
  });

  it('emit copies left on the delay queue by an earlier version only as the registry stands: never outside their tenant, never early, never a stale one', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...REGISTRY_NAMES),
        fc.integer({ min: 0, max: 3 }),
        fc.array(legacyCopy, { minLength: 1, maxLength: 25 }),
        emitLegacy,
      ),
      runs(200),
    );
  });
});
