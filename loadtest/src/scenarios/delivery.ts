import { PUBLIC_TENANT_ID } from '@adhoc-scheduler/shared';
import {
  createConsumerEndpoint,
  deleteConsumerEndpoint,
  failureReceiptOf,
  receiptOf,
  startConsumer,
  type ConsumerEndpoint,
  type ConsumerStats,
} from '../consumer.js';
import { usageBetween } from '../cost/estimate.js';
import type { UsageSnapshot } from '../cost/usage-meter.js';
import { cpuBetween, sampleCpu, type CpuUse } from '../cpu.js';
import { watchLoopDelay, type LoopDelay } from '../loop-delay.js';
import { mergePlans, scheduleRequest, type PlannedEvent } from '../plan.js';
import { pollUntil } from '../poll.js';
import { publishEvents, type PublishOptions, type PublishStats } from '../publisher.js';
import type { ServiceReport } from '../service/probe.js';
import { stageBreakdown, type StageBreakdown } from '../stages.js';
import { DeliveryTracker, type DeliveryCounts, type LatenessSummary, type Receipt } from '../tracker.js';
import type { RunContext } from './context.js';

/** What one tenant's events did, when a run publishes for several. */
export interface TenantOutcome {
  readonly counts: DeliveryCounts;
  readonly lateness: LatenessSummary | undefined;
  readonly distribution: [number, number][];
  readonly stages: StageBreakdown | undefined;
}

export interface DeliveryOutcome {
  readonly counts: DeliveryCounts;
  readonly lateness: LatenessSummary | undefined;
  /** How late the emitter published, by its own clock (see DeliveryTracker.publishLateness). */
  readonly publishLateness: LatenessSummary | undefined;
  /** [lateness ms, events] for the plots. */
  readonly distribution: [number, number][];
  /** The same per tenant, when the events belong to more than one; undefined otherwise. */
  readonly byTenant: Readonly<Record<string, TenantOutcome>> | undefined;
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
  /** How late the harness's own event loop ran during the measurement: its share of every receive time it stamped. */
  readonly harnessLoopDelay: LoopDelay;
  /** A few ids of missing events, to look up in the service's log. */
  readonly missingSample: readonly string[];
  /** Epoch ms: measurement start (before the first publish) and end. */
  readonly startedAt: number;
  readonly finishedAt: number;
  /** Every event's outcome, for scenarios that look closer at single events. */
  readonly tracker: DeliveryTracker;
  /** Labels each event carried (--labels). */
  readonly labelsPerEvent: number;
}

export interface DeliveryHooks {
  /** Events published first, in the same way, to warm the pipeline up; checked, but not in the lateness figures. */
  readonly warmup?: readonly PlannedEvent[];
  /** Runs once everything is published (e.g. to wait for ingest), while the consumer listens. */
  readonly afterPublish?: (tracker: DeliveryTracker) => Promise<void>;
  /** A prefix for the progress bars when a scenario measures more than once. */
  readonly label?: string;
  /** Input topics of registered tenants, by id: their events are published there (the public tenant's go to the shared topic). */
  readonly tenantInputTopics?: Readonly<Record<string, string>>;
  /** Requests name a failure topic of the run's own: an event reported there is failed (by reason), not missing. */
  readonly failureTopic?: boolean;
  /** Publishes are retried until accepted, through outages of the service (the run's deadline still ends them). */
  readonly publishUntilAccepted?: boolean;
  /**
   * How long the run's consumer queues hide a message handed out: a receive whose answer is
   * lost (the emulator died meanwhile) leaves its messages hidden this long [300].
   */
  readonly consumerVisibilitySeconds?: number;
  /**
   * What the run's requests make: the deliveries expected instead of one per published request
   * (a recurring series makes one per occurrence). Checked as events are; no warmup with it.
   */
  readonly expected?: readonly Pick<PlannedEvent, 'eventId' | 'dueAt'>[];
  /** The input message of a request, when it is not a one-off schedule request (see scheduleRequest). */
  readonly render?: (event: PlannedEvent, target: string) => string;
  /** Each request once its publish was accepted, with the time the publish returned (epoch ms). */
  readonly onPublished?: (event: PlannedEvent, at: number) => void;
  /** Every message the tenants' consumers receive, expected or not (a scenario that checks what must not arrive). */
  readonly onReceipt?: (receipt: Receipt) => void;
}

function sumConsumerStats(stats: readonly ConsumerStats[]): ConsumerStats {
  return {
    receives: stats.reduce((sum, s) => sum + s.receives, 0),
    emptyReceives: stats.reduce((sum, s) => sum + s.emptyReceives, 0),
    receiveErrors: stats.reduce((sum, s) => sum + s.receiveErrors, 0),
    deleteErrors: stats.reduce((sum, s) => sum + s.deleteErrors, 0),
  };
}

