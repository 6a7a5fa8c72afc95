import { parseArgs } from 'node:util';
import { SETTING_RANGES, SNS_MAX_MESSAGE_BYTES } from '@adhoc-scheduler/shared';
import { LAMBDA_MEMORY_MB } from '../cost/estimate.js';
import { fraction, integer, LoadTestUsageError, text } from '../options.js';
import { costPerMillion, monthlyCost } from './cost.js';
import { LIMITS_NAMES, limitsFor, type Limits, type LimitsName } from './limits.js';
import { capacity, TENANT_INDEX_WRITE_UNITS, type CapacityReport, type LoadProfile, type StackSettings } from './model.js';
import { stackSettings, type SettingOverrides } from './settings.js';

export const CAPACITY_USAGE = `Capacity model: how far one stack goes. For a load profile, prints each stage of an event's
path with its demand against the limit it meets (AWS's quotas, or this machine's emulators as
measured), the first stage to bind and the lateness that follows, and the cost per million
events. Runs nothing: arithmetic on the profile, the stack's settings and the published quotas
(docs/operators/capacity.md).

Usage: pnpm --filter @adhoc-scheduler/loadtest loadtest capacity [options]

The load (defaults in brackets):
  --rate N                events coming due each second, steadily, and created as fast [100]
  --spike N               events due together on top of the steady load, one tenant's [0]
  --spike-width S         the seconds the spike's events are due within [1]
  --spike-publish-seconds S  over how long before they are due the spike's events are published [3600]
  --far-share F           share of events stored for the loader (due beyond the window) [0]
  --payload-bytes B       each event's payload [200]
  --tenants N             registered tenants; 0: every event is the public tenant's [0]
  --configured-tenants N  of them, those in the CDK app's configuration, whose topics the stack
                          makes; the others are added at runtime and add nothing to it [0]
  --active-tenants N      tenants with stored events due in a loader tick, the public one included:
                          whose shards a tick reads [every tenant, when --far-share is above 0]
  --labels N              labels per event [0]
  --open-events N         events stored and waiting at once [0]

The stack (the config's defaults, then the CDK context in --context, then these):
  --context FILE          a cdk.json whose "context" holds the deployment's options [infra/cdk.json]
  --shards N              SCHEDULER_SHARD_COUNT (-c shardCount)
  --window S              near-path window (-c nearPathWindowSeconds)
  --loader-interval S     loader interval (-c loaderIntervalSeconds)
  --lookahead S           loader lookahead (-c loaderLookaheadSeconds) [window - interval]
  --tick-budget S         loader tick budget (-c loaderTickBudgetSeconds)
  --chunk N               ids per loading message (-c loadingChunkSize)
  --emitter-max-concurrency N       -c emitterMaxConcurrency [none: the event source's 1,000]
  --emitter-reserved-concurrency N  -c emitterReservedConcurrency [none]
  --public-ingest-max-concurrency N -c publicIngestMaxConcurrency
  --table-warm-writes N   the table's warm write throughput, units/s [none: a new table's]
  --index tenant|bucket   the loader's index: per tenant (the new records') or per due minute [tenant]
  --near-write-units N, --far-write-units N, --label-write-units N
                          DynamoDB write units per event by path, and per label [2, 4, 2]
  --tenant-max-ingest N, --tenant-max-open N
                          the busiest tenant's quotas [the registry's defaults]

The limits:
  --limits aws|local-memory|local-disk  AWS's quotas, or the local service as measured [aws]
  --account-concurrency N   the account's Lambda concurrency quota, when raised [1,000]
  --sns-publish-rate N      the region's SNS Publish quota, messages/s [30,000, us-east-1]
  --json                  the report as JSON
  -h, --help              this text`;

export interface CapacityOptions {
  readonly profile: LoadProfile;
  readonly contextFile: string;
  readonly overrides: SettingOverrides;
  readonly limits: LimitsName;
  readonly accountConcurrency: number | undefined;
  readonly snsPublishRate: number | undefined;
  readonly json: boolean;
}

