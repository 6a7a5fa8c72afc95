import { eventIdFor, occurrenceId, PUBLIC_TENANT_ID, seriesId, toIso } from '@adhoc-scheduler/shared';
import { paddedPayload, type PlannedEvent } from '../plan.js';
import type { ScenarioResult } from '../report/results.js';
import { correctnessTargets, latenessTargets, type ScenarioTargets } from '../report/targets.js';
import type { RunContext } from './context.js';
import { measureDelivery } from './delivery.js';
import { deliveryResult, WRITE_UNITS_PER_EVENT_BOUND } from './outcome.js';
import type { ScenarioParams } from './params.js';
import type { Scenario } from './scenario.js';

const MINUTE_MS = 60_000;

/** The series whose every occurrence is due at `:00.250` of its minute: the offset no peer offers. */
export const PRECISE_OFFSET_MS = 250;

const TARGETS = {
  delivery: { duplicatesAllowed: false },
  // Twice the one-off steady figures (steady's p99 bound is 15 ms).
  latenessMs: { p99: 30 },
  // An occurrence writes no more than a one-off event on the near path.
  writeUnitsPerEvent: WRITE_UNITS_PER_EVENT_BOUND.nearPath,
  offsetSeries: { offsetMs: PRECISE_OFFSET_MS, maxLatenessMs: 15 },
} satisfies ScenarioTargets;

export interface SeriesPlan {
  /** The series' requests, all published at `publishFrom`. */
  readonly requests: PlannedEvent[];
  /** Their occurrences, by the ids the scheduler gives them. */
  readonly occurrences: Pick<PlannedEvent, 'eventId' | 'dueAt'>[];
  /** The occurrences of the series with offset PRECISE_OFFSET_MS. */
  readonly precise: ReadonlySet<string>;
  /** Epoch ms of the first occurrences' minute. */
  readonly firstMinute: number;
  /** Occurrences of each series, one a minute. */
  readonly minutes: number;
}

/**
 * `count` series firing every minute, `minutes` times each from the first whole minute at least
 * `aheadMs` after `now`, their offsets spread evenly over the minute (so that as many are due in
 * each second), the first one's at PRECISE_OFFSET_MS. Their occurrences are worked out here
 * from the expression's meaning, not by the scheduler's calendar.
 */
export function planSeries(plan: {
  readonly runId: string;
  readonly user: string;
  readonly count: number;
  readonly minutes: number;
  readonly aheadMs: number;
  readonly now: number;
}): SeriesPlan {
  const firstMinute = Math.ceil((plan.now + plan.aheadMs) / MINUTE_MS) * MINUTE_MS;
  const requests: PlannedEvent[] = [];
  const occurrences: Pick<PlannedEvent, 'eventId' | 'dueAt'>[] = [];
  const precise = new Set<string>();
  for (let seq = 0; seq < plan.count; seq += 1) {
    const clientId = `${plan.runId}-series-${seq}`;
    const series = seriesId(eventIdFor(PUBLIC_TENANT_ID, plan.user, clientId, ''));
    const offset = seq === 0 ? PRECISE_OFFSET_MS : Math.floor((seq * MINUTE_MS) / plan.count);
    requests.push({ seq, tenant: PUBLIC_TENANT_ID, clientId, eventId: series, dueAt: firstMinute + offset, publishAt: plan.now });
    for (let minute = 0; minute < plan.minutes; minute += 1) {
      const dueAt = firstMinute + minute * MINUTE_MS + offset;
      const id = occurrenceId(series, dueAt);
      occurrences.push({ eventId: id, dueAt });
      if (seq === 0) precise.add(id);
    }
  }
  return { requests, occurrences, precise, firstMinute, minutes: plan.minutes };
}

