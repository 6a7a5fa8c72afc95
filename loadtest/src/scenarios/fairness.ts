import { LOCAL_ACCOUNT } from '@adhoc-scheduler/infra';
import type { TenantsDocument } from '@adhoc-scheduler/shared';
import { mergePlans, planUniform } from '../plan.js';
import { correctnessTargets, latenessTarget, round, type ScenarioResult, type TargetCheck } from '../report/results.js';
import type { RunContext } from './context.js';
import { measureDelivery } from './delivery.js';
import { timeOfShare } from './ingest.js';
import { deliveryResult } from './outcome.js';
import type { ScenarioParams } from './params.js';

export const NOISY_TENANT = 'noisy';
export const QUIET_TENANT = 'quiet';
/** The quiet tenant's p99 lateness bound while the noisy one spikes (issue 5). */
const QUIET_P99_TARGET_MS = 100;
/** Quotas far above what the run sends: it measures delivery, not the quotas. */
export const LOAD_TEST_QUOTAS = { maxOpenEvents: 10_000_000, maxIngestPerSecond: 1_000_000 } as const;

/** The two tenants the fairness scenario registers in the local service it starts. */
export const FAIRNESS_TENANTS: TenantsDocument = {
  tenants: [NOISY_TENANT, QUIET_TENANT].map((id) => ({ id, accounts: [LOCAL_ACCOUNT], ...LOAD_TEST_QUOTAS })),
};

/**
 * Two tenants, each publishing to its own input topic at the same time: the noisy one N events
 * and the quiet one a few, all due within the same second (the near path). On AWS the delay
 * queue is a fair queue (MessageGroupId = tenant), and the local emitter's poller emulates it:
 * the quiet tenant's events must not wait behind the noisy tenant's spike.
 */
export async function runFairness(ctx: RunContext, params: ScenarioParams): Promise<ScenarioResult> {
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
  const perTenant = (tenant: string, checks: readonly TargetCheck[]): TargetCheck[] => checks.map((check) => ({ ...check, name: `${tenant}: ${check.name}` }));
  const targets: TargetCheck[] = [
    ...perTenant(QUIET_TENANT, [...(quietOutcome ? correctnessTargets(quietOutcome.counts) : []), latenessTarget(quietOutcome?.lateness, 'p99', QUIET_P99_TARGET_MS)]),
    ...perTenant(NOISY_TENANT, noisyOutcome ? correctnessTargets(noisyOutcome.counts) : []),
  ];

  // When the ingest function had taken every event: all were in the delay queue before their second if this is negative.
  const ingested = (outcome.report?.invocations ?? []).filter((invocation) => invocation.fn === 'ingest' && invocation.endedAt >= outcome.startedAt);
  const ingestDoneAt = timeOfShare(ingested, outcome.publish.published, 1);
  const details = {
    dueSecond: new Date(firstDueAt).toISOString(),
    ingestDoneSecondsBeforeDue: ingestDoneAt === undefined ? 'n/a' : round((firstDueAt - ingestDoneAt) / 1000, 2),
  };
  return deliveryResult(
    `fairness: tenant ${NOISY_TENANT} ${params.events.toLocaleString('en-US')} events and tenant ${QUIET_TENANT} ${params.quietEvents} due within the same second`,
    { noisyEvents: params.events, quietEvents: params.quietEvents, seconds: params.seconds, dueSecondsAfterStart: params.aheadSeconds, payloadBytes: ctx.measure.payloadBytes },
    outcome,
    targets,
    'near path',
    details,
  );
}