const MAX = 1e12;

/** Parses `loadtest capacity`'s options; undefined when help was asked for. Throws LoadTestUsageError. */
export function parseCapacityCli(args: readonly string[]): CapacityOptions | undefined {
  const names = [
    'rate',
    'spike',
    'spike-width',
    'spike-publish-seconds',
    'far-share',
    'payload-bytes',
    'tenants',
    'configured-tenants',
    'active-tenants',
    'labels',
    'open-events',
    'context',
    'shards',
    'window',
    'loader-interval',
    'lookahead',
    'tick-budget',
    'chunk',
    'emitter-max-concurrency',
    'emitter-reserved-concurrency',
    'public-ingest-max-concurrency',
    'table-warm-writes',
    'index',
    'near-write-units',
    'far-write-units',
    'label-write-units',
    'tenant-max-ingest',
    'tenant-max-open',
    'limits',
    'account-concurrency',
    'sns-publish-rate',
  ];
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      ...Object.fromEntries(names.map((name) => [name, { type: 'string' as const }])),
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return undefined;
  if (positionals.length > 0) throw new LoadTestUsageError(`unexpected arguments: ${positionals.join(' ')}`);
  const given: Readonly<Record<string, unknown>> = values;
  const optional = (name: string, min: number, max = MAX): number | undefined =>
    given[name] === undefined ? undefined : integer(values, name, 0, min, max);
  /** A setting the service also reads: the range it accepts. */
  const setting = (name: string, key: keyof typeof SETTING_RANGES): number | undefined =>
    optional(name, SETTING_RANGES[key].min, SETTING_RANGES[key].max);

  const limits = text(values, 'limits') ?? 'aws';
  if (!(LIMITS_NAMES as readonly string[]).includes(limits))
    throw new LoadTestUsageError(`--limits must be one of ${LIMITS_NAMES.join(', ')}, got "${limits}"`);
  const index = text(values, 'index') ?? 'tenant';
  if (index !== 'tenant' && index !== 'bucket') throw new LoadTestUsageError(`--index must be tenant or bucket, got "${index}"`);
  const writeUnits = {
    nearPath: integer(values, 'near-write-units', TENANT_INDEX_WRITE_UNITS.nearPath, 1, 100),
    farPath: integer(values, 'far-write-units', TENANT_INDEX_WRITE_UNITS.farPath, 2, 100),
    perLabel: integer(values, 'label-write-units', TENANT_INDEX_WRITE_UNITS.perLabel, 0, 100),
  };
  const overrides: SettingOverrides = {
    shardCount: setting('shards', 'shardCount'),
    nearPathWindowSeconds: setting('window', 'nearPathWindowSeconds'),
    loaderIntervalSeconds: setting('loader-interval', 'loaderIntervalSeconds'),
    loaderLookaheadSeconds: setting('lookahead', 'loaderLookaheadSeconds'),
    loaderTickBudgetSeconds: setting('tick-budget', 'loaderTickBudgetSeconds'),
    loadingChunkSize: setting('chunk', 'loadingChunkSize'),
    emitterMaxConcurrency: optional('emitter-max-concurrency', 2, 1000),
    emitterReservedConcurrency: optional('emitter-reserved-concurrency', 1, 1_000_000),
    publicIngestMaxConcurrency: optional('public-ingest-max-concurrency', 2, 1000),
    tableWarmWritesPerSecond: optional('table-warm-writes', 1),
    tenantMaxIngestPerSecond: optional('tenant-max-ingest', 1),
    tenantMaxOpenEvents: optional('tenant-max-open', 1),
    index,
    writeUnits,
  };
  return {
    profile: {
      ratePerSecond: integer(values, 'rate', 100, 0, MAX),
      spikeEvents: integer(values, 'spike', 0, 0, MAX),
      spikeWidthSeconds: integer(values, 'spike-width', 1, 1, 86_400),
      spikePublishSeconds: integer(values, 'spike-publish-seconds', 3600, 1, 365 * 86_400),
      farShare: fraction(values, 'far-share', 0, 1),
      payloadBytes: integer(values, 'payload-bytes', 200, 1, SNS_MAX_MESSAGE_BYTES),
      tenants: integer(values, 'tenants', 0, 0, 1_000_000),
      configuredTenants: integer(values, 'configured-tenants', 0, 0, 1_000_000),
      activeTenants: optional('active-tenants', 0, 1_000_001),
      labelsPerEvent: integer(values, 'labels', 0, 0, 10),
      openEvents: integer(values, 'open-events', 0, 0, MAX),
    },
    contextFile: text(values, 'context') ?? 'infra/cdk.json',
    overrides,
    limits: limits as LimitsName,
    accountConcurrency: optional('account-concurrency', 1),
    snsPublishRate: optional('sns-publish-rate', 1),
    json: values.json,
  };
}