/**
 * Publishes each tenant's events to its own input topic, the tenants at the same time (as
 * independent clients would), and adds up what the publishers did.
 */
async function publishByTenant(
  events: readonly PlannedEvent[],
  topicOf: (tenant: string) => string,
  options: Omit<PublishOptions, 'inputTopicArn'>,
): Promise<PublishStats> {
  const byTenant = new Map<string, PlannedEvent[]>();
  for (const event of events) {
    const own = byTenant.get(event.tenant) ?? [];
    own.push(event);
    byTenant.set(event.tenant, own);
  }
  const stats = await Promise.all([...byTenant].map(([tenant, own]) => publishEvents(own, { ...options, inputTopicArn: topicOf(tenant) })));
  return {
    published: stats.reduce((sum, s) => sum + s.published, 0),
    failed: stats.reduce((sum, s) => sum + s.failed, 0),
    requests: stats.reduce((sum, s) => sum + s.requests, 0),
    failedRequests: stats.reduce((sum, s) => sum + s.failedRequests, 0),
    startedAt: Math.min(...stats.map((s) => s.startedAt)),
    finishedAt: Math.max(...stats.map((s) => s.finishedAt)),
  };
}

/**
 * The core of every delivery scenario: its own output topic and consumer queue (one of each per
 * tenant), the events published to the input topic on their schedule, then lateness, missing,
 * duplicated and early events measured at the consumer until all arrived (or the drain time ran out).
 */
