import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TenantsDocument } from '@adhoc-scheduler/shared';
import type { CliOptions } from './options.js';
import { Progress } from './progress.js';
import { histogramSpec, renderSvg, svgToPng } from './report/charts.js';
import { renderHtml } from './report/html.js';
import { machineInfo, type RunResult, type ScenarioName, type ScenarioResult } from './report/results.js';
import { runBacklog } from './scenarios/backlog.js';
import { chaosIdPattern, runChaos } from './scenarios/chaos.js';
import type { RunContext } from './scenarios/context.js';
import { FAIRNESS_TENANTS, LOAD_TEST_QUOTAS, runFairness } from './scenarios/fairness.js';
import { runFar } from './scenarios/far.js';
import { runHotspot } from './scenarios/hotspot.js';
import { runIngest } from './scenarios/ingest.js';
import type { ScenarioParams } from './scenarios/params.js';
import { runSteady } from './scenarios/steady.js';
import { startChildService } from './service/child.js';
import { harnessClients, type SchedulerService } from './service/connection.js';
import { startCrashableService, type CrashableService } from './service/crashable.js';
import { connectToDeployedStack, connectToRunningService } from './service/external.js';
import { startInProcessService } from './service/in-process.js';

const LOADTEST_DIR = fileURLToPath(new URL('..', import.meta.url));
const REPO_ROOT = join(LOADTEST_DIR, '..');

const SCENARIO_RUNNERS: Readonly<Record<ScenarioName, (ctx: RunContext, params: ScenarioParams) => Promise<ScenarioResult>>> = {
  steady: runSteady,
  hotspot: runHotspot,
  far: runFar,
  ingest: runIngest,
  backlog: runBacklog,
  fairness: runFairness,
  chaos: runChaos,
};

/** The local service's settings for a scenario: the windows it needs, and its log level. */
function serviceEnv(options: CliOptions): Record<string, string> {
  return {
    SCHEDULER_NEAR_PATH_WINDOW_SECONDS: String(options.params.windowSeconds),
    SCHEDULER_LOADER_INTERVAL_SECONDS: String(options.params.loaderIntervalSeconds),
    LOG_LEVEL: 'info',
    // A chaos run's table is new: a first loader tick looking back an hour makes 480 queries, and one fault among them fails the tick.
    ...(options.scenario === 'chaos' ? { SCHEDULER_LOADER_INITIAL_CATCH_UP_SECONDS: String(options.params.loaderIntervalSeconds) } : {}),
  };
}

/** The local service's tenants: the public one (the shared input topic) with quotas the run never reaches, and the scenario's own. */
function serviceTenants(options: CliOptions): TenantsDocument {
  return { public: LOAD_TEST_QUOTAS, ...(options.scenario === 'fairness' ? FAIRNESS_TENANTS : {}) };
}

/** Where a chaos run keeps the service's state when not told: in its results, removed at the end. */
const CHAOS_DATA_DIR = 'service-data';

async function startService(options: CliOptions, outDir: string, runId: string): Promise<SchedulerService | CrashableService> {
  const choice = options.service;
  const logFile = join(outDir, 'service.log');
  switch (choice.kind) {
    case 'child':
    case 'in-process': {
      const local = { env: serviceEnv(options), emitterConcurrency: choice.emitterConcurrency, dataDir: choice.dataDir, tenants: serviceTenants(options), logFile };
      // parseCli lets the chaos scenario run in a child process only: it kills that process.
      if (options.scenario === 'chaos') {
        return startCrashableService({
          ...local,
          dataDir: choice.dataDir ?? join(outDir, CHAOS_DATA_DIR),
          // Not the run id itself: the run's own topics (`<runId>-out`) would then be named as the scheduler's, which it never publishes to.
          namePrefix: `${runId}-service`,
          faults: { probability: options.params.faultRate, seed: options.params.seed, logFile: join(outDir, 'faults.jsonl'), idPattern: chaosIdPattern(runId) },
        });
      }
      return choice.kind === 'child' ? startChildService(local) : startInProcessService(local);
    }
    case 'external':
      return connectToRunningService(resolve(REPO_ROOT, choice.outputsFile));
    case 'aws':
      return connectToDeployedStack(choice);
  }
}

/** The commit the run measured, and whether the tree held changes beyond it; undefined outside a git checkout. */
function sourceVersion(): { readonly commit: string; readonly uncommittedChanges: boolean } | undefined {
  try {
    const git = (...args: string[]): string => execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return { commit: git('rev-parse', 'HEAD'), uncommittedChanges: git('status', '--porcelain', '--untracked-files=no') !== '' };
  } catch {
    return undefined;
  }
}