/** The limits named, with the account's raised quotas where given. */
export function capacityLimits(
  options: Pick<CapacityOptions, 'limits' | 'accountConcurrency' | 'snsPublishRate'>,
  localLoadingBatches: number,
): Limits {
  const limits = limitsFor(options.limits, localLoadingBatches, LAMBDA_MEMORY_MB.loading);
  const raised = (value: number | undefined, base: Limits['snsPublishPerSecond']) =>
    value === undefined ? base : { value, source: `${base.source}; raised to ${value} on the command line` };
  return {
    ...limits,
    lambdaAccountConcurrency: raised(options.accountConcurrency, limits.lambdaAccountConcurrency),
    snsPublishPerSecond: raised(options.snsPublishRate, limits.snsPublishPerSecond),
  };
}

const number = (value: number): string =>
  !Number.isFinite(value) ? '∞' : value >= 100 ? Math.round(value).toLocaleString('en-US') : String(Number(value.toPrecision(3)));
const seconds = (value: number): string => (Number.isFinite(value) ? `${number(value)} s` : 'more than a day');

/** The report as the terminal shows it. */
export function formatCapacity(
  profile: LoadProfile,
  settings: StackSettings,
  limits: Limits,
  report: CapacityReport,
  contextFile: string,
): string {
  const lines = [
    `Capacity model, limits: ${limits.name}`,
    `Load: ${number(profile.ratePerSecond)} events/s` +
      (profile.spikeEvents > 0
        ? `, a spike of ${number(profile.spikeEvents)} due within ${profile.spikeWidthSeconds} s (published over ${number(profile.spikePublishSeconds)} s)`
        : '') +
      `, far share ${profile.farShare}, payload ${number(profile.payloadBytes)} B, ${number(profile.tenants)} tenants (${number(profile.configuredTenants ?? 0)} in the CDK configuration), ${profile.labelsPerEvent} labels, ${number(profile.openEvents)} open events`,
    `Stack (defaults, ${contextFile} context, command line): shardCount ${settings.shardCount}, window ${settings.nearPathWindowSeconds} s, ` +
      `loader every ${settings.loaderIntervalSeconds} s looking ${settings.loaderLookaheadSeconds} s ahead (budget ${settings.loaderTickBudgetSeconds} s), ` +
      `emitterMaxConcurrency ${settings.emitterMaxConcurrency ?? 'none'}, emitterReservedConcurrency ${settings.emitterReservedConcurrency ?? 'none'}, ` +
      `publicIngestMaxConcurrency ${settings.publicIngestMaxConcurrency}, table warm writes ${settings.tableWarmWritesPerSecond ?? 'none'}, ` +
      `${settings.index} index, write units near ${settings.writeUnits.nearPath} / far ${settings.writeUnits.farPath} / label ${settings.writeUnits.perLabel}`,
    '',
  ];
  const width = Math.max(...report.stages.map((stage) => stage.name.length));
  lines.push(`${'stage'.padEnd(width)}  ${'demand'.padStart(12)}  ${'limit'.padStart(12)}  ${'load'.padStart(7)}  unit`);
  for (const stage of report.stages) {
    const mark = stage.load > 1 ? '  BINDS' : '';
    lines.push(
      `${stage.name.padEnd(width)}  ${number(stage.demand).padStart(12)}  ${number(stage.limit).padStart(12)}  ${`${Math.round(stage.load * 100)}%`.padStart(7)}  ${stage.unit}${mark}`,
    );
  }
  const first = report.first;
  lines.push(
    '',
    `${first.load > 1 ? 'Binds first' : 'Closest to binding'}: ${first.name}, ${number(first.demand)} ${first.unit} against ${number(first.limit)} (${Math.round(first.load * 100)}%).`,
    `  When bound: ${first.whenBound}.`,
    `  Lifted by: ${first.lift}.  Watched by: ${first.alarm}.`,
    `  Source: ${first.source}`,
  );
  for (const stage of report.stages.filter((candidate) => candidate.load > 1 && candidate !== first)) {
    lines.push(`Also binds: ${stage.name} (${Math.round(stage.load * 100)}%): ${stage.whenBound}; lifted by ${stage.lift}.`);
  }
  if (report.spike) {
    lines.push(
      `Spike: the last event out ${seconds(report.spike.seconds)} after the first was due; lateness p99 ${seconds(report.spike.p99LatenessSeconds)}, max ${seconds(report.spike.maxLatenessSeconds)} ` +
        `(the emitter publishes up to ${number(report.emitPerSecond)} events/s` +
        (Number.isFinite(report.emitterConcurrencyAtRest)
          ? `; ${number(report.emitterConcurrencyAtRest)} invocations in place when it comes).`
          : ').'),
    );
  }
  if (report.move.events > 0) {
    lines.push(
      `Far path: one tick's ${number(report.move.events)} events moved in ${seconds(report.move.seconds)}, against ${number(report.move.slackSeconds)} s between the tick and their first due time` +
        (report.move.latenessSeconds > 0 ? `: the first are late by up to ${seconds(report.move.latenessSeconds)}.` : ': on time.'),
    );
  }
  if (limits.name === 'aws') {
    const cost = costPerMillion(profile, settings, limits);
    const month = monthlyCost(profile, settings, limits);
    lines.push(
      '',
      `Cost: $${cost.perMillionEvents.toFixed(2)} per million events (us-east-1 list prices of ${cost.pricesAsOf}; EventBridge Scheduler with the SNS publish: $${cost.eventBridgeSchedulerPerMillion.toFixed(2)})`,
      ...cost.lines.filter((line) => line.dollars > 0).map((line) => `  ${line.item.padEnd(46)} $${line.perMillionEvents.toFixed(3)}`),
      `A month at ${number(profile.ratePerSecond)} events/s: ${number(month.events)} events $${number(month.events$)}, the loader's queries $${number(month.loaderQueries$)}, ` +
        `storage of ${number(profile.openEvents)} open events $${number(month.storage$)}: $${number(month.total$)}`,
    );
  }
  return lines.join('\n');
}

/** Runs the model for `loadtest capacity`: the output, or the usage text. */
export function runCapacity(options: CapacityOptions, context: Readonly<Record<string, unknown>>, localLoadingBatches: number): string {
  const settings = stackSettings(context, options.overrides);
  const limits = capacityLimits(options, localLoadingBatches);
  const report = capacity(options.profile, settings, limits);
  if (options.json) {
    const cost =
      limits.name === 'aws'
        ? { perMillion: costPerMillion(options.profile, settings, limits), month: monthlyCost(options.profile, settings, limits) }
        : undefined;
    return JSON.stringify(
      { profile: options.profile, settings, limits: limits.name, report, cost },
      (_, value) => (value === Number.POSITIVE_INFINITY ? 'Infinity' : value),
      2,
    );
  }
  return formatCapacity(options.profile, settings, limits, report, options.contextFile);
}
