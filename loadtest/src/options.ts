import { randomInt } from 'node:crypto';
import { parseArgs } from 'node:util';
import { LOCAL_SERVICE_FILES } from '@adhoc-scheduler/shared/local-service-access';
import { EXIT_CODE } from './exit.js';
import { isScenarioName, SCENARIOS, type ScenarioName } from './scenarios/catalog.js';
import type { MeasureOptions } from './scenarios/context.js';
import type { ScenarioParams } from './scenarios/params.js';
import { LoadTestUsageError } from './usage-error.js';

export { LoadTestUsageError };

const NAMES = Object.keys(SCENARIOS) as ScenarioName[];

/**
 * Scenarios that take no --registered-tenants: those with tenants of their own (they own the
 * emulator's account, which the registered tenants are allowed to target), and those that kill
 * the service (each restart would create every registered tenant's topic again).
 */
const REGISTERING_NOT: readonly ScenarioName[] = NAMES.filter(
  (name) => SCENARIOS[name].service.tenants !== undefined || SCENARIOS[name].service.crashes !== undefined,
);
const MAX_REGISTERED_TENANTS = 100_000;

/** Each scenario's description under its name, as --help lists them. */
function scenarioList(): string {
  const width = Math.max(...NAMES.map((name) => name.length)) + 2;
  return NAMES.map((name) =>
    SCENARIOS[name].description
      .split('\n')
      .map((line, index) => `  ${(index === 0 ? name : '').padEnd(width)}${line}`)
      .join('\n'),
  ).join('\n');
}

function drainDefaults(): string {
  return NAMES.filter((name) => SCENARIOS[name].drainSeconds > 0)
    .map((name) => `${name} ${SCENARIOS[name].drainSeconds}`)
    .join(', ');
}

export const USAGE = `Load test of the scheduler: publishes events in the input format, measures their lateness
at a consumer of its own, counts events missing, duplicated and early, and prices what the
service did per million events. Writes results.json, lateness histograms (PNG, linear and log)
and report.html.

Usage: pnpm --filter @adhoc-scheduler/loadtest loadtest <scenario> [options]

Scenarios (defaults in brackets):
${scenarioList()}

Usage: pnpm --filter @adhoc-scheduler/loadtest loadtest capacity [options]
  the capacity model: no service, no load; how far one stack goes on AWS, and the first limit
  a load profile meets (loadtest capacity --help)

Usage: pnpm --filter @adhoc-scheduler/loadtest loadtest floor [options]
  a spike's floor: the emulator alone carrying N events from a topic to the consumer, nothing
  of the scheduler in between (loadtest floor --help)

Usage: pnpm --filter @adhoc-scheduler/loadtest loadtest compare --base REF <scenario> [--runs N] [--in-memory] [options]
  the scenario on a git ref (base) and on this checkout (head), run alternately, each on a
  service started fresh as users start it; each figure's runs, medians, min-max and head/base
  ratio: what a claim that a change is faster, or changed nothing, rests on (loadtest compare --help)

Usage: pnpm --filter @adhoc-scheduler/loadtest loadtest tenant-add [--registered N] [options]
  one more tenant add on a local service with N tenants registered by tenant import, and the
  time until its first event is accepted and delivered (loadtest tenant-add --help)

Where the scheduler runs:
  --service child         start the local service in a child process (default): the harness's
                          own work never shares the emitter's event loop; usage is counted there
  --service in-process    start it in this process (to measure what sharing costs)
  --service external      a local service already running (pnpm start), found through
                          --outputs FILE [.local/outputs.json], its registry --tenants FILE
                          [.local/tenants.json]; no cost counting; ingest reads its rate from
                          the ingest queue emptying
  --region R --input-topic-arn ARN --emitter-role-arn ARN [--profile P]
                          a stack deployed on AWS; no cost counting (see CloudWatch)
  --data-dir DIR          keep the local service's state on disk (default: in memory; chaos:
                          a directory in the results, removed at the end)
  --emitter-concurrency N delay-queue batches the local emitter holds at once [the runtime's]
  --registered-tenants N  before the load, N tenants more registered on the local service by
                          tenant import, each with its own account and input topic (the run
                          waits until the service takes the last one's first event); the load
                          is still the run's own tenants' [none]       1 to 100,000
                          (not for scenarios with tenants of their own or kills: ${REGISTERING_NOT.join(', ')})

Load and measurement:
  --events N              events measured (ingest: published; fairness: the noisy tenant's;
                          neighbour: the noisy tenant's control requests)
                                                                     1 to 1,000,000
  --quiet-events N        fairness, neighbour: the quiet tenant's events
                                                                     1 to 100,000
  --seconds S             span the events are due over               1 to 3,600
  --ahead S               steady, neighbour (at least 20): publish this long before due;
                          hotspot, fairness: due this long after start
  --window S              near-path window of the local service      2 to 900
  --loader-interval S     loader tick interval of the local service
  --backlog N             backlog: open events written to the table  0 to 2,000,000
  --spike N               chaos: events due in the same second       0 to 100,000
  --kills N               chaos: kill -9 and restarts                0 to 50
  --fault-rate P          chaos: share of calls that fail            0 to 0.5
  --seed N                chaos: seeds kill moments and faults [random; in results.json]
  --path near|far         ingest: events due within the window (delay queue) or beyond (table)
  --payload-bytes B       size of each event's payload [200]
  --labels N              labels each published event carries; the write units per event
                          are checked against the path's bound plus 2 per label [0]
  --publish-concurrency N PublishBatch requests in flight [8]
  --consumers N           concurrent long polls on the consumer queue [8]
  --late-ms MS            what counts as late in the progress bar and counts [100]
  --drain-seconds S       how long after the last due time missing events are awaited
                          [${drainDefaults()}]
  --settle-seconds S      how long the consumer keeps listening for duplicates [3]
  --max-minutes M         the run stops after this, whatever it is doing [30, at most 120]
  --out DIR               where the results go [loadtest/results/<scenario>-<run id>]
  --no-progress           no progress bars
  --fail-on-miss          exit ${EXIT_CODE.targetMissed} when the run misses a target (the summary says MISS)
  -h, --help              this text

Local runs talk to 127.0.0.1 only; a run that finds another endpoint stops.

Exit codes: ${EXIT_CODE.done} the run completed (targets met or missed, as printed; with --fail-on-miss,
every target met), ${EXIT_CODE.failed} the run failed, ${EXIT_CODE.usage} wrong command line, ${EXIT_CODE.targetMissed} a target missed with --fail-on-miss.`;

