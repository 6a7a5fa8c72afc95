import { DEFAULT_QUOTAS, DEFAULTS } from '@adhoc-scheduler/shared';
import { DEFAULT_PUBLIC_INGEST_MAX_CONCURRENCY, EVENT_SOURCES } from '@adhoc-scheduler/infra';
import { TENANT_INDEX_WRITE_UNITS, type StackSettings } from './model.js';

/**
 * The stack's settings as a deployment has them: the config module's defaults, then the CDK
 * app's context (infra/cdk.json, where an operator keeps `-c` options), then what the command
 * line overrides. The lookahead follows the window and the interval as loadConfig derives it.
 */

/** Context keys the model reads: the scheduler's settings by their config names, and the stack's concurrency props. */
const CONTEXT_KEYS = [
  'shardCount',
  'nearPathWindowSeconds',
  'loaderIntervalSeconds',
  'loaderLookaheadSeconds',
  'loaderTickBudgetSeconds',
  'loadingChunkSize',
  'emitterMaxConcurrency',
  'emitterReservedConcurrency',
  'publicIngestMaxConcurrency',
] as const;

export type ContextKey = (typeof CONTEXT_KEYS)[number];
export type SettingOverrides = Partial<Record<ContextKey, number>> &
  Partial<Pick<StackSettings, 'index' | 'tableWarmWritesPerSecond' | 'writeUnits' | 'tenantMaxIngestPerSecond' | 'tenantMaxOpenEvents'>>;

/** The model's settings from the CDK context (an object as in cdk.json) and overrides, over the defaults. */
export function stackSettings(context: Readonly<Record<string, unknown>>, overrides: SettingOverrides = {}): StackSettings {
  const fromContext: Partial<Record<ContextKey, number>> = {};
  for (const key of CONTEXT_KEYS) {
    const value = Number(context[key]);
    if (context[key] !== undefined && Number.isInteger(value)) fromContext[key] = value;
  }
  const value = (key: ContextKey): number | undefined => overrides[key] ?? fromContext[key];
  const nearPathWindowSeconds = value('nearPathWindowSeconds') ?? DEFAULTS.nearPathWindowSeconds;
  const loaderIntervalSeconds = value('loaderIntervalSeconds') ?? DEFAULTS.loaderIntervalSeconds;
  return {
    shardCount: value('shardCount') ?? DEFAULTS.shardCount,
    nearPathWindowSeconds,
    loaderIntervalSeconds,
    loaderLookaheadSeconds: value('loaderLookaheadSeconds') ?? nearPathWindowSeconds - loaderIntervalSeconds,
    loaderTickBudgetSeconds: value('loaderTickBudgetSeconds') ?? DEFAULTS.loaderTickBudgetSeconds,
    loadingChunkSize: value('loadingChunkSize') ?? DEFAULTS.loadingChunkSize,
    emitterMaxConcurrency: value('emitterMaxConcurrency'),
    emitterReservedConcurrency: value('emitterReservedConcurrency'),
    publicIngestMaxConcurrency: value('publicIngestMaxConcurrency') ?? DEFAULT_PUBLIC_INGEST_MAX_CONCURRENCY,
    tableWarmWritesPerSecond: overrides.tableWarmWritesPerSecond,
    index: overrides.index ?? 'tenant',
    writeUnits: overrides.writeUnits ?? TENANT_INDEX_WRITE_UNITS,
    tenantMaxIngestPerSecond: overrides.tenantMaxIngestPerSecond ?? DEFAULT_QUOTAS.maxIngestPerSecond,
    tenantMaxOpenEvents: overrides.tenantMaxOpenEvents ?? DEFAULT_QUOTAS.maxOpenEvents,
    ingestBatch: EVENT_SOURCES.ingest.batchSize,
    emitterBatch: EVENT_SOURCES.emitter.batchSize,
    loadingMessagesPerBatch: EVENT_SOURCES.loading.batchSize,
  };
}