function newRunId(): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `lt-${stamp}-${randomBytes(2).toString('hex')}`;
}

export interface RunOutput {
  readonly result: RunResult;
  readonly outDir: string;
}

/** Runs one scenario end to end and writes its results; the service is stopped whatever happens. */
export async function runScenario(options: CliOptions, command: string): Promise<RunOutput> {
  const runId = newRunId();
  const outDir = resolve(options.outDir ?? join(LOADTEST_DIR, 'results', `${options.scenario}-${runId}`));
  await mkdir(outDir, { recursive: true });
  const progress = new Progress(options.progress);
  const startedAt = new Date();
  const machine = machineInfo();
  const source = sourceVersion();
  const deadline = startedAt.getTime() + options.maxMinutes * 60_000;

  progress.note(`${options.scenario}: run ${runId}, results in ${outDir}`);
  const service = await startService(options, outDir, runId);
  const clients = harnessClients(service.access);
  let scenario: ScenarioResult;
  try {
    const crashable = 'killAndRestart' in service ? service : undefined;
    const ctx: RunContext = { runId, user: `loadtest-${runId}`, service, clients, progress, measure: options.measure, deadline, crashable };
    scenario = await SCENARIO_RUNNERS[options.scenario](ctx, options.params);
  } finally {
    progress.stop();
    clients.destroy();
    await service.stop();
    if (options.scenario === 'chaos' && options.service.kind === 'child' && options.service.dataDir === undefined) {
      await rm(join(outDir, CHAOS_DATA_DIR), { recursive: true, force: true });
    }
  }

  const { distribution, distributionByTenant, ...rest } = scenario;
  const files: Record<string, string> = { json: 'results.json', html: 'report.html' };
  if (service.mode === 'child' || service.mode === 'in-process') files.serviceLog = 'service.log';
  if (options.scenario === 'chaos') files.faults = 'faults.jsonl';
  const svgs: { linear?: string; log?: string; byTenant: Record<string, string> } = { byTenant: {} };
  if (scenario.delivery?.latenessMs && distribution.length > 0) {
    for (const scale of ['linear', 'log'] as const) {
      const svg = await renderSvg(histogramSpec({ title: scenario.title, distribution, lateness: scenario.delivery.latenessMs }, scale));
      svgs[scale] = svg;
      const file = `lateness-${scale}.png`;
      await writeFile(join(outDir, file), svgToPng(svg));
      files[scale === 'linear' ? 'pngLinear' : 'pngLog'] = file;
    }
  }
  // One plot per tenant: a spike would hide a small tenant in the combined one. Log counts only where there are many.
  for (const [tenant, tenantDistribution] of Object.entries(distributionByTenant ?? {})) {
    const lateness = scenario.delivery?.byTenant?.[tenant]?.latenessMs;
    if (!lateness || tenantDistribution.length === 0) continue;
    const scale = lateness.count >= 100 ? 'log' : 'linear';
    const svg = await renderSvg(histogramSpec({ title: `tenant ${tenant}: ${lateness.count.toLocaleString('en-US')} events`, distribution: tenantDistribution, lateness }, scale));
    svgs.byTenant[tenant] = svg;
    const file = `lateness-${tenant}-${scale}.png`;
    await writeFile(join(outDir, file), svgToPng(svg));
    files[`png-${tenant}`] = file;
  }
  const config = service.local?.config;
  const result: RunResult = {
    scenario: options.scenario,
    runId,
    command,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    machine,
    source,
    service: {
      mode: service.mode,
      settings: {
        nearPathWindowSeconds: config?.nearPathWindowSeconds,
        loaderIntervalSeconds: config?.loaderIntervalSeconds,
        loaderLookaheadSeconds: config?.loaderLookaheadSeconds,
        emitterLeadMs: config?.emitterLeadMs,
        shardCount: config?.shardCount,
        emitterConcurrency: options.service.kind === 'child' || options.service.kind === 'in-process' ? (options.service.emitterConcurrency ?? 'runtime default') : undefined,
        stateOnDisk: options.service.kind === 'child' || options.service.kind === 'in-process' ? options.service.dataDir !== undefined || options.scenario === 'chaos' : undefined,
      },
    },
    ...rest,
    files,
  };
  await writeFile(join(outDir, 'results.json'), `${JSON.stringify(result, null, 2)}\n`);
  await writeFile(join(outDir, 'report.html'), renderHtml(result, svgs));
  return { result, outDir };
}