export type ServiceChoice =
  | { readonly kind: 'child' | 'in-process'; readonly dataDir: string | undefined; readonly emitterConcurrency: number | undefined }
  | { readonly kind: 'external'; readonly outputsFile: string; readonly tenantsFile: string }
  | {
      readonly kind: 'aws';
      readonly region: string;
      readonly inputTopicArn: string;
      readonly emitterRoleArn: string;
      readonly profile: string | undefined;
    };

export interface CliOptions {
  readonly scenario: ScenarioName;
  readonly params: ScenarioParams;
  readonly service: ServiceChoice;
  readonly measure: MeasureOptions;
  /** Tenants registered on the service before the load, besides the scenario's own; undefined: none. */
  readonly registeredTenants: number | undefined;
  readonly maxMinutes: number;
  readonly outDir: string | undefined;
  readonly progress: boolean;
  /** A missed target makes the run exit EXIT_CODE.targetMissed. */
  readonly failOnMiss: boolean;
}

/** The load test's command line is wrong: the run does not start (exit code 2). */

export function integer(values: Record<string, unknown>, name: string, fallback: number, min: number, max: number): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new LoadTestUsageError(`--${name} must be an integer from ${min} to ${max}, got "${String(raw)}"`);
  }
  return value;
}

export function fraction(values: Record<string, unknown>, name: string, fallback: number, max: number): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (raw === '' || !Number.isFinite(value) || value < 0 || value > max)
    throw new LoadTestUsageError(`--${name} must be a number from 0 to ${max}, got "${String(raw)}"`);
  return value;
}

export function text(values: Record<string, unknown>, name: string): string | undefined {
  const raw = values[name];
  return typeof raw === 'string' && raw !== '' ? raw : undefined;
}