/** A series request as clients publish it: every minute, from `start`, `count` times, at `offset` ms into each minute. */
export function seriesRequest(
  event: PlannedEvent,
  user: string,
  target: string,
  payloadBytes: number,
  series: Pick<SeriesPlan, 'firstMinute' | 'minutes'>,
): string {
  return JSON.stringify({
    schedule: 'cron(* * * * ? *)',
    start: toIso(series.firstMinute),
    count: series.minutes,
    offset: event.dueAt - series.firstMinute,
    target,
    user,
    payload: paddedPayload(event.seq, payloadBytes),
    id: event.clientId,
  });
}

async function runSeries(ctx: RunContext, params: ScenarioParams): Promise<ScenarioResult> {
  const minutes = Math.max(1, Math.round(params.seconds / 60));
  const plan = planSeries({
    runId: ctx.runId,
    user: ctx.user,
    count: params.events,
    minutes,
    aheadMs: params.aheadSeconds * 1000,
    now: Date.now(),
  });
  const outcome = await measureDelivery(ctx, plan.requests, {
    expected: plan.occurrences,
    render: (event, target) => seriesRequest(event, ctx.user, target, ctx.measure.payloadBytes, plan),
  });
  const dueOf = new Map(plan.occurrences.map(({ eventId, dueAt }) => [eventId, dueAt]));
  /** The precise series' occurrences' lateness at a time `timeOf` gives, for those it gives one. */
  const preciseBy = (timeOf: (id: string) => number | undefined) =>
    [...plan.precise].flatMap((id) => {
      const at = timeOf(id);
      const dueAt = dueOf.get(id);
      return at === undefined || dueAt === undefined ? [] : [at - dueAt];
    });
  const preciseLateness = preciseBy((id) => outcome.tracker.firstReceived(id));
  // By the emitter's own publish time: what of their lateness is the service's, before SNS's delivery.
  const precisePublishLateness = preciseBy((id) => outcome.tracker.firstPublished(id));
  const preciseMax = preciseLateness.length === plan.precise.size ? Math.max(...preciseLateness) : undefined;
  return deliveryResult(
    `series: ${params.events.toLocaleString('en-US')} series every minute for ${minutes} minutes`,
    {
      series: params.events,
      minutes,
      occurrences: plan.occurrences.length,
      firstOccurrencesAfterStartSeconds: Math.round((plan.firstMinute - outcome.startedAt) / 1000),
      payloadBytes: ctx.measure.payloadBytes,
    },
    outcome,
    [
      ...correctnessTargets(outcome.counts),
      ...latenessTargets(outcome.lateness, TARGETS.latenessMs),
      {
        name: `lateness max of the series at :00.${TARGETS.offsetSeries.offsetMs} (${plan.precise.size} occurrences, all delivered)`,
        target: `≤ ${TARGETS.offsetSeries.maxLatenessMs} ms`,
        actual: preciseMax === undefined ? 'not all delivered' : `${preciseMax} ms`,
        met: preciseMax !== undefined && preciseMax >= 0 && preciseMax <= TARGETS.offsetSeries.maxLatenessMs,
      },
    ],
    'near path',
    TARGETS,
    { preciseSeriesLatenessMs: preciseLateness, preciseSeriesPublishLatenessMs: precisePublishLateness },
  );
}

export const series: Scenario = {
  description: `N recurring series, each every minute (cron(* * * * ? *)) for S/60 minutes from the
first whole minute --ahead seconds away, their offsets spread over the minute, one at
:00.250 (its occurrences checked to within 15 ms); every occurrence counted as an event
[10,000 series, 10 minutes, from 180 s ahead]`,
  run: runSeries,
  defaults: {
    events: 10_000,
    quietEvents: 0,
    seconds: 600,
    aheadSeconds: 180,
    windowSeconds: 600,
    loaderIntervalSeconds: 60,
    backlog: 0,
    path: 'near',
    spikeEvents: 0,
    kills: 0,
    faultRate: 0,
  },
  drainSeconds: 60,
  service: { startedForIt: false },
  targets: TARGETS,
};