export async function measureDelivery(
  ctx: RunContext,
  events: readonly PlannedEvent[],
  hooks: DeliveryHooks = {},
): Promise<DeliveryOutcome> {
  const { clients, service, measure, progress } = ctx;
  // With several tenants, each has its own target and consumer, as independent clients would: one's deliveries never queue behind another's.
  const tenantsPublishing = [...new Set([...events, ...(hooks.warmup ?? [])].map((event) => event.tenant))];
  const endpoints = new Map(
    await Promise.all(
      tenantsPublishing.map(async (tenant) => {
        const name = tenantsPublishing.length > 1 ? `${ctx.runId}-${tenant}-out` : `${ctx.runId}-out`;
        return [
          tenant,
          await createConsumerEndpoint(clients.sns, clients.sqs, name, service.emitterRoleArn, hooks.consumerVisibilitySeconds),
        ] as const;
      }),
    ),
  );
  const failureEndpoint = hooks.failureTopic
    ? await createConsumerEndpoint(
        clients.sns,
        clients.sqs,
        `${ctx.runId}-failures`,
        service.emitterRoleArn,
        hooks.consumerVisibilitySeconds,
      )
    : undefined;
  const targetOf = (tenant: string): string => (endpoints.get(tenant) as ConsumerEndpoint).topicArn;
  const tracker = new DeliveryTracker(measure.lateMs);
  for (const event of hooks.expected ?? events) tracker.expect(event.eventId, event.dueAt);
  for (const event of hooks.warmup ?? []) tracker.expect(event.eventId, event.dueAt, { warmup: true });
  const everything = hooks.warmup ? mergePlans(hooks.warmup, events) : events;
  // With several tenants, each has its own tracker too: lateness and counts per tenant.
  const tenantTrackers = new Map(
    tenantsPublishing.length > 1 ? tenantsPublishing.map((tenant) => [tenant, new DeliveryTracker(measure.lateMs)]) : [],
  );
  const tenantOfEvent = new Map<string, DeliveryTracker>();
  for (const event of tenantTrackers.size > 0 ? events : []) {
    const own = tenantTrackers.get(event.tenant) as DeliveryTracker;
    own.expect(event.eventId, event.dueAt);
    tenantOfEvent.set(event.eventId, own);
  }
  const onReceipt = (receipt: Receipt): void => {
    hooks.onReceipt?.(receipt);
    tracker.record(receipt);
    if (receipt.eventId !== undefined) tenantOfEvent.get(receipt.eventId)?.record(receipt);
  };
  const consumers = [...endpoints.values()].map((endpoint) =>
    startConsumer(clients.sqs, endpoint.queueUrl, measure.consumers, (message, receivedAt) => onReceipt(receiptOf(message, receivedAt))),
  );
  if (failureEndpoint) {
    const eventIdOfClientId = new Map(everything.map((event) => [event.clientId, event.eventId]));
    consumers.push(
      startConsumer(clients.sqs, failureEndpoint.queueUrl, 1, (message) => {
        const failure = failureReceiptOf(message, (clientId) => eventIdOfClientId.get(clientId));
        tracker.recordFailure(failure);
        if (failure.eventId !== undefined) tenantOfEvent.get(failure.eventId)?.recordFailure(failure);
      }),
    );
  }
  const topicOf = (tenant: string): string => {
    if (tenant === PUBLIC_TENANT_ID) return service.inputTopicArn;
    const topic = hooks.tenantInputTopics?.[tenant];
    if (topic === undefined) throw new Error(`no input topic for tenant "${tenant}"`);
    return topic;
  };

  const prefix = hooks.label ? `${hooks.label} ` : '';
  const publishedBar = progress.bar(`${prefix}published`, everything.length);
  const receivedBar = progress.bar(`${prefix}received`, tracker.expected);
  let published = 0;
  const showCounts = (): void => {
    publishedBar.update(published);
    const c = tracker.counts();
    receivedBar.setTotal(tracker.expected);
    receivedBar.update(c.delivered, `late>${measure.lateMs}ms ${c.late}  early ${c.early}  dup ${c.duplicated}`);
  };
  const refresh = setInterval(showCounts, 200);

  const before = await service.report(false);
  const cpuBefore = sampleCpu();
  const loopDelay = watchLoopDelay();
  const startedAt = Date.now();
  let publish: PublishStats;
  let consumerStats: ConsumerStats;
  try {
    const abort = AbortSignal.timeout(Math.max(0, ctx.deadline - Date.now()));
    publish = await publishByTenant(everything, topicOf, {
      sns: clients.sns,
      render: (event) =>
        hooks.render?.(event, targetOf(event.tenant)) ??
        scheduleRequest(event, ctx.user, targetOf(event.tenant), measure.payloadBytes, failureEndpoint?.topicArn, measure.labels),
      concurrency: measure.publishConcurrency,
      onPublished: (event) => {
        published += 1;
        hooks.onPublished?.(event, Date.now());
      },
      onFailed: (event) => {
        tracker.publishFailed(event.eventId);
        tenantOfEvent.get(event.eventId)?.publishFailed(event.eventId);
      },
      signal: abort,
      untilAccepted: hooks.publishUntilAccepted ?? false,
    });
    await hooks.afterPublish?.(tracker);
    const lastDue = [...everything, ...(hooks.expected ?? [])].reduce((max, event) => Math.max(max, event.dueAt), 0);
    const drainUntil = Math.min(ctx.deadline, Math.max(lastDue, Date.now()) + measure.drainSeconds * 1000);
    await pollUntil(() => tracker.accountedFor >= tracker.expected, drainUntil, 50);
    // Listen a while longer: a duplicate would arrive after the first delivery.
    await pollUntil(() => false, Math.min(ctx.deadline, Date.now() + measure.settleSeconds * 1000));
  } finally {
    consumerStats = sumConsumerStats(await Promise.all(consumers.map((consumer) => consumer.stop())));
    clearInterval(refresh);
  }
  showCounts();
  const finishedAt = Date.now();
  const harnessLoopDelay = loopDelay.stop();
  const cpu = cpuBetween(cpuBefore, sampleCpu());
  const after = await service.report(true);
  for (const endpoint of [...endpoints.values(), ...(failureEndpoint ? [failureEndpoint] : [])]) {
    await deleteConsumerEndpoint(clients.sns, clients.sqs, endpoint).catch((error: unknown) =>
      progress.note(`could not remove the consumer's topic and queue: ${String(error)}`),
    );
  }
  return {
    labelsPerEvent: measure.labels,
    counts: tracker.counts(),
    lateness: tracker.lateness(),
    publishLateness: tracker.publishLateness(),
    distribution: tracker.distribution(),
    byTenant:
      tenantTrackers.size > 0
        ? Object.fromEntries(
            [...tenantTrackers].map(([tenant, own]): [string, TenantOutcome] => [
              tenant,
              {
                counts: own.counts(),
                lateness: own.lateness(),
                distribution: own.distribution(),
                stages: after?.emissions ? stageBreakdown(own.firstDeliveries(), after.emissions) : undefined,
              },
            ]),
          )
        : undefined,
    publish,
    consumer: consumerStats,
    usage: before && after ? usageBetween(after.usage, before.usage) : undefined,
    report: after,
    stages: after?.emissions ? stageBreakdown(tracker.firstDeliveries(), after.emissions) : undefined,
    cpu,
    harnessLoopDelay,
    missingSample: tracker.missingIds(10),
    startedAt,
    finishedAt,
    tracker,
  };
}
