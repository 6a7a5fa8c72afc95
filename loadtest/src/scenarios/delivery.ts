import type { UsageSnapshot } from '@adhoc-scheduler/infra/src/local/usage.js';
import { createConsumerEndpoint, deleteConsumerEndpoint, startConsumer, type ConsumerStats } from '../consumer.js';
import { usageBetween } from '../cost/estimate.js';
import { cpuBetween, sampleCpu, type CpuUse } from '../cpu.js';
import { mergePlans, scheduleRequest, type PlannedEvent } from '../plan.js';
import { publishEvents, type PublishStats } from '../publisher.js';
import type { ServiceReport } from '../service/probe.js';
import { stageBreakdown, type StageBreakdown } from '../stages.js';
import { DeliveryTracker, type DeliveryCounts, type LatenessSummary } from '../tracker.js';
import { waitFor, type RunContext } from './context.js';

export interface DeliveryOutcome {
  readonly counts: DeliveryCounts;
  readonly lateness: LatenessSummary | undefined;
  /** [lateness ms, events] for the plots. */
  readonly distribution: [number, number][];
  readonly publish: PublishStats;
  readonly consumer: ConsumerStats;
  /** The service's usage during the measurement (after minus before); undefined when not observable. */
  readonly usage: UsageSnapshot | undefined;
  /** The service's report at the end, with every invocation. */
  readonly report: ServiceReport | undefined;
  /** Where the lateness arose, from the local service's traces; undefined when not observable. */
  readonly stages: StageBreakdown | undefined;
  /** Cores each process of the run kept busy, and what else ran on the machine meanwhile. */
  readonly cpu: CpuUse | undefined;
  /** A few ids of missing events, to look up in the service's log. */
  readonly missingSample: readonly string[];
  /** Epoch ms: measurement start (before the first publish) and end. */
  readonly startedAt: number;
  readonly finishedAt: number;
}

export interface DeliveryHooks {
  /** Events published first, in the same way, to warm the pipeline up; checked, but not in the lateness figures. */
  readonly warmup?: readonly PlannedEvent[];
  /** Runs once everything is published (e.g. to wait for ingest), while the consumer listens. */
  readonly afterPublish?: (tracker: DeliveryTracker) => Promise<void>;
  /** A prefix for the progress bars when a scenario measures more than once. */
  readonly label?: string;
}

/**
 * The core of every delivery scenario: its own output topic and consumer queue, the events
 * published to the input topic on their schedule, then lateness, missing, duplicated and
 * early events measured at the consumer until all arrived (or the drain time ran out).
 */
export async function measureDelivery(ctx: RunContext, events: readonly PlannedEvent[], hooks: DeliveryHooks = {}): Promise<DeliveryOutcome> {
  const { clients, service, measure, progress } = ctx;
  const endpoint = await createConsumerEndpoint(clients.sns, clients.sqs, `${ctx.runId}-out`, service.emitterRoleArn);
  const tracker = new DeliveryTracker(measure.lateMs);
  for (const event of events) tracker.expect(event.eventId, event.dueAt);
  for (const event of hooks.warmup ?? []) tracker.expect(event.eventId, event.dueAt, { warmup: true });
  const everything = hooks.warmup ? mergePlans(hooks.warmup, events) : events;
  const consumer = startConsumer(clients.sqs, endpoint.queueUrl, measure.consumers, (receipt) => tracker.record(receipt));

  const prefix = hooks.label ? `${hooks.label} ` : '';
  const publishedBar = progress.bar(`${prefix}published`, everything.length);
  const receivedBar = progress.bar(`${prefix}received`, everything.length);
  let published = 0;
  const refresh = setInterval(() => {
    publishedBar.update(published);
    const c = tracker.counts();
    receivedBar.setTotal(tracker.expected);
    receivedBar.update(c.delivered, `late>${measure.lateMs}ms ${c.late}  early ${c.early}  dup ${c.duplicated}`);
  }, 200);

  const before = await service.report(false);
  const cpuBefore = sampleCpu();
  const startedAt = Date.now();
  let publish: PublishStats;
  let consumerStats: ConsumerStats;
  try {
    const abort = AbortSignal.timeout(Math.max(0, ctx.deadline - Date.now()));
    publish = await publishEvents(everything, {
      sns: clients.sns,
      inputTopicArn: service.inputTopicArn,
      render: (event) => scheduleRequest(event, ctx.user, endpoint.topicArn, measure.payloadBytes),
      concurrency: measure.publishConcurrency,
      onPublished: () => {
        published += 1;
      },
      onFailed: (event) => tracker.publishFailed(event.eventId),
      signal: abort,
    });
    await hooks.afterPublish?.(tracker);
    const lastDue = everything.reduce((max, event) => Math.max(max, event.dueAt), 0);
    const drainUntil = Math.min(ctx.deadline, Math.max(lastDue, Date.now()) + measure.drainSeconds * 1000);
    await waitFor(() => tracker.delivered >= tracker.expected, drainUntil, 50);
    // Listen a while longer: a duplicate would arrive after the first delivery.
    await waitFor(() => false, Math.min(ctx.deadline, Date.now() + measure.settleSeconds * 1000));
  } finally {
    consumerStats = await consumer.stop();
    clearInterval(refresh);
  }
  publishedBar.update(published);
  receivedBar.update(tracker.delivered);
  const finishedAt = Date.now();
  const cpu = cpuBetween(cpuBefore, sampleCpu());
  const after = await service.report(true);
  await deleteConsumerEndpoint(clients.sns, clients.sqs, endpoint).catch((error: unknown) => progress.note(`could not remove the consumer's topic and queue: ${String(error)}`));
  return {
    counts: tracker.counts(),
    lateness: tracker.lateness(),
    distribution: tracker.distribution(),
    publish,
    consumer: consumerStats,
    usage: before && after ? usageBetween(after.usage, before.usage) : undefined,
    report: after,
    stages: after?.emissions ? stageBreakdown(tracker.firstDeliveries(), after.emissions) : undefined,
    cpu,
    missingSample: tracker.missingIds(10),
    startedAt,
    finishedAt,
  };
}