/** Parses the command line; undefined when help was asked for. Throws LoadTestUsageError on anything it cannot take. */
export function parseCli(args: readonly string[]): CliOptions | undefined {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      events: { type: 'string' },
      'quiet-events': { type: 'string' },
      seconds: { type: 'string' },
      ahead: { type: 'string' },
      window: { type: 'string' },
      'loader-interval': { type: 'string' },
      backlog: { type: 'string' },
      spike: { type: 'string' },
      kills: { type: 'string' },
      'fault-rate': { type: 'string' },
      seed: { type: 'string' },
      path: { type: 'string' },
      'payload-bytes': { type: 'string' },
      labels: { type: 'string' },
      'publish-concurrency': { type: 'string' },
      consumers: { type: 'string' },
      'late-ms': { type: 'string' },
      'drain-seconds': { type: 'string' },
      'settle-seconds': { type: 'string' },
      'max-minutes': { type: 'string' },
      service: { type: 'string' },
      outputs: { type: 'string' },
      tenants: { type: 'string' },
      'registered-tenants': { type: 'string' },
      'data-dir': { type: 'string' },
      'emitter-concurrency': { type: 'string' },
      region: { type: 'string' },
      'input-topic-arn': { type: 'string' },
      'emitter-role-arn': { type: 'string' },
      profile: { type: 'string' },
      out: { type: 'string' },
      'no-progress': { type: 'boolean', default: false },
      'fail-on-miss': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return undefined;
  const [scenarioArg, ...extra] = positionals;
  if (!scenarioArg) throw new LoadTestUsageError(`name a scenario: ${NAMES.join(', ')}`);
  if (extra.length > 0) throw new LoadTestUsageError(`unexpected arguments: ${extra.join(' ')}`);
  if (!isScenarioName(scenarioArg)) throw new LoadTestUsageError(`unknown scenario "${scenarioArg}"; one of ${NAMES.join(', ')}`);
  const scenario = scenarioArg;
  const { defaults, drainSeconds, service: needs } = SCENARIOS[scenario];

  const path = text(values, 'path') ?? defaults.path;
  if (path !== 'near' && path !== 'far') throw new LoadTestUsageError(`--path must be near or far, got "${path}"`);
  const params: ScenarioParams = {
    events: integer(values, 'events', defaults.events, 1, 1_000_000),
    quietEvents: integer(values, 'quiet-events', defaults.quietEvents, 1, 100_000),
    seconds: integer(values, 'seconds', defaults.seconds, 1, 3600),
    aheadSeconds: integer(values, 'ahead', defaults.aheadSeconds, 0, 900),
    windowSeconds: integer(values, 'window', defaults.windowSeconds, 2, 900),
    loaderIntervalSeconds: integer(values, 'loader-interval', defaults.loaderIntervalSeconds, 1, 900),
    backlog: integer(values, 'backlog', defaults.backlog, 0, 2_000_000),
    path,
    spikeEvents: integer(values, 'spike', defaults.spikeEvents, 0, 100_000),
    kills: integer(values, 'kills', defaults.kills, 0, 50),
    faultRate: fraction(values, 'fault-rate', defaults.faultRate, 0.5),
    seed: integer(values, 'seed', randomInt(2 ** 31), 0, 2 ** 31 - 1),
  };

  const awsParams = ['region', 'input-topic-arn', 'emitter-role-arn', 'profile'].filter((name) => text(values, name) !== undefined);
  let service: ServiceChoice;
  if (awsParams.length > 0) {
    const region = text(values, 'region');
    const inputTopicArn = text(values, 'input-topic-arn');
    const emitterRoleArn = text(values, 'emitter-role-arn');
    if (!region || !inputTopicArn || !emitterRoleArn) {
      throw new LoadTestUsageError('a deployed stack needs --region, --input-topic-arn and --emitter-role-arn (the stack outputs)');
    }
    if (text(values, 'service') !== undefined)
      throw new LoadTestUsageError('--service is for the local service; a deployed stack is named by --region and --input-topic-arn');
    if (needs.startedForIt)
      throw new LoadTestUsageError(`the ${scenario} scenario sets up the local service it starts; it runs locally only`);
    if (needs.tenants)
      throw new LoadTestUsageError(`the ${scenario} scenario publishes as tenants a local service registers for it; it runs locally only`);
    service = { kind: 'aws', region, inputTopicArn, emitterRoleArn, profile: text(values, 'profile') };
  } else {
    const kind = text(values, 'service') ?? 'child';
    if (needs.crashes && kind !== 'child')
      throw new LoadTestUsageError(`the ${scenario} scenario kills the service it starts in a child process; use --service child`);
    if (kind === 'child' || kind === 'in-process') {
      service = {
        kind,
        dataDir: text(values, 'data-dir'),
        emitterConcurrency: values['emitter-concurrency'] === undefined ? undefined : integer(values, 'emitter-concurrency', 0, 1, 4096),
      };
    } else if (kind === 'external') {
      if (needs.startedForIt)
        throw new LoadTestUsageError(`the ${scenario} scenario starts the service with its own settings; use --service child`);
      service = {
        kind,
        outputsFile: text(values, 'outputs') ?? LOCAL_SERVICE_FILES.outputs,
        tenantsFile: text(values, 'tenants') ?? LOCAL_SERVICE_FILES.tenants,
      };
    } else {
      throw new LoadTestUsageError(`--service must be child, in-process or external, got "${kind}"`);
    }
  }

  const registeredTenants =
    values['registered-tenants'] === undefined ? undefined : integer(values, 'registered-tenants', 0, 1, MAX_REGISTERED_TENANTS);
  if (registeredTenants !== undefined) {
    if (service.kind === 'aws')
      throw new LoadTestUsageError(
        '--registered-tenants registers tenants on a local service (tenant import); a deployed stack has its own registry',
      );
    if (REGISTERING_NOT.includes(scenario))
      throw new LoadTestUsageError(
        `--registered-tenants is not for the ${scenario} scenario: ${SCENARIOS[scenario].service.crashes ? "it kills and restarts the service, which creates every registered tenant's topic again at each start" : "its own tenants own the emulator's account, which the registered tenants may target"}`,
      );
  }

  return {
    scenario,
    params,
    service,
    registeredTenants,
    measure: {
      consumers: integer(values, 'consumers', 8, 1, 64),
      lateMs: integer(values, 'late-ms', 100, 0, 3_600_000),
      drainSeconds: integer(values, 'drain-seconds', drainSeconds, 0, 3600),
      settleSeconds: integer(values, 'settle-seconds', 3, 0, 600),
      publishConcurrency: integer(values, 'publish-concurrency', 8, 1, 64),
      payloadBytes: integer(values, 'payload-bytes', 200, 20, 200_000),
      labels: integer(values, 'labels', 0, 0, 10),
    },
    maxMinutes: integer(values, 'max-minutes', 30, 1, 120),
    outDir: text(values, 'out'),
    progress: !values['no-progress'],
    failOnMiss: values['fail-on-miss'],
  };
}
