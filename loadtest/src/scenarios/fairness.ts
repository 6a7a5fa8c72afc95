import { LOCAL_ACCOUNT } from '@adhoc-scheduler/infra';
import { mergePlans, planUniform } from '../plan.js';
import { round, type ScenarioResult } from '../report/results.js';
import { correctnessTargets, latenessTargets, type ScenarioTargets, type TargetCheck } from '../report/targets.js';
import type { RunContext } from './context.js';
import { measureDelivery } from './delivery.js';
import { timeOfShare } from './ingest.js';
import { COST_BOUND_PER_MILLION, deliveryResult, WRITE_UNITS_PER_EVENT_BOUND } from './outcome.js';
import type { ScenarioParams } from './params.js';
import { LOAD_TEST_QUOTAS, type Scenario } from './scenario.js';

const NOISY_TENANT = 'noisy';
const QUIET_TENANT = 'quiet';

const TARGETS = {
  delivery: { duplicatesAllowed: false, of: 'each tenant' },
  // The quiet tenant's lateness while the noisy one spikes.
  latenessMs: { p99: 100 },
  latenessOf: `tenant ${QUIET_TENANT}`,
  costPerMillion: COST_BOUND_PER_MILLION,
  writeUnitsPerEvent: WRITE_UNITS_PER_EVENT_BOUND.nearPath,
} satisfies ScenarioTargets;

/**
 * Two tenants, each publishing to its own input topic at the same time: the noisy one N events
 * and the quiet one a few, all due within the same second (the near path). On AWS the delay
 * queue is a fair queue (MessageGroupId = tenant), and the local emitter's poller emulates it:
 * the quiet tenant's events must not wait behind the noisy tenant's spike.
 */
async function runFairness(ctx: RunContext, params: ScenarioParams): Promise<ScenarioResult> {
  const local = ctx.service.local;
  if (!local) throw new Error('the fairness scenario registers its tenants in the local service it starts');
  const now = Date.now();
  // A whole second, as a client naming "12:00:00" would.
  const firstDueAt = Math.ceil((now + params.aheadSeconds * 1000) / 1000) * 1000;
  const common = { user: ctx.user, firstDueAt, spreadMs: params.seconds * 1000, publishAheadMs: undefined, publishFrom: now };
  const noisy = planUniform({ ...common, runId: `${ctx.runId}-${NOISY_TENANT}`, tenant: NOISY_TENANT, count: params.events });
  const quiet = planUniform({ ...common, runId: `${ctx.runId}-${QUIET_TENANT}`, tenant: QUIET_TENANT, count: params.quietEvents });
  const outcome = await measureDelivery(ctx, mergePlans(noisy, quiet), { tenantInputTopics: local.outputs.tenantInputTopicArns });

  const quietOutcome = outcome.byTenant?.[QUIET_TENANT];
  const noisyOutcome = outcome.byTenant?.[NOISY_TENANT];
  const perTenant = (tenant: string, checks: readonly TargetCheck[]): TargetCheck[] =>
    checks.map((check) => ({ ...check, name: `${tenant}: ${check.name}` }));
  const targets: TargetCheck[] = [
    ...perTenant(QUIET_TENANT, [
      ...(quietOutcome ? correctnessTargets(quietOutcome.counts) : []),
      ...latenessTargets(quietOutcome?.lateness, TARGETS.latenessMs),
    ]),
    ...perTenant(NOISY_TENANT, noisyOutcome ? correctnessTargets(noisyOutcome.counts) : []),
  ];

  // When the ingest function had taken every event: all were in the delay queue before their second if this is negative.
  const ingested = (outcome.report?.invocations ?? []).filter(
    (invocation) => invocation.fn === 'ingest' && invocation.endedAt >= outcome.startedAt,
  );
  const ingestDoneAt = timeOfShare(ingested, outcome.publish.published, 1);
  const details = {
    dueSecond: new Date(firstDueAt).toISOString(),
    ingestDoneSecondsBeforeDue: ingestDoneAt === undefined ? 'n/a' : round((firstDueAt - ingestDoneAt) / 1000, 2),
  };
  return deliveryResult(
    `fairness: tenant ${NOISY_TENANT} ${params.events.toLocaleString('en-US')} events and tenant ${QUIET_TENANT} ${params.quietEvents} due within the same second`,
    {
      noisyEvents: params.events,
      quietEvents: params.quietEvents,
      seconds: params.seconds,
      dueSecondsAfterStart: params.aheadSeconds,
      payloadBytes: ctx.measure.payloadBytes,
    },
    outcome,
    targets,
    'near path',
    TARGETS,
    details,
  );
}

export const fairness: Scenario = {
  description: `two tenants, each on its own input topic: "noisy" publishes N events and "quiet"
--quiet-events, all due within the same second, published at once; lateness and
counts per tenant [10,000 and 10, due 60 s later]`,
  run: runFairness,
  // Due a minute out: ingest takes every event into the delay queue before its second (about 20 s for 10,000 here).
  defaults: {
    events: 10_000,
    quietEvents: 10,
    seconds: 1,
    aheadSeconds: 60,
    windowSeconds: 600,
    loaderIntervalSeconds: 60,
    backlog: 0,
    path: 'near',
    spikeEvents: 0,
    kills: 0,
    faultRate: 0,
  },
  drainSeconds: 120,
  // It registers its two tenants in the service.
  service: {
    startedForIt: true,
    tenants: [NOISY_TENANT, QUIET_TENANT].map((id) => ({ id, accounts: [LOCAL_ACCOUNT], ...LOAD_TEST_QUOTAS })),
  },
  targets: TARGETS,
};
