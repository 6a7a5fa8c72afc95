import { eventIdFor, PUBLIC_TENANT_ID, toIso, type ScheduleRequest } from '@adhoc-scheduler/shared';

/** One event the run schedules. */
export interface PlannedEvent {
  readonly seq: number;
  /** Whose event it is: the run publishes it to this tenant's input topic. */
  readonly tenant: string;
  /** The client's idempotency key (`id` in the request). */
  readonly clientId: string;
  /** The id the scheduler gives it (`scheduler-event-id` on the emission), derived as the scheduler does. */
  readonly eventId: string;
  readonly dueAt: number;
  /** When the run publishes it, epoch ms. */
  readonly publishAt: number;
}

export interface UniformPlan {
  readonly runId: string;
  /** The tenant that publishes the events (its id is part of theirs); the public tenant when absent. */
  readonly tenant?: string;
  /** The `user` of every request: one per run, so runs never share event ids. */
  readonly user: string;
  readonly count: number;
  /** Due time of the first event, epoch ms. */
  readonly firstDueAt: number;
  /** The events are due evenly over [firstDueAt, firstDueAt + spreadMs). */
  readonly spreadMs: number;
  /** Each event is published this long before it is due; undefined publishes all at `publishFrom`. */
  readonly publishAheadMs: number | undefined;
  /**
   * Up to this much more ahead, spread evenly over the events: real clients publish at any
   * fraction of a second, and where in its second an event is published decides how early the
   * whole-second delay queue hands it over.
   */
  readonly publishJitterMs?: number;
  /** Nothing is published before this, epoch ms. */
  readonly publishFrom: number;
}

/** Fractions in [0, 1) spread evenly whatever the count (the golden-ratio sequence). */
export const GOLDEN_FRACTION = (Math.sqrt(5) - 1) / 2;

/** Events due evenly over a span, published ahead of their due time or all at once, by publish time. */
export function planUniform(plan: UniformPlan): PlannedEvent[] {
  const events: PlannedEvent[] = [];
  const tenant = plan.tenant ?? PUBLIC_TENANT_ID;
  for (let seq = 0; seq < plan.count; seq += 1) {
    const dueAt = plan.firstDueAt + Math.floor((seq * plan.spreadMs) / plan.count);
    const clientId = `${plan.runId}-${seq}`;
    const jitter = Math.floor(((seq * GOLDEN_FRACTION) % 1) * (plan.publishJitterMs ?? 0));
    const publishAt =
      plan.publishAheadMs === undefined ? plan.publishFrom : Math.max(plan.publishFrom, dueAt - plan.publishAheadMs - jitter);
    events.push({ seq, tenant, clientId, eventId: eventIdFor(tenant, plan.user, clientId, ''), dueAt, publishAt });
  }
  return events.sort((a, b) => a.publishAt - b.publishAt);
}

/** The labels of a run's events that carry `count` of them: the same for every event, as a campaign's would be. */
export function runLabels(count: number): string[] {
  return Array.from({ length: count }, (_, index) => `load-test-${index}`);
}

/** Far-path events are published this much beyond the near-path window, so they are stored. */
const FAR_MARGIN_MS = 20_000;

/**
 * Half the events on the near path, half stored and loaded, both due evenly over `spreadMs`
 * and published steadily ahead of their due times from `now` on (client ids `<runId>-near-N`
 * and `<runId>-far-N`).
 */
export function planSteadyMix(plan: {
  readonly runId: string;
  readonly user: string;
  readonly count: number;
  readonly spreadMs: number;
  /** Near-path events are published this long (plus up to a second) before they are due. */
  readonly nearAheadMs: number;
  /** The service's near-path window. */
  readonly windowMs: number;
  readonly now: number;
}): PlannedEvent[] {
  const { runId, user, count, spreadMs, nearAheadMs, now } = plan;
  const farAheadMs = plan.windowMs + FAR_MARGIN_MS;
  const half = Math.floor(count / 2);
  const near = planUniform({
    runId: `${runId}-near`,
    user,
    count: count - half,
    firstDueAt: now + nearAheadMs,
    spreadMs,
    publishAheadMs: nearAheadMs,
    publishJitterMs: 1000,
    publishFrom: now,
  });
  const far = planUniform({
    runId: `${runId}-far`,
    user,
    count: half,
    firstDueAt: now + farAheadMs,
    spreadMs,
    publishAheadMs: farAheadMs,
    publishJitterMs: 1000,
    publishFrom: now,
  });
  return mergePlans(near, far);
}

/** Concatenates plans into one publishing order. */
export function mergePlans(...plans: readonly (readonly PlannedEvent[])[]): PlannedEvent[] {
  return plans.flat().sort((a, b) => a.publishAt - b.publishAt);
}

/** An event's payload: its sequence number, padded to a size. */
export function paddedPayload(seq: number, payloadBytes: number): string {
  const head = `{"seq":${seq},"pad":"`;
  return `${head}${'x'.repeat(Math.max(0, payloadBytes - head.length - 2))}"}`;
}

/** The input message for an event, in the format clients publish. */
export function scheduleRequest(
  event: PlannedEvent,
  user: string,
  target: string,
  payloadBytes: number,
  failureTopic?: string,
  labels = 0,
): string {
  const request: ScheduleRequest = {
    date: toIso(event.dueAt),
    target,
    user,
    payload: paddedPayload(event.seq, payloadBytes),
    id: event.clientId,
    ...(failureTopic === undefined ? {} : { failure_topic: failureTopic }),
    ...(labels > 0 ? { labels: runLabels(labels) } : {}),
  };
  return JSON.stringify(request);
}
